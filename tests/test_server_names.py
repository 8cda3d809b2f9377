"""The trace format, the server's JSON and the frontend use one name per field: every field the server sends for an
event is one that docs/trace-format.md's table for that event lists (under its name there), apart from the few the
API adds or folds, which docs/server-api.md names. The tables are read from the doc, the JSON from the real server
on a real engine run (kernels, contexts, rewrites, patterns, uops, spans, a counter, a marker, a copy's flow)."""
from __future__ import annotations
import re, subprocess, sys
import pytest
from server_kit import ROOT, Server, env, free_port

SCRIPT = """
import numpy as np
from tinygrad import Tensor
from tinygrad.helpers import profile_marker
x = Tensor(np.arange(16, dtype=np.float32).reshape(4, 4))
y = (x @ x + 1).relu().realize()
profile_marker("after the matmul")
s = (y.shard(("CPU", "CPU:1"), axis=0) * 2).sum(0)  # the all-reduce copies between the devices: flows
np.testing.assert_allclose(s.numpy(), (np.maximum(x.numpy() @ x.numpy() + 1, 0) * 2).sum(0))
"""

def doc_tables() -> dict[str, set[str]]:
  """Event type -> the fields its table in docs/trace-format.md lists (context_end's are in a sentence)."""
  doc = (ROOT / "docs" / "trace-format.md").read_text()
  events = doc[doc.index("## Events"):doc.index("## A short example")]
  out: dict[str, set[str]] = {}
  for m in re.finditer(r"^### `(\w+)`.*?\n(.*?)(?=^### |\Z)", events, re.S | re.M):
    out[m.group(1)] = set(re.findall(r"^\| `(\w+)` \|", m.group(2), re.M))
  out["context_end"] = {"id", "ts_ns"}
  return out

@pytest.fixture(scope="module")
def server(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("names")
  (tmp / "names.py").write_text(SCRIPT)
  trace = tmp / "names.tinyviz.jsonl"
  p = subprocess.run([sys.executable, str(tmp / "names.py")], cwd=ROOT, capture_output=True, text=True, timeout=300,
                     env=env(VIZ="-1", TINYVIZ_TRACE=str(trace), TINYVIZ_TRACE_DIR=str(tmp / "spool")))
  assert p.returncode == 0, p.stderr
  s = Server([str(trace), "--no-browser", "--port", str(free_port())], tmp)
  yield s
  s.stop()

def same_names(got: dict, table: set[str], added: set[str] = set(), left_out: set[str] = set(), what: str = "") -> None:
  """got's keys are the table's fields, less those the API leaves out, plus those it adds (each documented)."""
  assert set(got) - added == table - left_out, f"{what}: {sorted(set(got) - added)} vs the doc's {sorted(table - left_out)}"

def test_doc_tables_are_read():
  t = doc_tables()
  assert {"run", "uop", "pattern", "context_begin", "rewrite", "kernel", "span", "counter", "marker", "flow"} <= set(t)
  assert {"bytes", "flops", "global_size", "src"} <= t["kernel"] and "mem_bytes" not in t["kernel"]

def test_server_json_uses_the_trace_format_names(server):
  t = doc_tables()
  (run,) = server.json("/api/runs")
  assert {run["script"], run["start_time"]} and {"script", "start_time"} <= t["run"]
  j = server.json(f"/api/runs/{run['id']}/contexts")
  for k in j["kernels"]:  # the summary leaves the long fields to /kernels/K
    same_names(k, t["kernel"], left_out={"src", "uops", "line_uops", "plans"}, what="kernel summary")
  full = server.json(f"/api/runs/{run['id']}/kernels/{j['kernels'][0]['id']}")
  same_names(full, t["kernel"], what="kernel")
  assert full["bytes"] > 0 and full["flops"] > 0
  ctx = next(c for c in j["contexts"] if c["rewrites"])
  # a context folds context_begin and context_end: its times are start_ns/end_ns, its rewrites listed in it
  same_names(ctx, t["context_begin"], added={"start_ns", "end_ns", "rewrites", "n_items"}, left_out={"ts_ns"},
             what="context")
  rw = max(ctx["rewrites"], key=lambda r: r["n_matches"])
  same_names(rw, t["rewrite"], added={"n_matches"}, left_out={"ctx", "matches", "match_ns"}, what="rewrite summary")
  step = server.json(f"/api/runs/{run['id']}/rewrites/{rw['id']}/step/1")
  same_names(step["match"]["pattern"], t["pattern"], what="pattern")
  for n in step["nodes"][:5]: same_names(n, t["uop"], what="step node")
  same_names(server.json(f"/api/runs/{run['id']}/uops/{step['root']}"), t["uop"], added={"users"}, what="uop")
  tracks = server.json(f"/api/runs/{run['id']}/tracks")
  assert tracks["markers"] and all(set(m) == t["marker"] for m in tracks["markers"])
  track = next(tr for tr in tracks["tracks"] if tr["n_spans"])
  span = server.json(f"/api/runs/{run['id']}/spans/{track['id']}/0")
  same_names(span, t["span"], added={"track_name", "depth", "kernel"}, what="span")  # `track` is the track's id
  flows = server.json(f"/api/runs/{run['id']}/flows")
  assert flows and all(set(f) == t["flow"] for f in flows)
  assert tracks["counters"] and {"track", "name"} <= set(tracks["counters"][0]) <= {"id", "n"} | t["counter"]
