"""Regression tests for issue 17's findings: times beyond 64 bits, planted links at trace-file names, the token
redirect, TCP_NODELAY on the server's sockets. Each one drives the real reader, writer or server."""
from __future__ import annotations
import json, os, socket, stat, subprocess, sys, time
from pathlib import Path
import httpx
import pytest
from profiler.load import load
from profiler.events import SchemaError, from_json
from profiler.safefile import create_private, private_dir
from profiler.tracefile import TraceWriter
from server_kit import ROOT, Server, env, wait_for
from viz.server.serve import bind

EPOCH_NS = 1796126049632119000  # a Chrome trace written in epoch nanoseconds where microseconds belong

def _chrome(tmp: Path, name: str, events: list[dict]) -> Path:
  p = tmp / name
  p.write_text(json.dumps({"traceEvents": events}))
  return p

def _good_events() -> list[dict]:
  return [{"ph": "X", "name": "matmul", "pid": 1, "tid": 1, "ts": 10.0, "dur": 5.0},
          {"ph": "X", "name": "relu", "pid": 1, "tid": 1, "ts": 20, "dur": 2}]

def test_chrome_time_beyond_64_bits_is_skipped_with_a_warning(tmp_path):
  bad = [{"ph": "X", "name": "huge", "pid": 1, "tid": 1, "ts": EPOCH_NS, "dur": 3}, {"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": EPOCH_NS},
         {"ph": "C", "name": "mem", "pid": 1, "tid": 1, "ts": EPOCH_NS, "args": {"v": 1}}, {"ph": "i", "name": "m", "ts": -EPOCH_NS * 10}]
  trace = load(str(_chrome(tmp_path, "epoch.json", _good_events() + bad)))
  names = sorted(e.name for e in trace.events if type(e).__name__ == "Span")
  assert names == ["matmul", "relu"]
  assert any("64 bits" in str(w) for w in trace.warnings), [str(w) for w in trace.warnings]

def test_event_ints_beyond_64_bits_are_schema_errors():
  with pytest.raises(SchemaError, match="64 bits"):
    from_json({"type": "span", "track": "CPU", "name": "k", "start_ns": 2**64, "end_ns": 2**64 + 1, "cat": "kernel", "args": {}})

def test_summary_and_viewer_open_a_file_with_a_time_beyond_64_bits(tmp_path):
  bad = _chrome(tmp_path, "epoch.json", _good_events() + [{"ph": "X", "name": "huge", "pid": 1, "tid": 2, "ts": EPOCH_NS, "dur": 1}])
  good = _chrome(tmp_path, "good.json", _good_events())
  out = subprocess.run([sys.executable, "-m", "viz", "summary", str(bad)], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60)
  assert out.returncode == 0, out.stderr
  assert "matmul" in out.stdout and "Traceback" not in out.stderr
  s = Server(["--no-browser", str(bad), str(good)], tmp_path)
  try:
    runs = s.json("/api/runs")
    runs = runs["runs"] if isinstance(runs, dict) else runs
    assert len(runs) == 2
    for r in runs:
      assert s.get(f"/api/runs/{r['id']}/tracks").status_code == 200
  finally: s.stop()

def test_trace_writer_never_writes_through_a_link(tmp_path):
  target = tmp_path / "precious.txt"
  target.write_text("keep me")
  link = tmp_path / "run.tinyviz.jsonl"
  link.symlink_to(target)
  for exclusive in (True, False):
    with pytest.raises(OSError, match="link|exists"): TraceWriter(str(link), exclusive=exclusive)
  assert target.read_text() == "keep me"

def test_a_made_up_name_is_never_overwritten_and_files_are_private(tmp_path):
  planted = tmp_path / "planted.tinyviz.jsonl"
  planted.write_text("someone else's")
  with pytest.raises(FileExistsError, match="already exists"): TraceWriter(str(planted), exclusive=True)
  assert planted.read_text() == "someone else's"
  w = TraceWriter(str(tmp_path / "new" / "mine.tinyviz.jsonl"), exclusive=True)
  w.close()
  assert stat.S_IMODE(os.stat(w.path).st_mode) == 0o600
  assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o700
  assert load(w.path).kind == "tinyviz"  # the header alone: a readable, empty trace

def test_private_dir_refuses_links_and_other_users_folders(tmp_path):
  real = tmp_path / "real"; real.mkdir(mode=0o777); os.chmod(real, 0o777)
  assert private_dir(str(real)) == str(real) and stat.S_IMODE(os.stat(real).st_mode) == 0o700  # group/other bits taken away
  link = tmp_path / "link"; link.symlink_to(real)
  with pytest.raises(PermissionError, match="not a folder"): private_dir(str(link))
  if os.getuid() == 0:  # root can hand a folder to another user to stand in for one planted by them
    theirs = tmp_path / "theirs"; theirs.mkdir(); os.chown(theirs, 65534, 65534)
    with pytest.raises(PermissionError, match="another user"): private_dir(str(theirs))

def test_a_planted_default_trace_folder_is_refused_and_the_script_still_runs(tmp_path):
  elsewhere = tmp_path / "attacker"; elsewhere.mkdir()
  tmp = tmp_path / "tmp"; tmp.mkdir()
  (tmp / "tinyviz").symlink_to(elsewhere)
  script = "from tinygrad import Tensor; print((Tensor([1.0, 2.0]) * 3).sum().item())"
  e = env(VIZ="-1", TMPDIR=str(tmp))
  e.pop("TINYVIZ_TRACE_DIR", None)
  out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=e, capture_output=True, text=True, timeout=120)
  assert out.returncode == 0 and out.stdout.strip() == "9.0", out.stderr
  assert "not a folder" in out.stderr and "Traceback" not in out.stderr
  assert list(elsewhere.iterdir()) == []

def test_create_private_refuses_a_dangling_link(tmp_path):
  link = tmp_path / "x.jsonl"; link.symlink_to(tmp_path / "does-not-exist")
  with pytest.raises(OSError): create_private(str(link), exclusive=False)
  assert not (tmp_path / "does-not-exist").exists()

def test_token_redirect_stays_on_this_server(tmp_path):
  s = Server(["serve", "--no-browser", "--state-file", str(tmp_path / "state.json")], tmp_path)
  try:
    c = httpx.Client(base_url=s.base, trust_env=False, timeout=10)
    for path in ("//evil.example/", "/\\evil.example/", "///evil.example/x"):
      r = c.get(path, params={"token": s.token}, follow_redirects=False)
      assert r.status_code == 303
      loc = r.headers["location"]
      assert loc.startswith("/") and not loc.startswith("//") and not loc.startswith("/\\"), loc
  finally: s.stop()

def test_listening_socket_is_tcp_so_asyncio_sets_nodelay():
  sock = bind("127.0.0.1", 0)
  try:
    assert sock.proto == socket.IPPROTO_TCP  # asyncio's _set_nodelay only touches sockets whose proto says TCP
  finally: sock.close()

def test_odd_names_and_parameters_answer_4xx_never_500(tmp_path):
  events = _good_events() + [{"ph": "X", "name": "bad \ud800 name", "pid": 1, "tid": 1, "ts": 30, "dur": 1}]
  p = tmp_path / "surrogate.json"
  p.write_text(json.dumps({"traceEvents": events}))  # ensure_ascii: the lone surrogate travels as \ud800
  s = Server(["--no-browser", str(p)], tmp_path)
  try:
    runs = s.json("/api/runs")
    rid = (runs["runs"] if isinstance(runs, dict) else runs)[0]["id"]
    tracks = s.json(f"/api/runs/{rid}/tracks")
    tracks = tracks["tracks"] if isinstance(tracks, dict) else tracks
    for t in tracks:
      r = s.get(f"/api/runs/{rid}/spans", params={"track": str(t["id"])})
      assert r.status_code == 200, r.text
    for params in ({"track": "²"}, {"track": "9" * 5000}, {"track": "0", "start": "nan"}, {"track": "0", "end": "inf"},
                   {"track": "0", "start": "-inf"}, {"track": "0", "start": "x" * 100}):
      r = s.get(f"/api/runs/{rid}/spans", params=params)
      assert r.status_code == 404 and "error" in r.json(), (params, r.status_code)
    assert s.get(f"/api/runs/{rid}/spans", params={"track": "0", "start": "-1e300", "end": "1e300"}).status_code == 200
    assert s.get(f"/api/runs/{rid}/spans/²/0").status_code == 404
    assert s.alive()
  finally: s.stop()

def test_a_number_of_thousands_of_digits_costs_one_event(tmp_path):
  big = "9" * 5000
  good = '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}'
  p = tmp_path / "big.json"
  p.write_text('{"traceEvents":[%s,{"ph":"X","name":"b","pid":1,"tid":1,"ts":%s,"dur":2},%s]}' % (good, big, good.replace('"a"', '"c"')))
  trace = load(str(p))
  assert [e.name for e in trace.events if type(e).__name__ == "Span"] == ["a", "c"]
  assert any("4,300 digits" in str(w) for w in trace.warnings)
  out = subprocess.run([sys.executable, "-m", "viz", "summary", str(p)], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60)
  assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
  cut = tmp_path / "cut.json"
  cut.write_text('[%s,{"ph":"X","name":"b","ts":%s,"du' % (good, big))  # damaged after the huge number: stops there
  assert [e.name for e in load(str(cut)).events if type(e).__name__ == "Span"] == ["a"]

def _py(code: str, **extra: str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env(**extra), capture_output=True, text=True, timeout=120)

def test_bad_viewer_env_vars_are_named_and_the_script_runs():
  out = _py("import profiler.live as l; print(l.EXIT_WAIT_S, l.IDLE_EXIT_S)", TINYVIZ_EXIT_WAIT="abc", TINYVIZ_IDLE_EXIT="-3")
  assert out.returncode == 0 and out.stdout.split() == ["10.0", "3600"], out.stderr
  assert "TINYVIZ_EXIT_WAIT='abc'" in out.stderr and "TINYVIZ_IDLE_EXIT='-3'" in out.stderr

def test_bad_alloc_cache_is_one_clear_error():
  out = _py("import tinygrad", ALLOC_CACHE_MB="abc")
  assert out.returncode != 0 and "ALLOC_CACHE_MB='abc'" in out.stderr
  assert "Exception ignored" not in out.stderr and out.stderr.count("Traceback") == 1

def test_a_bad_engine_setting_stops_with_one_line_naming_it():
  for var, val in (("DEBUG", "abc"), ("NOOPT", "x"), ("JIT", "1.5")):
    out = _py("import tinygrad", **{var: val})
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"tinygrad: env var {var}={val!r} must be a number like "), out.stderr

def test_stale_compile_temp_files_are_swept(tmp_path):
  cache = tmp_path / "cache" / "cpu"; cache.mkdir(parents=True)
  old, young = cache / "dead.so.tmp", cache / "alive.so.tmp"
  old.write_bytes(b"x"); young.write_bytes(b"y")
  os.utime(old, (1, 1))  # left by a compile killed long ago
  code = "from tinygrad import Tensor; print((Tensor([1.0, 2.0]) + 1).tolist())"
  out = _py(code, TINYVIZ_CACHE=str(tmp_path / "cache"))  # an empty cache: the kernel is compiled
  assert out.returncode == 0 and "[2.0, 3.0]" in out.stdout, out.stderr
  assert young.exists()
  assert not old.exists()

# *** read limits (profiler/limits.py): past one, a warning naming it, everything before kept ***

def _our_trace(tmp: Path, name: str, n: int, extra_line: str | None = None, at: int = 0, end_newline: bool = True) -> Path:
  from profiler.events import header
  lines = [json.dumps(header())]
  for i in range(n):
    if extra_line is not None and i == at: lines.append(extra_line)
    lines.append(json.dumps({"type": "span", "track": "CPU", "name": f"k{i}", "start_ns": i * 10, "end_ns": i * 10 + 5, "cat": "kernel", "args": {}}))
  p = tmp / name
  p.write_text("\n".join(lines) + ("\n" if end_newline else ""))
  return p

def _spans(trace) -> list[str]: return [e.name for e in trace.events if type(e).__name__ == "Span"]

def test_gzip_of_blanks_is_empty_and_blanks_before_a_trace_are_skipped(tmp_path):
  import gzip
  from profiler.tracefile import TraceError
  blank = tmp_path / "blank.json.gz"
  blank.write_bytes(gzip.compress(b" " * (64 << 20)))  # 64 MB of spaces in ~64 KB
  with pytest.raises(TraceError, match="empty"): load(str(blank))
  lead = tmp_path / "lead.json.gz"
  lead.write_bytes(gzip.compress(b"\n" * (64 << 20) + json.dumps({"traceEvents": _good_events()}).encode()))
  assert _spans(load(str(lead))) == ["matmul", "relu"]

def test_a_line_past_the_line_limit_is_skipped_and_the_rest_read(tmp_path, monkeypatch):
  monkeypatch.setenv("TINYVIZ_MAX_LINE_MB", "1")
  huge = json.dumps({"type": "marker", "name": "x" * (3 << 20), "ts_ns": 1})
  t = load(str(_our_trace(tmp_path, "long.jsonl", 5, extra_line=huge, at=2)))
  assert _spans(t) == [f"k{i}" for i in range(5)]
  assert any("TINYVIZ_MAX_LINE_MB=1" in str(w) for w in t.warnings)
  events = _good_events() + [{"ph": "X", "name": "y" * (3 << 20), "pid": 1, "tid": 1, "ts": 40, "dur": 1}] + _good_events()
  t = load(str(_chrome(tmp_path, "long.json", events)))
  assert _spans(t) == ["matmul", "relu"] and any("TINYVIZ_MAX_LINE_MB=1" in str(w) for w in t.warnings)

def test_event_count_and_size_limits_keep_what_came_before(tmp_path, monkeypatch):
  monkeypatch.setenv("TINYVIZ_MAX_EVENTS", "10")
  t = load(str(_our_trace(tmp_path, "many.jsonl", 50)))
  assert len(t.events) == 10 and any("TINYVIZ_MAX_EVENTS=10" in str(w) for w in t.warnings)
  many = [{"ph": "X", "name": f"k{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1} for i in range(50)]
  t = load(str(_chrome(tmp_path, "many.json", many)))
  assert _spans(t) == [f"k{i}" for i in range(10)] and any("TINYVIZ_MAX_EVENTS=10" in str(w) for w in t.warnings)
  monkeypatch.delenv("TINYVIZ_MAX_EVENTS")
  monkeypatch.setenv("TINYVIZ_MAX_TRACE_MB", "1")
  big = [{"ph": "X", "name": f"k{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1, "args": {"pad": "z" * 1000}} for i in range(3000)]
  t = load(str(_chrome(tmp_path, "big.json", big)))
  assert 0 < len(_spans(t)) < 3000 and _spans(t) == [f"k{i}" for i in range(len(_spans(t)))]
  assert any("TINYVIZ_MAX_TRACE_MB=1" in str(w) for w in t.warnings)

def test_a_bad_limit_value_is_named_and_the_default_used(tmp_path, monkeypatch, capsys):
  monkeypatch.setenv("TINYVIZ_MAX_EVENTS", "lots")
  assert len(load(str(_our_trace(tmp_path, "ok.jsonl", 5))).events) == 5
  assert "TINYVIZ_MAX_EVENTS='lots'" in capsys.readouterr().err

def test_a_complete_last_line_without_newline_is_kept(tmp_path):
  t = load(str(_our_trace(tmp_path, "nonl.jsonl", 3, end_newline=False)))
  assert _spans(t) == ["k0", "k1", "k2"] and not any("truncated" in str(w) for w in t.warnings)
  p = tmp_path / "cut.jsonl"
  p.write_text(_our_trace(tmp_path, "x.jsonl", 3).read_text()[:-10])
  t = load(str(p))
  assert _spans(t) == ["k0", "k1"] and any("truncated last line" in str(w) for w in t.warnings)

# *** big frames on /ingest ***

def _ws(server: Server, path: str, **kw):
  from websockets.sync.client import connect
  sock = socket.create_connection(("127.0.0.1", server.port))
  return connect(f"ws://127.0.0.1:{server.port}{path}", sock=sock, proxy=None, open_timeout=10, max_size=None, **kw)

def test_big_frames_are_sliced_or_refused_and_the_server_keeps_serving(tmp_path):
  from websockets.exceptions import ConnectionClosed
  s = Server(["serve", "--no-browser", "--state-file", str(tmp_path / "state.json")], tmp_path)
  try:
    tok = {"X-Tinyviz-Token": s.token}
    run = {"type": "run", "script": "/x/big.py", "argv": ["big.py"], "start_time": 1.0, "clock_ns": 0, "pid": 7, "version": "t", "mode": "viz"}
    spans = [json.dumps({"type": "span", "track": "CPU", "name": f"k{i % 50}", "start_ns": i * 10, "end_ns": i * 10 + 5,
                         "cat": "kernel", "args": {"kernel": i % 50}}) for i in range(70_000)]
    frame = "[\n" + ",\n".join([json.dumps(run)] + spans) + "\n]"  # ~8 MiB, one event per line as our sender writes
    assert 6 << 20 < len(frame) < 16 << 20
    with _ws(s, "/ingest", additional_headers=tok) as c:
      json.loads(c.recv(timeout=10))
      c.send(frame)
      reply = json.loads(c.recv(timeout=120))
      assert reply["type"] == "ack" and reply["n"] == 70_001
    rid = reply["run"]
    tracks = s.json(f"/api/runs/{rid}/tracks")["tracks"]
    assert [t["name"] for t in tracks] == ["CPU"] and tracks[0]["n_spans"] == 70_000
    with pytest.raises(ConnectionClosed) as e, _ws(s, "/ingest", additional_headers=tok) as c:
      json.loads(c.recv(timeout=10))
      c.send("[" + " " * (17 << 20) + "]")  # past the 16 MiB limit: the connection is closed before it is read
      c.recv(timeout=60)
    assert e.value.rcvd is None or e.value.rcvd.code == 1009  # refused: no reply, the connection closed (1009 when seen)
    assert s.alive() and s.get("/api/runs").status_code == 200
  finally: s.stop()

@pytest.mark.parametrize("viz,profile,want", [("0", "", "None"), ("false", "", "None"), ("off", "", "None"), ("", "", "None"),
                                              ("0.5", "", "stop"), ("-1", "", "viz"), ("", "1", "profile"), ("no", "yes", "profile")])
def test_viz_and_profile_are_read_one_way(tmp_path, viz, profile, want):
  code = ("import tinygrad, tinygrad.tracing as t, sys; r = t.tracer; "
          "print(r.mode if r else None, 'profiler.live' in sys.modules and sys.modules['profiler.live']._sink is not None)")
  out = _py(code, VIZ=viz, PROFILE=profile, TINYVIZ_TRACE_DIR=str(tmp_path))
  if want == "stop":  # one line naming the variable and what it accepts, no traceback
    assert out.returncode == 1 and out.stderr.strip().splitlines() == [out.stderr.strip()] and "VIZ='0.5'" in out.stderr
    assert "accepted" in out.stderr and "Traceback" not in out.stderr
    return
  assert out.returncode == 0, out.stderr
  assert out.stdout.split() == [want, "False"], (out.stdout, out.stderr)

# *** item 4: bounded memory and disk (viz/server/runstore.py) ***

def test_spans_are_held_in_columns_under_64_bytes_each():
  import tracemalloc
  from viz.server.run import Run
  n = 100_000
  objs = [{"type": "span", "track": "CPU", "name": f"k{i % 50}", "start_ns": (i * 7919) % n * 10, "end_ns": (i * 7919) % n * 10 + 5,
           "cat": "kernel", "args": {"kernel": i % 50, "flops": i}} for i in range(n)]  # out of order: sorting is measured too
  for offsets in (list(range(0, n * 100, 100)), None):  # details left in the run's file (live), or held (a file opened)
    tracemalloc.start()
    run = Run(1, "x", "tinyviz", None, live=True)
    base = tracemalloc.get_traced_memory()[0]
    run.add(objs, 1, offsets)
    run.commit()
    track = run.timeline.tracks[0]
    track.max_depth()  # sorted, lanes assigned
    per_span = (tracemalloc.get_traced_memory()[0] - base) / n
    tracemalloc.stop()
    assert per_span <= 64 + (8 if offsets is None else 0), per_span  # held details: a pointer more (the dicts are the caller's)
    if offsets is None:  # and the columns, once sorted, still say which span is which
      orig = next(i for i in range(n) if objs[i]["start_ns"] == 500)
      j = next(j for j in range(n) if track.start[j] == 500)
      assert run.timeline.span_json(track, j)["args"] == objs[orig]["args"]

def _chrome_run(tmp: Path, name: str, n: int) -> Path:
  return _chrome(tmp, name, [{"ph": "X", "name": f"op{i % 7}", "pid": 1, "tid": 1 + i % 2, "ts": i * 3, "dur": 2, "args": {"i": i}} for i in range(n)])

def _answers(s: Server, rid: int) -> list:
  tracks = s.json(f"/api/runs/{rid}/tracks")
  out: list = [tracks, s.json(f"/api/runs/{rid}/contexts")]
  for t in tracks["tracks"]:
    out.append(s.get(f"/api/runs/{rid}/spans", params={"track": str(t["id"])}).content)
    out += [s.json(f"/api/runs/{rid}/spans/{t['id']}/{i}") for i in (0, t["n_spans"] // 2, t["n_spans"] - 1)]
  return out

def test_runs_nobody_views_are_let_go_and_read_again_when_asked(tmp_path):
  a, b = _chrome_run(tmp_path, "a.json", 2000), _chrome_run(tmp_path, "b.json", 3000)
  s = Server(["--no-browser", str(a), str(b)], tmp_path, TINYVIZ_RUN_IDLE_S="0.3")
  try:
    first = [_answers(s, 1), _answers(s, 2)]
    runs = s.json("/api/runs")
    hidden = tmp_path / "hidden.json"
    a.rename(hidden)  # while nobody looks at run 1, its index goes: without its file it cannot come back
    r = _let_go(s, 1)
    assert "cannot be read again" in r.json()["error"] and "a.json" in r.json()["error"]
    assert s.json("/api/runs") == runs  # the list does not change
    hidden.rename(a)
    assert [_answers(s, 1), _answers(s, 2)] == first  # read again on demand: the same answers
    assert s.alive()
  finally: s.stop()

def _let_go(s: Server, rid: int) -> httpx.Response:
  """The answer about run rid once it was let go, its file hidden (asking sparingly: each request is a view)."""
  for _ in range(60):
    time.sleep(1.0)
    if (r := s.get(f"/api/runs/{rid}/tracks")).status_code == 404: return r
  raise AssertionError(f"run {rid} was never let go")

def _ingest_run(s: Server, n: int, name: str) -> int:
  run = {"type": "run", "script": f"/x/{name}.py", "argv": [], "start_time": 1.0, "clock_ns": 0, "pid": n, "version": "t", "mode": "viz"}
  evs = [run] + [{"type": "span", "track": "CPU", "name": f"k{i % 9}", "start_ns": i * 10, "end_ns": i * 10 + 5, "cat": "kernel",
                  "args": {"kernel": i % 9, "n": i}} for i in range(n)] + [{"type": "run_end", "ts_ns": n * 10}]
  with _ws(s, "/ingest", additional_headers={"X-Tinyviz-Token": s.token}) as c:
    json.loads(c.recv(timeout=10))
    for i in range(0, len(evs), 500):
      c.send("[\n" + ",\n".join(json.dumps(e) for e in evs[i:i + 500]) + "\n]")
      reply = json.loads(c.recv(timeout=60))
      assert reply["type"] == "ack", reply
  return reply["run"]

def test_a_finished_live_run_is_let_go_and_read_again_from_the_servers_copy(tmp_path):
  from server_kit import Page
  s = Server(["serve", "--no-browser", "--state-file", str(tmp_path / "st.json")], tmp_path, TINYVIZ_RUN_IDLE_S="0.3")
  try:
    rid = _ingest_run(s, 3000, "live")
    before = _answers(s, rid)
    summary = s.json("/api/runs")
    (copy,) = list((tmp_path / "spool").glob(f"server-*/run{rid}-*"))
    hidden = copy.with_name("hidden")
    copy.rename(hidden)
    _let_go(s, rid)
    hidden.rename(copy)
    assert _answers(s, rid) == before and s.json("/api/runs") == summary
    page = Page(s)  # a page that resumes from the start is sent every message again, numbered as before
    try:
      page.send({"type": "resume", "run": rid, "seq": 0})
      wait_for(lambda: page.counts(rid).get("span") == 3000, what="the resumed messages")
      assert page.last_seq(rid) == summary[0]["seq"]
    finally: page.close()
  finally: s.stop()

def test_the_servers_copies_are_kept_under_the_spool_limit(tmp_path):
  s = Server(["serve", "--no-browser", "--state-file", str(tmp_path / "st.json"), "--spool-mb", "0.4"], tmp_path)
  try:
    ids = [_ingest_run(s, 2500, f"r{i}") for i in range(4)]  # ~230 KB of copy each
    spool = next((tmp_path / "spool").glob("server-*"))
    wait_for(lambda: sum(f.stat().st_size for f in spool.iterdir()) <= 0.4 * 2**20, what="copies deleted")
    left = [r["id"] for r in s.json("/api/runs")]
    assert left and left == ids[-len(left):] and len(left) < 4  # the oldest went first; the newest stays
    assert len(list(spool.iterdir())) == len(left)
    assert s.get(f"/api/runs/{ids[0]}/tracks").status_code == 404
    assert "TINYVIZ_SPOOL_MB" in s.text() and s.json(f"/api/runs/{ids[-1]}/tracks")["tracks"][0]["n_spans"] == 2500
  finally: s.stop()

def test_bad_run_store_settings_are_named(tmp_path):
  out = subprocess.run([sys.executable, "-m", "viz", "serve", "--spool-mb", "-3"], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60)
  assert out.returncode == 2 and "--spool-mb must be a positive number" in out.stderr and "Traceback" not in out.stderr
  out = _py("from viz.server.runstore import setting; print(setting('TINYVIZ_RUN_IDLE_S'), setting('TINYVIZ_RUNS_LOADED'))",
            TINYVIZ_RUN_IDLE_S="soon", TINYVIZ_RUNS_LOADED="-1")
  assert out.returncode == 0 and out.stdout.split() == ["300.0", "3.0"], out.stderr
  assert "TINYVIZ_RUN_IDLE_S='soon'" in out.stderr and "TINYVIZ_RUNS_LOADED='-1'" in out.stderr

# *** item 5: big messages; item 10: deep nesting on /ws, an unwritable TINYVIZ_TRACE ***

def test_big_and_deep_page_messages_get_an_error_reply_and_the_socket_stays(tmp_path):
  s = Server(["serve", "--no-browser", "--state-file", str(tmp_path / "st.json")], tmp_path)
  try:
    with _ws(s, "/ws", origin=f"http://127.0.0.1:{s.port}", additional_headers={"X-Tinyviz-Token": s.token}) as page:
      assert json.loads(page.recv(timeout=10))["type"] == "runs"
      for bad, why in (("[" * 100_000, "dropped unread"), ("{\"a\":" * 12_000, "not JSON"), (" " * (8 << 20), "dropped unread")):
        page.send(bad)
        reply = json.loads(page.recv(timeout=30))
        assert reply["type"] == "error" and why in reply["message"], reply
  finally: s.stop()

def test_a_big_frame_in_one_line_is_taken_in_whole(tmp_path):
  s = Server(["serve", "--no-browser", "--state-file", str(tmp_path / "st.json")], tmp_path)
  try:
    run = {"type": "run", "script": "/x/one.py", "argv": [], "start_time": 1.0, "clock_ns": 0, "pid": 3, "version": "t", "mode": "viz"}
    evs = [run] + [{"type": "span", "track": "CPU", "name": f"k{i % 9}", "start_ns": i, "end_ns": i + 1, "cat": "kernel", "args": {"n": i}}
                   for i in range(40_000)]
    frame = json.dumps(evs)  # not one event per line: taken element by element
    assert len(frame) > 2 << 20
    with _ws(s, "/ingest", additional_headers={"X-Tinyviz-Token": s.token}) as c:
      json.loads(c.recv(timeout=10))
      c.send(frame)
      reply = json.loads(c.recv(timeout=120))
      assert reply["type"] == "ack" and reply["n"] == 40_001, reply
      c.send(frame[:-1] + ",]")
      reply = json.loads(c.recv(timeout=120))
      assert reply["type"] == "error" and "not JSON" in reply["message"], reply
    assert s.json(f"/api/runs/{reply.get('run') or 1}/tracks")["tracks"][0]["n_spans"] == 40_000
    assert s.json("/api/runs/1/spans/0/7")["args"] == {"n": 7}
  finally: s.stop()

def test_an_unwritable_trace_path_is_named_and_the_script_runs(tmp_path):
  blocker = tmp_path / "a-file"
  blocker.write_text("")
  out = _py("from tinygrad import Tensor; print((Tensor([1.0, 2.0]) * 3).sum().item())", VIZ="-1", TINYVIZ_TRACE=str(blocker / "t.jsonl"))
  assert out.returncode == 0 and out.stdout.strip() == "9.0", out.stderr
  assert f"cannot write trace {blocker / 't.jsonl'}" in out.stderr and "None" not in out.stderr and "Traceback" not in out.stderr

def test_a_tensor_past_32_bit_indices_is_a_clear_error():
  out = _py("from tinygrad import Tensor, dtypes\n"
            "try: (Tensor.empty(2**31 + 8, dtype=dtypes.uint8) + 1).realize()\n"
            "except ValueError as e: print('refused:', e)\n"
            "print((Tensor.ones(3) + 1).tolist())")  # empty: nothing is allocated before the kernel is refused
  assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
  assert "refused: a kernel over 2,147,483,656 elements" in out.stdout and "32 bits" in out.stdout and "[2.0, 2.0, 2.0]" in out.stdout

def test_a_live_time_beyond_64_bits_costs_one_event_and_the_run_keeps_answering(tmp_path):
  s = Server(["serve", "--no-browser", "--state-file", str(tmp_path / "st.json")], tmp_path)
  try:
    run = {"type": "run", "script": "/x/epoch.py", "argv": [], "start_time": 1.0, "clock_ns": 0, "pid": 5, "version": "t", "mode": "viz"}
    def span(name: str, start: int) -> dict:
      return {"type": "span", "track": "CPU", "name": name, "start_ns": start, "end_ns": start + 5, "cat": "kernel", "args": {}}
    with _ws(s, "/ingest", additional_headers={"X-Tinyviz-Token": s.token}) as c:
      json.loads(c.recv(timeout=10))
      c.send(json.dumps([run, span("a", 10), span("huge", 2**64), span("epoch", EPOCH_NS * 1000), span("b", 20)]))
      reply = json.loads(c.recv(timeout=30))
      assert reply["type"] == "ack" and reply["n"] == 5, reply
      c.send(json.dumps([span("c", 30)]))
      assert json.loads(c.recv(timeout=30))["type"] == "ack"  # the connection stays
    rid = reply["run"]
    summary = next(r for r in s.json("/api/runs") if r["id"] == rid)
    assert len(summary["warnings"]) == 2 and all("64 bits" in w["message"] for w in summary["warnings"]), summary["warnings"]
    tracks = s.json(f"/api/runs/{rid}/tracks")["tracks"]
    assert tracks[0]["n_spans"] == 3 and s.get(f"/api/runs/{rid}/spans", params={"track": "0"}).status_code == 200
  finally: s.stop()
