"""VIZ=1: real engine runs (subprocesses, BROWSER=none) streaming to a server the test started, reaching pages (websocket
clients on /ws) with every event counted; a page whose connection is killed reconnects and resumes without losing
anything; a page that does not read holds nobody up; and a VIZ=1 run with no server starts one, which outlives it."""
from __future__ import annotations
import json, subprocess, sys, time
import pytest
from server_kit import ROOT, ENGINE_SCRIPT, Page, Server, engine_run, env, trace_counts, wait_for

@pytest.fixture(scope="module")
def server(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("live")
  s = Server(["serve", "--no-browser", "--state-file", str(tmp / "state.json")], tmp)
  yield s
  s.stop()

def run_of(server: Server, trace_pid: int) -> dict:
  return wait_for(lambda: next((r for r in server.json("/api/runs") if r["name"].endswith(f"(pid {trace_pid})")), None),
                  what=f"the run of pid {trace_pid}")

def pid_of(trace) -> int:
  with open(trace) as f:
    next(f)
    return json.loads(next(f))["pid"]

def test_engine_run_reaches_two_pages(server, tmp_path):
  pages = [Page(server), Page(server)]
  before = {r["id"] for r in server.json("/api/runs")}
  proc, trace = engine_run(tmp_path, "two_pages", steps=3, pause=0.3, VIZ="1", TINYVIZ_URL=server.url)
  want = trace_counts(trace)
  assert want["uop"] > 100 and want["rewrite"] > 10 and want["kernel"] >= 2 and want["span"] > 5
  run = run_of(server, pid_of(trace))
  assert run["id"] not in before
  for p in pages: wait_for(lambda: p.counts(run["id"]) == want, what="every event counted by each page")
  for p in pages: p.last_seq(run["id"])  # no gaps
  run = wait_for(lambda: next(r for r in server.json("/api/runs") if r["id"] == run["id"] and not r["live"]), what="run ended")
  assert run["ended"] and run["n_events"] == sum(want.values()) and not run["warnings"]
  # the page's live view adds up to the snapshot, and the server's own copy of the trace holds the same events
  msgs = pages[0].events[run["id"]].values()
  assert len({c["id"] for m in msgs for c in m["contexts"]}) == want["context_begin"]
  assert sum(len(c["rewrites"]) for m in msgs for c in m["contexts"]) == want["rewrite"]
  assert sum(len(m["kernels"]) for m in msgs) == want["kernel"] == len(server.json(f"/api/runs/{run['id']}/contexts")["kernels"])
  assert server.get(f"/api/runs/{run['id']}/file").text.splitlines()[1:] == trace.read_text().splitlines()[1:]
  # span details were left in that copy, and come back from it
  spans = {(s["track"], s["start_ns"], s["name"]): s["args"] for s in map(json.loads, trace.read_text().splitlines()[1:]) if s["type"] == "span"}
  for t in server.json(f"/api/runs/{run['id']}/tracks")["tracks"]:
    for i in range(t["n_spans"]):
      d = server.json(f"/api/runs/{run['id']}/spans/{t['id']}/{i}")
      assert spans[(d["track_name"], d["start_ns"], d["name"])] == d["args"]
  assert f"view at {server.url}#/rewrites?run={run['id']}" in proc.stderr and f"trace saved to {trace}" in proc.stderr
  # every page heard about the run starting and ending
  for p in pages:
    lives = [r["live"] for m in p.messages if m["type"] == "runs" for r in m["runs"] if r["id"] == run["id"]]
    assert lives[0] is True and lives[-1] is False
    p.close()

def test_killed_page_resumes_losing_nothing(server, tmp_path):
  page = Page(server)
  script = tmp_path / "resume.py"
  script.write_text(ENGINE_SCRIPT)
  trace = tmp_path / "resume.tinyviz.jsonl"
  proc = subprocess.Popen([sys.executable, str(script), "8", "0.25"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env(VIZ="1", TINYVIZ_URL=server.url, TINYVIZ_TRACE=str(trace)))
  try:
    run = run_of(server, proc.pid)
    rid = run["id"]
    wait_for(lambda: len(page.events.get(rid, {})) >= 1, what="a first events message")
    page.kill()
    seen = page.last_seq(rid)
    time.sleep(0.8)  # the script goes on streaming while no page is connected
    again = Page(server)
    again.send({"type": "resume", "run": rid, "seq": seen})
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    want = trace_counts(trace)
    def merged() -> dict:
      m = {**page.events[rid], **again.events.get(rid, {})}
      return {k: sum(x["counts"].get(k, 0) for x in m.values()) for k in want}
    wait_for(lambda: merged() == want, what="the resumed page to have every event")
    final = server.json("/api/runs")[rid - 1]["seq"]
    assert sorted({**page.events[rid], **again.events[rid]}) == list(range(1, final + 1))
    assert min(again.events[rid]) == seen + 1 and final > seen  # it missed some, and got them again
    again.close()
  finally:
    if proc.poll() is None: proc.kill()

def test_slow_page_blocks_nobody(server, tmp_path):
  stuck = Page(server, read=False)  # connected, never reads a byte
  page = Page(server)
  traces = []
  for i in range(3):
    proc, trace = engine_run(tmp_path, f"slow{i}", steps=2, VIZ="1", TINYVIZ_URL=server.url)
    assert "had not taken every event" not in proc.stderr  # ingest never waited on the stuck page
    traces.append(trace)
  for trace in traces:
    rid = run_of(server, pid_of(trace))["id"]
    wait_for(lambda: page.counts(rid) == trace_counts(trace), what="the reading page to get everything")
  assert server.alive() and not page.closed
  stuck.close(); page.close()

def test_second_run_is_a_new_run_and_the_server_outlives_the_script(tmp_path):
  """No server running: VIZ=1 starts one (its own process), the next VIZ=1 run joins it as a new run."""
  home = tmp_path / "home"
  first, trace1 = engine_run(tmp_path, "first", steps=1, VIZ="1")
  state = json.loads((home / "server.json").read_text())
  try:
    assert f"view at {state['url']}#/rewrites?run=1" in first.stderr and f"server pid {state['pid']}" in first.stderr
    second, trace2 = engine_run(tmp_path, "second", steps=1, VIZ="1")
    assert json.loads((home / "server.json").read_text())["pid"] == state["pid"]  # joined, not started again
    assert "#/rewrites?run=2" in second.stderr
    srv = object.__new__(Server)
    import httpx
    srv.http = httpx.Client(base_url=f"http://127.0.0.1:{state['port']}", headers={"X-Tinyviz-Token": state["token"]}, trust_env=False)
    runs = wait_for(lambda: [r for r in srv.http.get("/api/runs").json() if r["ended"]] if len(srv.http.get("/api/runs").json()) == 2 else None,
                    what="both runs")
    assert [r["n_events"] for r in runs] == [sum(trace_counts(t).values()) for t in (trace1, trace2)]
  finally:
    stop = subprocess.run([sys.executable, "-m", "viz", "stop"], cwd=ROOT, env=env(TINYVIZ_SERVER_DIR=str(home)), capture_output=True,
                          text=True, timeout=30)
  assert stop.returncode == 0 and "stopped" in stop.stdout
  assert not (home / "server.json").exists()

def test_server_killed_mid_run_gets_the_whole_run_again(tmp_path):
  """The server dies while a VIZ=1 script streams: the script starts a new one and sends it everything again."""
  home = tmp_path / "home"
  first = Server(["serve", "--no-browser", "--state-file", str(home / "server.json")], tmp_path)
  page = Page(first)
  script = tmp_path / "restart.py"
  script.write_text(ENGINE_SCRIPT)
  trace = tmp_path / "restart.tinyviz.jsonl"
  proc = subprocess.Popen([sys.executable, str(script), "10", "0.2"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env(VIZ="1", TINYVIZ_SERVER_DIR=str(home), TINYVIZ_TRACE=str(trace), TINYVIZ_TRACE_DIR=str(tmp_path / "spool")))
  try:
    rid = run_of(first, proc.pid)["id"]
    wait_for(lambda: len(page.events.get(rid, {})) >= 1, what="a first events message")
    first.proc.kill()  # SIGKILL: no goodbye, its state file stays behind
    first.proc.wait()
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, out + err
    state = json.loads((home / "server.json").read_text())
    assert state["pid"] != first.proc.pid and f"view at {state['url']}#/rewrites?run=1" in err
    import httpx
    http = httpx.Client(base_url=f"http://127.0.0.1:{state['port']}", headers={"X-Tinyviz-Token": state["token"]}, trust_env=False)
    (run,) = wait_for(lambda: [r for r in http.get("/api/runs").json() if r["ended"]], what="the run, whole, on the new server")
    assert run["n_events"] == sum(trace_counts(trace).values()) and not run["warnings"]
  finally:
    if proc.poll() is None: proc.kill()
    first.stop()
    subprocess.run([sys.executable, "-m", "viz", "stop"], cwd=ROOT, env=env(TINYVIZ_SERVER_DIR=str(home)), capture_output=True, timeout=30)
