"""`tinyviz compare A B`: two runs kernel by kernel (profiler/compare.py), on real engine runs, a PyTorch trace and
real tinygrad 0.14's files."""
from __future__ import annotations
import json, subprocess, sys
from pathlib import Path
import pytest
from profiler.compare import compare, from_events, span_self_times
from profiler.events import Kernel, Span
from profiler.load import load
from server_kit import ROOT, Server, env

FIXTURES = ROOT / "tests" / "fixtures"
SCRIPT = """
import sys
import numpy as np
from tinygrad import Tensor
a, b = Tensor(np.ones((32, 32), np.float32)), Tensor(np.full((32, 32), 2, np.float32))
for _ in range(int(sys.argv[1])): (a @ b).relu().realize()
if sys.argv[2] == "extra": (a * b + 1).exp().realize()
"""

def _run(tmp: Path, name: str, *args: str) -> Path:
  out = tmp / f"{name}.tinyviz.jsonl"
  script = tmp / "work.py"; script.write_text(SCRIPT)
  p = subprocess.run([sys.executable, str(script), *args], cwd=ROOT, env=env(VIZ="-1", TINYVIZ_TRACE=str(out)), capture_output=True, text=True, timeout=300)
  assert p.returncode == 0, p.stderr
  return out

def _cli(*args: str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "viz", "compare", *args], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=120)

@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("cmp")
  return _run(tmp, "a", "2", "plain"), _run(tmp, "b", "3", "extra")

def test_two_engine_runs_kernel_by_kernel(runs):
  a, b = runs
  p = _cli(str(a), str(b), "--json")
  assert p.returncode == 0, p.stderr
  got = json.loads(p.stdout)
  both = {k["name"]: k for k in got["kernels"]}
  mm = next(k for n, k in both.items() if n.startswith("r_32_32_32"))
  assert (mm["a"]["count"], mm["b"]["count"]) == (2, 3)
  assert mm["delta_ns"] == mm["b"]["total_ns"] - mm["a"]["total_ns"] and mm["ratio"] == pytest.approx(mm["b"]["total_ns"] / mm["a"]["total_ns"])
  assert mm["a"]["self_ns"] == mm["a"]["total_ns"]  # kernels do not nest
  assert got["only_a"] == [] and [k["name"] for k in got["only_b"]] and all(k["name"].startswith("E_") for k in got["only_b"])
  ta, tb = load(str(a)), load(str(b))
  kernel_ns = lambda t: sum(e.end_ns - e.start_ns for e in t.events if isinstance(e, Span) and e.cat == "kernel")  # noqa: E731
  assert got["total"] == {"a_ns": kernel_ns(ta), "b_ns": kernel_ns(tb)} and "CPU" in got["devices"]
  text = _cli(str(a), str(b))
  assert text.returncode == 0 and "kernels in both" in text.stdout and "only in B" in text.stdout and "whole run" in text.stdout

def test_a_renamed_kernel_with_the_same_source_is_matched():
  k = lambda i, name, src: Kernel(i, name, "CPU", src, (1,), (1,), 0, 0, None, [])  # noqa: E731
  s = lambda name, kid, t: Span("CPU", name, t, t + 100, "kernel", {"kernel": kid})  # noqa: E731
  a = [k(1, "E_4", "void f(){1}"), k(2, "r_8", "void g(){2}"), s("E_4", 1, 0), s("r_8", 2, 200)]
  b = [k(1, "E_4n1", "void f(){1}"), k(2, "r_8", "void g(){3}"), s("E_4n1", 1, 0), s("E_4n1", 1, 300), s("r_8", 2, 200)]
  c = compare(a, b)
  assert sorted((r.name, r.renamed) for r in c.rows) == [("E_4", "E_4n1"), ("r_8", None)]
  e4 = next(r for r in c.rows if r.name == "E_4")
  assert (e4.a.count, e4.b.count, e4.delta_ns) == (1, 2, 100)
  assert c.only_a == [] and c.only_b == []

def test_self_time_takes_out_nested_spans():
  spans = [Span("t", "outer", 0, 100, "op"), Span("t", "inner", 10, 40, "op"), Span("t", "deep", 20, 30, "op"),
           Span("t", "inner2", 50, 60, "op"), Span("u", "other track", 0, 100, "op")]
  assert span_self_times(from_events(spans)[0]) == [60, 20, 10, 10, 100]

def test_a_pytorch_trace_against_ours_compares_all_spans(runs):
  p = _cli(str(FIXTURES / "torch_cpu_trace.json.gz"), str(runs[0]), "--json")
  assert p.returncode == 0, p.stderr
  got = json.loads(p.stdout)
  assert got["all_spans"] == {"a": True, "b": False} and got["only_a"] and got["only_b"]
  assert all(k["a"]["self_ns"] <= k["a"]["total_ns"] for k in got["only_a"])
  assert any(k["a"]["self_ns"] < k["a"]["total_ns"] for k in got["only_a"])  # PyTorch's op spans nest

def test_real_tinygrad_run_against_ours_lists_the_kernels_of_both(runs):
  d = FIXTURES / "tinygrad014" / "matmul"
  p = _cli(str(d / "rewrites.pkl.gz"), str(d / "profile.pkl.gz"), str(runs[0]), "--json")
  assert p.returncode == 0, p.stderr
  got = json.loads(p.stdout)
  names_a = {k["name"] for k in got["kernels"]} | {k["name"] for k in got["only_a"]}
  names_b = {k["renamed"] or k["name"] for k in got["kernels"]} | {k["name"] for k in got["only_b"]}
  assert names_a and names_b and any(n.startswith("r_32_32_32") for n in names_b)
  assert got["total"]["a_ns"] > 0 and got["total"]["b_ns"] > 0

def test_bad_arguments_say_so(runs, tmp_path):
  p = _cli(str(runs[0]))
  assert p.returncode == 2 and "usage: tinyviz compare A B" in p.stderr
  p = _cli(str(runs[0]), str(tmp_path / "missing.json"))
  assert p.returncode == 1 and "missing.json" in p.stderr and "Traceback" not in p.stderr
  bad = tmp_path / "bad.json"; bad.write_text("not a trace")
  p = _cli(str(bad), str(runs[0]))
  assert p.returncode == 1 and "bad.json" in p.stderr and "Traceback" not in p.stderr

def test_viewer_opens_on_the_compare_view(runs, tmp_path):
  s = Server(["--no-browser", "--compare", str(runs[0]), str(runs[1])], tmp_path)
  try:
    assert f"?token={s.token}#/compare?a=1&b=2" in s.text()
    got = s.json("/api/compare?a=1&b=2")
    assert any(k["name"].startswith("r_32_32_32") for k in got["kernels"])
    k = next(k for k in got["kernels"] if k["name"].startswith("r_32_32_32"))
    passes = s.json(f"/api/runs/1/kernels/{k['a']['kernel']}/passes")
    assert passes["kernel"]["name"] == k["name"] and passes["passes"] and all("n_matches" in p for p in passes["passes"])
    fired = {str(p["id"]) for ps in passes["passes"] for p in ps["patterns"]}
    assert fired and fired <= set(passes["patterns"])
    assert s.get("/api/compare?a=1").status_code == 404 and s.get("/api/compare?a=1&b=99").status_code == 404
  finally: s.stop()
  p = subprocess.run([sys.executable, "-m", "viz", "--no-browser", "--compare", str(runs[0])], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60)
  assert p.returncode == 2 and "exactly two runs" in p.stderr
