"""What a schedule context tells the explorer, from a real VIZ=-1 run (a subprocess): its name is the user's line that
realized it (`train_step · script.py:N`, the shapes as detail), its `schedule` event lists the kernels and copies in
run order with the buffers each reads and writes, and each kernel record says how DEBUG=2 colours its name. Then the
real server answers GET /contexts/{ctx}/schedule with the same items."""
from __future__ import annotations
import json, subprocess, sys
import pytest
from server_kit import ROOT, Server, env, free_port

SCRIPT = """
from tinygrad import Tensor
def train_step(x, w):
  y = x.conv2d(w).relu().sum()
  return y.realize()  # REALIZE
x, w = Tensor.ones(1, 1, 6, 6).contiguous().realize(), Tensor.ones(2, 1, 3, 3).contiguous().realize()
print(train_step(x, w).item())
"""
LINE = 1 + next(i for i, l in enumerate(SCRIPT.splitlines()) if "# REALIZE" in l)

@pytest.fixture(scope="module")
def trace(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("sched")
  script, out = tmp / "convstep.py", tmp / "convstep.tinyviz.jsonl"
  script.write_text(SCRIPT)
  proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                        env=env(VIZ="-1", TINYVIZ_TRACE=str(out), TINYVIZ_SERVER_DIR=str(tmp / "home")))
  assert proc.returncode == 0, proc.stderr
  assert float(proc.stdout.split()[-1]) == 2 * 16 * 9  # every output of a 3x3 window of ones over ones, summed
  return out, [json.loads(l) for l in out.read_text().splitlines()[1:]]

def test_schedule_named_by_the_users_line(trace):
  _, events = trace
  ctxs = {e["id"]: e for e in events if e["type"] == "context_begin" and e["kind"] == "schedule"}
  step = [c for c in ctxs.values() if c["name"].startswith("train_step")]
  assert [c["name"] for c in step] == [f"train_step · convstep.py:{LINE}"]
  assert step[0]["loc"][0].endswith("convstep.py") and step[0]["loc"][1] == LINE
  assert step[0]["detail"] == "()"  # the shape it realizes: the scalar sum
  # a realize at module level has no function name: just the line
  assert any(c["name"].startswith("convstep.py:") for c in ctxs.values())

def test_schedule_event_lists_kernels_in_run_order(trace):
  _, events = trace
  step = next(e for e in events if e["type"] == "context_begin" and e["name"].startswith("train_step"))
  sched = next(e for e in events if e["type"] == "schedule" and e["ctx"] == step["id"])
  kernels = {e["id"]: e for e in events if e["type"] == "kernel"}
  uops = {e["id"]: e for e in events if e["type"] == "uop"}
  items = sched["items"]
  assert items and all(it["kind"] == "kernel" for it in items)
  written = set()
  for it in items:
    assert uops[it["ast"]]["op"] == "SINK"
    assert it["kernel"] in kernels
    for b in it["reads"] + it["writes"]: assert uops[b]["op"] == "BUFFER"
    # run order: a buffer made by this schedule is read only after the item that writes it
    made = {b for other in items for b in other["writes"]}
    assert all(b in written or b not in made for b in it["reads"])
    written |= set(it["writes"])
  # the conv kernel: one output axis per channel and position, reduced over the 3x3 window (two reduce axes), as DEBUG=2 colours it
  conv = next(kernels[it["kernel"]] for it in items if kernels[it["kernel"]]["name"].startswith("r_2_4_4"))
  assert conv["name"] == "r_2_4_4_3_3"
  assert conv["axis_kinds"] == ["global", "global", "global", "reduce", "reduce"]
  # the inputs come from outside the schedule (realized before): read, never written here
  assert {b for it in items for b in it["reads"]} - written

def test_server_answers_the_schedule(trace, tmp_path):
  path, events = trace
  s = Server([str(path), "--no-browser", "--port", str(free_port())], tmp_path)
  try:
    ctxs = s.json("/api/runs/1/contexts")["contexts"]
    step = next(c for c in ctxs if c["name"].startswith("train_step"))
    sched = next(e for e in events if e["type"] == "schedule" and e["ctx"] == step["id"])
    assert step["n_items"] == len(sched["items"]) and step["detail"] == "()"
    j = s.json(f"/api/runs/1/contexts/{step['id']}/schedule")
    assert [(it["kind"], it["ast"], it["kernel"], it["reads"], it["writes"]) for it in j["items"]] == \
      [(it["kind"], it["ast"], it["kernel"], it["reads"], it["writes"]) for it in sched["items"]]
    assert set(j["kernels"]) == {str(it["kernel"]) for it in sched["items"]}
    got = {u["id"]: u for u in j["uops"]}
    for it in sched["items"]:  # each item's graph comes along, down to its buffers
      assert it["ast"] in got and all(b in got for b in it["reads"] + it["writes"])
    assert s.get("/api/runs/1/contexts/999999/schedule").status_code == 404
    # the captured pattern table of a file the trace has patterns from
    pat = next(e for e in events if e["type"] == "pattern")
    table = s.json(f"/api/runs/1/patterns?file={pat['file']}")
    assert pat["id"] in {p["id"] for p in table["patterns"]}
    assert [p["line"] for p in table["patterns"]] == sorted(p["line"] for p in table["patterns"])
    assert s.get("/api/runs/1/patterns").status_code == 404 and s.get("/api/runs/1/patterns?file=/nope.py").status_code == 404
  finally: s.stop()
