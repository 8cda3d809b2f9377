"""`tinyviz FILE... --no-browser --port P` (the real command, as a subprocess) serving a PyTorch Chrome trace (plain and
gzipped) and our own trace from a VIZ=-1 engine run, and every endpoint of docs/server-api.md on them."""
from __future__ import annotations
import subprocess, sys
import numpy as np
import pytest
from server_kit import ROOT, Server, engine_run, env, free_port, trace_counts
from profiler.events import Kernel, field_names
from viz.server.timeline import decode_chunk

TORCH = ROOT / "tests" / "fixtures" / "torch_cpu_trace.json"

@pytest.fixture(scope="module")
def own_trace(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("own")
  proc, trace = engine_run(tmp, "own", steps=2, VIZ="-1")
  assert "trace saved to" in proc.stderr and "view at" not in proc.stderr
  assert not (tmp / "home" / "server.json").exists()  # VIZ=-1 starts no server
  return trace

@pytest.fixture(scope="module")
def server(tmp_path_factory, own_trace):
  tmp = tmp_path_factory.mktemp("files")
  port = free_port()
  s = Server([str(TORCH), str(TORCH) + ".gz", str(own_trace), "--no-browser", "--port", str(port)], tmp)
  assert s.port == port
  yield s
  s.stop()

def runs_by_name(server: Server) -> dict[str, dict]:
  return {r["name"]: r for r in server.json("/api/runs")}

def test_runs_listed(server, own_trace):
  runs = server.json("/api/runs")
  assert [r["id"] for r in runs] == [1, 2, 3]
  assert [r["kind"] for r in runs] == ["chrome", "chrome", "tinyviz"]
  assert all(not r["live"] and isinstance(r["warnings"], list) for r in runs)
  assert runs[0]["n_events"] == runs[1]["n_events"] > 100  # the .gz is the same trace
  assert runs[2]["n_events"] == sum(trace_counts(own_trace).values()) and runs[2]["path"] == str(own_trace)

def check_track_chunks(server: Server, run: int) -> dict:
  meta = server.json(f"/api/runs/{run}/tracks")
  assert meta["end_ns"] >= meta["start_ns"] > 0 and meta["tracks"]
  for t in meta["tracks"]:
    r = server.get(f"/api/runs/{run}/spans", params={"track": t["id"]})
    assert r.status_code == 200 and r.headers["content-type"] == "application/octet-stream"
    c = decode_chunk(r.content)
    assert c["n"] == t["n_spans"] and (np.diff(c["start"]) >= 0).all() and (c["dur"] >= 0).all()
    assert int(c["depth"].max(initial=0)) == t["max_depth"]
    by_lane: dict[int, float] = {}
    for s, d, lane in zip(c["start"], c["dur"], c["depth"]):  # spans of one lane never overlap
      assert s >= by_lane.get(int(lane), -np.inf)
      by_lane[int(lane)] = s + d
    if c["n"]:
      one = server.json(f"/api/runs/{run}/spans/{t['id']}/{int(c['index'][-1])}")
      assert one["start_ns"] - meta["start_ns"] == c["start"][-1] and one["name"] == c["names"][c["name"][-1]]
  return meta

def test_chrome_trace_timeline(server):
  meta = check_track_chunks(server, 1)
  assert {t["kind"] for t in meta["tracks"]} == {"thread"}
  assert any("memory" in c["name"] for c in meta["counters"])
  c = server.json(f"/api/runs/1/counters/{meta['counters'][0]['id']}")
  assert len(c["ts"]) == len(c["values"]) == meta["counters"][0]["n"] and c["ts"] == sorted(c["ts"])
  assert server.json("/api/runs/1/contexts") == {"contexts": [], "kernels": []}
  gz = server.json("/api/runs/2/tracks")
  assert [t["n_spans"] for t in gz["tracks"]] == [t["n_spans"] for t in meta["tracks"]]
  assert isinstance(server.json("/api/runs/1/flows"), list)
  # a window in the middle holds what overlaps it
  t = max(meta["tracks"], key=lambda t: t["n_spans"])
  mid = (meta["end_ns"] - meta["start_ns"]) / 2
  win = decode_chunk(server.get("/api/runs/1/spans", params={"track": t["id"], "start": mid, "end": mid + 1e6}).content)
  assert all(s <= mid + 1e6 and s + d >= mid for s, d in zip(win["start"], win["dur"]))

def test_own_trace_rewrites_kernels_timeline(server, own_trace):
  counts = trace_counts(own_trace)
  j = server.json("/api/runs/3/contexts")
  assert len(j["contexts"]) == counts["context_begin"] and len(j["kernels"]) == counts["kernel"]
  assert sum(len(c["rewrites"]) for c in j["contexts"]) == counts["rewrite"]
  ids = [c["id"] for c in j["contexts"]]
  assert all(c["parent"] is None or ids.index(c["parent"]) < ids.index(c["id"]) for c in j["contexts"])
  k = j["kernels"][0]
  assert set(k) == set(field_names(Kernel)) - {"src", "uops", "line_uops", "plans"}  # the trace's names
  full = server.json(f"/api/runs/3/kernels/{k['id']}")
  assert full["src"] and full["uops"] and full["name"] == k["name"]
  rw = max((r for c in j["contexts"] for r in c["rewrites"]), key=lambda r: r["n_matches"])
  n = rw["n_matches"]
  for step in (0, n // 2, n):
    g = server.json(f"/api/runs/3/rewrites/{rw['id']}/step/{step}")
    assert g["k"] == step and g["n_matches"] == n and g["root"] in {u["id"] for u in g["nodes"]}
  assert g["root"] == rw["output"]
  assert server.get(f"/api/runs/3/rewrites/{rw['id']}/step/{n + 1}").status_code == 404
  u = server.json(f"/api/runs/3/uops/{g['nodes'][0]['id']}")
  assert set(u) == {"id", "op", "dtype", "arg", "src", "users"} and len(u["users"]) <= 100
  meta = check_track_chunks(server, 3)
  kinds = {t["name"]: t["kind"] for t in meta["tracks"]}
  assert kinds["HOST"] == "host" and kinds["TENSOR"] == "tensor" and "device" in kinds.values()
  dev = next(t for t in meta["tracks"] if t["kind"] == "device")
  c = decode_chunk(server.get("/api/runs/3/spans", params={"track": dev["id"]}).content)
  assert set(c["cat"].tolist()) <= {0, 1} and set(c["kernel"].tolist()) <= {kk["id"] for kk in j["kernels"]} | {-1}
  assert server.get("/api/runs/3/file").content == own_trace.read_bytes()

def test_errors_are_404_json(server):
  for path in ("/api/runs/9/contexts", "/api/runs/3/kernels/999", "/api/runs/3/uops/999999", "/api/runs/3/uops/x",
               "/api/runs/3/spans?track=99", "/api/runs/3/spans/0/999999", "/api/runs/3/counters/99", "/api/runs/1/rewrites/1/step/0"):
    r = server.get(path)
    assert r.status_code == 404 and "error" in r.json(), path

def test_frontend_served(server):
  r = server.get("/")
  assert r.status_code == 200 and "text/html" in r.headers["content-type"]
  js = sorted((ROOT / "viz" / "frontend").rglob("*.js"))
  if js:
    rel = js[0].relative_to(ROOT / "viz" / "frontend").as_posix()
    r = server.get(f"/{rel}")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript") and r.content == js[0].read_bytes()

def test_missing_file_is_an_error(tmp_path):
  p = subprocess.run([sys.executable, "-m", "viz", str(tmp_path / "nope.json"), "--no-browser"], cwd=ROOT, env=env(),
                     capture_output=True, text=True, timeout=60)
  assert p.returncode == 1 and "nope.json" in p.stderr
  p = subprocess.run([sys.executable, "-m", "viz"], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60)
  assert p.returncode == 2 and "usage" in p.stderr
