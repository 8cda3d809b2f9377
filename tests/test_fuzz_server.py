"""Issue 17's fuzz test, as a hostile or careless user: seeded, generated inputs of every kind (damaged trace files:
ours, Chrome JSON, gzip; /ws messages; /ingest frames; API query parameters; the viewer's env vars) fed to the loader,
`tinyviz summary` and the live server (real, on 127.0.0.1). What must hold: no traceback anywhere, the server never
exits, no endpoint ever answers 500 (every bad input gets a 4xx or an `error` reply naming it)."""
from __future__ import annotations
import contextlib, gzip, io, json, random, socket, subprocess, sys
from pathlib import Path
from typing import Any, Iterator
import httpx
import pytest
from profiler.chrome import write_chrome
from profiler.load import load, parse
from profiler.tracefile import TraceError
from server_kit import ROOT, Server, env

FIXTURES = Path(__file__).parent / "fixtures"
SEED = 17
N_FILES = 100        # of each kind: ours, Chrome, gzip (of either)
N_SERVED = 100      # of the runs they make, those whose every endpoint is asked
N_FRAMES = 300       # /ingest frames over 30 connections
N_MESSAGES = 300     # /ws messages
N_QUERIES = 300      # API requests with odd paths and parameters

HUGE = "9" * 5000  # past Python's 4,300-digit int limit; placed as raw JSON text
DEEP = "[" * 3000 + "]" * 3000
NASTY: list[Any] = [None, True, False, -1, 0, 1, 2**31, 2**63, 2**64, -2**70, 1e308, -1e308, 0.5, float("nan"), float("inf"),
                    "", "\ud800", "x" * 3000, "²", "9" * 30, [], {}, [None], {"kernel": -5}, {"a": {"b": [1, {}]}}, "<HUGE>", "<DEEP>"]

def _raw(obj: Any) -> str:
  """JSON text of obj, with the markers replaced by what json.dumps cannot write (a 5000-digit number, deep nesting)."""
  return json.dumps(obj).replace('"<HUGE>"', HUGE).replace('"<DEEP>"', DEEP)

def _mutate_obj(r: random.Random, obj: Any) -> Any:
  """obj with one value somewhere inside replaced by a nasty one, a key dropped or added, or its type changed."""
  if isinstance(obj, dict) and obj:
    obj = dict(obj)
    k = r.choice(list(obj))
    what = r.random()
    if what < 0.6: obj[k] = r.choice(NASTY) if r.random() < 0.7 else _mutate_obj(r, obj[k])
    elif what < 0.8: del obj[k]
    else: obj[r.choice(["type", "ph", "args", "ts", "id", "src", "zz"])] = r.choice(NASTY)
    return obj
  if isinstance(obj, list) and obj:
    obj = list(obj)
    i = r.randrange(len(obj))
    obj[i] = r.choice(NASTY) if r.random() < 0.5 else _mutate_obj(r, obj[i])
    return obj
  return r.choice(NASTY)

def _damage_bytes(r: random.Random, data: bytes) -> bytes:
  k = r.randrange(len(data))
  kind = r.randrange(4)
  if kind == 0: return data[:k]
  if kind == 1: return data[:k] + bytes([data[k] ^ (1 << r.randrange(8))]) + data[k + 1:]
  if kind == 2: return data[:k] + data[k + r.randrange(1, 300):]
  return data[:k] + r.randbytes(r.randrange(1, 40)) + data[k:]

# *** the seeds: a trace of the real engine, a PyTorch trace ***

@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> dict[str, Any]:
  d = tmp_path_factory.mktemp("seeds")
  path = str(d / "t.tinyviz.jsonl")
  # in a process of its own: recording here would fill this process's program cache, and later tests that expect to
  # see their kernels compiled (and recorded) would not
  code = ("from tinygrad import Tensor\nfrom tinygrad.helpers import profile_marker\n"
          "a = (Tensor.arange(8) * 2 + 1).realize()\n"
          "for i in range(3):\n  profile_marker(f'step {i}')\n  (a * a).sum().realize()\n")
  res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env(VIZ="-1", TINYVIZ_TRACE=path), capture_output=True, text=True, timeout=120)
  assert res.returncode == 0, res.stderr
  ours = Path(path).read_text().splitlines()
  write_chrome(parse(Path(path).read_bytes()).events, str(d / "export.json"))
  chrome = [json.loads((FIXTURES / "torch_cpu_trace.json").read_text()), json.loads((d / "export.json").read_text())]
  return {"ours": ours, "chrome": chrome}

def _our_file(r: random.Random, lines: list[str]) -> bytes:
  lines = list(lines)
  for _ in range(r.randrange(1, 6)):
    i = r.randrange(1, len(lines))
    try: lines[i] = _raw(_mutate_obj(r, json.loads(lines[i])))
    except (ValueError, RecursionError): pass  # mutated already into what json cannot read back (or nested too deep): it stays so
  text = "\n".join(lines) + "\n"
  return _damage_bytes(r, text.encode()) if r.random() < 0.3 else text.encode()

def _chrome_file(r: random.Random, docs: list[dict]) -> bytes:
  doc = json.loads(json.dumps(r.choice(docs)))
  evs = doc["traceEvents"]
  for _ in range(r.randrange(1, 8)):
    i = r.randrange(len(evs))
    evs[i] = _mutate_obj(r, evs[i])
  if r.random() < 0.1: doc = _mutate_obj(r, doc)
  data = _raw(doc if r.random() < 0.8 else evs).encode()
  return _damage_bytes(r, data) if r.random() < 0.3 else data

def _files(seeds: dict[str, Any], d: Path) -> list[Path]:
  r = random.Random(SEED)
  out = []
  for i in range(N_FILES):
    for kind in ("jsonl", "json", "gz"):
      if kind == "jsonl": data, name = _our_file(r, seeds["ours"]), f"f{i}.tinyviz.jsonl"
      elif kind == "json": data, name = _chrome_file(r, seeds["chrome"]), f"f{i}.json"
      else:
        plain = _our_file(r, seeds["ours"]) if r.random() < 0.5 else _chrome_file(r, seeds["chrome"])
        data, name = gzip.compress(plain), f"f{i}.json.gz"
        if r.random() < 0.3: data = _damage_bytes(r, data)
      (p := d / name).write_bytes(data)
      out.append(p)
  return out

def _no_500(s: Server, rid: int, r: random.Random) -> int:
  """Every endpoint of one run, the way the page asks them; returns how many requests were made."""
  n, bad = 0, []
  def get(path: str, **params: Any) -> httpx.Response:
    nonlocal n
    n += 1
    resp = s.get(path, params=params)
    if resp.status_code >= 500: bad.append((path, params, resp.status_code, resp.text[:300]))
    return resp
  base = f"/api/runs/{rid}"
  ctx = get(f"{base}/contexts")
  tracks = get(f"{base}/tracks")
  get(f"{base}/flows")
  get(f"{base}/file")
  if ctx.status_code == 200:
    c = ctx.json()
    for k in c["kernels"][:3]:
      get(f"{base}/kernels/{k['id']}")
      get(f"{base}/kernels/{k['id']}/passes")
    rws = [rw for cx in c["contexts"] for rw in cx["rewrites"]]
    for rw in r.sample(rws, min(3, len(rws))):
      get(f"{base}/rewrites/{rw['id']}/step/0")
      get(f"{base}/rewrites/{rw['id']}/step/{rw['n_matches']}")
      get(f"{base}/uops/{rw['output']}")
  if tracks.status_code == 200:
    t = tracks.json()
    for tr in t["tracks"]:
      get(f"{base}/spans", track=str(tr["id"]))
      get(f"{base}/spans", track=tr["name"], start=str(r.uniform(-1e3, 1e9)), end=str(r.uniform(0, 1e12)))
      if tr["n_spans"]: get(f"{base}/spans/{tr['id']}/{r.randrange(tr['n_spans'])}")
    for c in t["counters"]: get(f"{base}/counters/{c['id']}")
  assert not bad, bad
  return n

def _clean_log(s: Server) -> None:
  text = s.log_path.read_text()
  assert "Traceback" not in text and "Exception in ASGI" not in text, text[-4000:]

def test_damaged_files_loader_summary_and_server(seeds, tmp_path):
  from profiler.summary import main as summary_main
  files = _files(seeds, tmp_path)
  n_ok = 0
  for p in files:  # the loader: events and warnings, or a TraceError; nothing else
    try: load(str(p)); n_ok += 1
    except TraceError: pass
  for p in files:  # `tinyviz summary`, in this process: an exit status, never an exception
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = summary_main([str(p)])
    assert rc in (0, 1), (p, rc, err.getvalue()[-500:])
  for p in random.Random(SEED).sample(files, 4):  # and as the real command
    res = subprocess.run([sys.executable, "-m", "viz", "summary", str(p)], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60)
    assert res.returncode in (0, 1) and "Traceback" not in res.stderr, (p, res.stderr[-2000:])
  print(f"fuzz: {len(files)} files, {n_ok} readable", file=sys.stderr, flush=True)
  assert n_ok > len(files) // 3  # most damage leaves a readable trace: the fuzz reaches the indexing, not only the parser
  s = Server(["--no-browser", *map(str, files)], tmp_path)
  try:
    runs = s.json("/api/runs")
    assert len(runs) >= n_ok
    r = random.Random(SEED)
    sample = r.sample(runs, min(N_SERVED, len(runs)))
    n = sum(_no_500(s, run["id"], r) for run in sample)
    assert n > 3 * len(sample)
    assert s.alive()
  finally: s.stop()
  _clean_log(s)

# *** the live server: /ingest frames, /ws messages, query parameters ***

def _ws(s: Server, path: str, **kw: Any):
  from websockets.sync.client import connect
  sock = socket.create_connection(("127.0.0.1", s.port))
  return connect(f"ws://127.0.0.1:{s.port}{path}", sock=sock, proxy=None, open_timeout=10, max_size=None,
                 additional_headers={"X-Tinyviz-Token": s.token}, **kw)

def _frames(r: random.Random, lines: list[str]) -> Iterator[str | bytes]:
  """What a broken or hostile script sends after its `run` event: mutated batches of real events, and worse."""
  events = [json.loads(line) for line in lines[1:]]
  for _ in range(N_FRAMES // 30 - 1):
    what = r.random()
    if what < 0.6:
      batch = [_mutate_obj(r, e) if r.random() < 0.3 else e for e in r.sample(events, min(len(events), r.randrange(1, 60)))]
      yield "[\n" + ",\n".join(_raw(e) for e in batch) + "\n]" if r.random() < 0.5 else _raw(batch)
    elif what < 0.7: yield _raw(r.choice(NASTY))
    elif what < 0.8: yield r.randbytes(r.randrange(1, 100))
    elif what < 0.9: yield _damage_bytes(r, _raw(r.sample(events, 5)).encode()).decode("utf-8", "replace")
    else: yield "[" + ",".join(_raw(r.choice(NASTY)) for _ in range(r.randrange(1, 20))) + "]"

def test_ingest_frames_ws_messages_and_queries(seeds, tmp_path):
  s = Server(["serve", "--no-browser", "--state-file", str(tmp_path / "state.json")], tmp_path)
  r = random.Random(SEED)
  lines = seeds["ours"]
  run_event = next(json.loads(line) for line in lines if json.loads(line)["type"] == "run")
  try:
    n_frames = n_errors = 0
    for c in range(30):
      with _ws(s, "/ingest") as ws:
        json.loads(ws.recv(timeout=10))
        first = run_event if c % 5 else _mutate_obj(r, run_event)
        ws.send(_raw([first, *[json.loads(x) for x in lines[2:8]]]))
        for frame in _frames(r, lines):
          ws.send(frame)
          reply = json.loads(ws.recv(timeout=30))
          n_frames += 1
          assert reply["type"] in ("ack", "error"), reply
          n_errors += reply["type"] == "error"
          if reply["type"] == "error": assert reply["message"], reply
    assert n_frames >= N_FRAMES * 0.8 and 0 < n_errors < n_frames
    runs = s.json("/api/runs")
    assert len(runs) >= 20
    for run in runs: _no_500(s, run["id"], r)

    # a page's messages: each is a `resume` that fits (no reply) or gets an `error` reply; the socket stays open
    with _ws(s, "/ws", origin=f"http://127.0.0.1:{s.port}") as page:
      seqs = {run["id"]: run["seq"] for run in s.json("/api/runs")}
      want_errors = 0
      for i in range(N_MESSAGES):
        rid = r.choice([*seqs, 0, -1, 10**12])
        msg: Any = {"type": "resume", "run": rid, "seq": r.choice([0, 1, seqs.get(rid, 0), -1, 10**20])}
        what = r.random()
        if what < 0.4: msg = _mutate_obj(r, msg)
        elif what < 0.5: msg = r.choice(NASTY)
        text: str | bytes = _raw(msg)
        if what > 0.9: text = r.choice([r.randbytes(20), "[" * 100_000, "{" * 60_000, " " * 70_000, "\ud800".encode("utf-8", "surrogatepass"), "resume"])
        valid = isinstance(text, str) and len(text) < 65536 and _valid_resume(text, seqs)
        want_errors += not valid
        page.send(text)
      page.send(json.dumps({"type": "sentinel"}))
      got = 0
      while True:
        m = json.loads(page.recv(timeout=30))
        if m.get("type") == "error":
          got += 1
          if "sentinel" in m["message"]: break
      assert got == want_errors + 1, (got, want_errors)

    # odd paths and query parameters
    odd = ["", "0", "-1", "1e3", "nan", "inf", "-inf", "²", "١", HUGE, "9" * 30, "%00", "..", "1.5", " 1", "0x10", "\ud800"]
    rids = [str(x["id"]) for x in runs] + odd
    bad = []
    for _ in range(N_QUERIES):
      rid, v = r.choice(rids), lambda: r.choice(odd + ["1", "2", "CPU", "HOST"])
      path = r.choice([f"/api/runs/{rid}/spans", f"/api/runs/{rid}/spans/{v()}/{v()}", f"/api/runs/{rid}/tracks",
                       f"/api/runs/{rid}/uops/{v()}", f"/api/runs/{rid}/rewrites/{v()}/step/{v()}", f"/api/runs/{rid}/kernels/{v()}",
                       f"/api/runs/{rid}/counters/{v()}", "/api/compare", f"/api/runs/{rid}/kernels/{v()}/passes", f"/api/runs/{rid}/file"])
      params = {k: v() for k in r.sample(["track", "start", "end", "a", "b", "zz"], r.randrange(0, 4))}
      try: resp = s.get(path.encode("utf-8", "surrogatepass").decode("utf-8", "replace"), params=params)
      except (httpx.InvalidURL, UnicodeEncodeError): continue
      except Exception as e: raise AssertionError((path[:200], {k: v[:50] for k, v in params.items()}, s.alive(), s.text()[-3000:])) from e
      if resp.status_code >= 500: bad.append((path[:80], params, resp.status_code))
      elif resp.status_code >= 400: assert "error" in resp.json(), (path, resp.text[:200])
    assert not bad, bad[:10]
    assert s.alive()
  finally: s.stop()
  _clean_log(s)

def _valid_resume(text: str, seqs: dict[int, int]) -> bool:
  try: m = json.loads(text)
  except (ValueError, RecursionError): return False
  return (isinstance(m, dict) and m.get("type") == "resume" and type(m.get("run")) is int and type(m.get("seq")) is int
          and m["run"] in seqs and 0 <= m["seq"] <= seqs[m["run"]])

# *** the viewer's settings ***

ENV_VARS = ["TINYVIZ_MAX_TRACE_MB", "TINYVIZ_MAX_LINE_MB", "TINYVIZ_MAX_EVENTS", "TINYVIZ_RUN_IDLE_S", "TINYVIZ_RUNS_LOADED",
            "TINYVIZ_SPOOL_MB", "TINYVIZ_EXIT_WAIT", "TINYVIZ_IDLE_EXIT"]
ENV_VALUES = ["", "0", "-1", "abc", "1e400", "nan", "inf", "-inf", HUGE, "9" * 30, " 3", "3 ", "0x10", "1_000", "²", "1.5", "\t", "1e-300"]

def test_env_settings(seeds, tmp_path, monkeypatch):
  from viz.server.runstore import DEFAULTS, setting
  from profiler.limits import limit
  good = tmp_path / "good.tinyviz.jsonl"
  good.write_text("\n".join(seeds["ours"]) + "\n")
  r = random.Random(SEED)
  n_all = len(load(str(good)).events)
  for _ in range(300):  # read per call: a long-lived process sees a change
    name, value = r.choice(ENV_VARS[:6]), r.choice(ENV_VALUES)
    monkeypatch.setenv(name, value)
    if name in DEFAULTS: assert setting(name) > 0
    else: assert limit(name) > 0
    if name.startswith("TINYVIZ_MAX"):
      assert 0 < len(load(str(good)).events) <= n_all
    monkeypatch.delenv(name)
  for i in range(3):  # the real commands, a handful of bad values at once
    bad = {k: r.choice(ENV_VALUES) for k in r.sample(ENV_VARS, 4)}
    res = subprocess.run([sys.executable, "-m", "viz", "summary", str(good)], cwd=ROOT, env=env(**bad), capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "Traceback" not in res.stderr, (bad, res.stderr[-2000:])
    s = Server(["--no-browser", str(good)], tmp_path, **bad)
    try:
      assert s.json("/api/runs")[0]["n_events"] > 0
      assert s.get("/api/runs/1/tracks").status_code == 200
    finally: s.stop()
    _clean_log(s)

def test_span_args_with_a_huge_int_read_back(tmp_path):
  """A live run's span args are read back from the server's copy of the trace (Run.read_args, the /spans/T/I
  endpoint's source): an int there past Python's 4,300-digit limit (the fuzz's /ingest frames got one in) comes back
  as a number, not an exception (it was a 500 and a reset connection)."""
  from viz.server.run import Run
  path = tmp_path / "copy.tinyviz.jsonl"
  head = '{"type":"header","format":"tinyviz-trace","version":1}\n'
  span = '{"type":"span","track":"HOST","name":"big","start_ns":10,"end_ns":20,"cat":"user","args":{"n":' + HUGE + ',"ok":1}}\n'
  path.write_text(head + span)
  args = Run(1, "copy", "tinyviz", str(path), live=True).read_args(len(head))
  assert args["ok"] == 1 and args["n"] == float("inf"), args
