"""`tinyviz merge` / `tinyviz A B --merge`: several processes' traces as one run on one clock (profiler/merge.py)."""
from __future__ import annotations
import subprocess, sys, time
from pathlib import Path
import pytest
from profiler.events import Kernel, Marker, Rewrite, Run, Span, UOpDef
from profiler.load import load
from server_kit import ROOT, Server, env

SCRIPT = """
import sys, time
import numpy as np
from tinygrad import Tensor
from tinygrad.helpers import profile_marker
at = float(sys.argv[1])
a = Tensor(np.ones((16, 16), np.float32))
(a @ a).realize()
while time.time() < at: pass  # both processes reach the marker at about the same wall-clock moment
profile_marker("together")
print(time.time_ns())  # when it was, by the wall clock: where the merged trace must place it
(a + int(sys.argv[2])).sum().realize()
"""

@pytest.fixture(scope="module")
def two(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("merge")
  (tmp / "proc.py").write_text(SCRIPT)
  at = time.time() + 8  # after both have started and compiled
  procs, outs, walls = [], [], []
  for i in range(2):
    out = tmp / f"p{i}.tinyviz.jsonl"
    outs.append(out)
    procs.append(subprocess.Popen([sys.executable, str(tmp / "proc.py"), str(at), str(i)], cwd=ROOT, env=env(VIZ="-1", TINYVIZ_TRACE=str(out)),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
  for p in procs:
    o, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    walls.append(int(o.split()[-1]))
  return tmp, outs, walls

def test_merged_processes_line_up_on_one_clock(two):
  tmp, (a, b), walls = two
  out = tmp / "merged.tinyviz.jsonl"
  p = subprocess.run([sys.executable, "-m", "viz", "merge", str(a), str(b), "-o", str(out)], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=120)
  assert p.returncode == 0, p.stderr
  merged = load(str(out))
  assert merged.kind == "tinyviz" and not [w for w in merged.warnings if "skipped" in str(w)], merged.warnings
  marks = [m for m in merged.events if isinstance(m, Marker) and m.name.endswith("together")]
  assert len(marks) == 2
  by_pid = {int(m.name.split("pid ")[1].split(":")[0]): m.ts_ns for m in marks}
  pids = [next(e.pid for e in load(str(f)).events if isinstance(e, Run)) for f in (a, b)]
  for pid, wall in zip(pids, walls):  # each marker where the wall clock says it was (a busy machine may run them apart)
    assert abs(by_pid[pid] - wall) < 1_000_000, (by_pid[pid] - wall, marks)
  if abs(walls[0] - walls[1]) < 200_000: assert abs(marks[0].ts_ns - marks[1].ts_ns) < 1_000_000
  procs = {s.track.split("/")[0] for s in merged.events if isinstance(s, Span)}
  assert len(procs) == 2 and all("proc.py pid" in p for p in procs)
  # ids kept apart: every span's kernel and every rewrite's uops resolve in the merged run
  kernels = {k.id: k for k in merged.events if isinstance(k, Kernel)}
  uops = {u.id for u in merged.events if isinstance(u, UOpDef)}
  assert len(kernels) == sum(1 for t in (load(str(a)), load(str(b))) for e in t.events if isinstance(e, Kernel))
  assert all(s.args["kernel"] in kernels for s in merged.events if isinstance(s, Span) and s.cat == "kernel")
  assert all(r.input in uops and r.output in uops for r in merged.events if isinstance(r, Rewrite))

def test_the_viewer_opens_them_as_one_run(two, tmp_path):
  _, (a, b), _ = two
  s = Server(["--no-browser", "--merge", str(a), str(b)], tmp_path)
  try:
    runs = s.json("/api/runs")
    assert len(runs) == 1
    tracks = s.json(f"/api/runs/{runs[0]['id']}/tracks")["tracks"]
    assert len({t["device"] for t in tracks}) == 2  # grouped per process
  finally: s.stop()

def test_merge_needs_two_runs_and_an_output(two):
  _, (a, _), _ = two
  p = subprocess.run([sys.executable, "-m", "viz", "merge", str(a), "-o", "/tmp/x.jsonl"], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60)
  assert p.returncode == 2 and "at least two runs" in p.stderr
  p = subprocess.run([sys.executable, "-m", "viz", "merge", str(a), str(a)], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60)
  assert p.returncode == 2 and "usage" in p.stderr

def test_chrome_traces_keep_their_processes_when_merged(tmp_path):
  fixtures = ROOT / "tests" / "fixtures"
  s = Server(["--no-browser", "--merge", str(fixtures / "jax_trace.json"), str(fixtures / "torch_cpu_trace.json")], tmp_path)
  try:
    runs = s.json("/api/runs")
    tracks = {t["name"]: t for t in s.json(f"/api/runs/{runs[0]['id']}/tracks")["tracks"]}
  finally: s.stop()
  # each thread under its own process, as when the trace is opened alone, within its file's: JAX's process names hold '/'
  for name, process in (("jax_trace.json//host:CPU/python3", "jax_trace.json//host:CPU"),
                        ("jax_trace.json//host:CPU/tf_pjrt_thread_pool_worker_with_a_rather_long_name/XlaCompile", "jax_trace.json//host:CPU"),
                        ("jax_trace.json//device:GPU:0/XLA Ops", "jax_trace.json//device:GPU:0"),
                        ("torch_cpu_trace.json/python/thread 8025 (python)", "torch_cpu_trace.json/python")):
    assert tracks[name]["kind"] == "thread" and tracks[name].get("process") == process, tracks[name]
