"""Issue 17's figures, in one run, against the real server (and the real reader):
1. keep-alive request latency (median; goal <= 5 ms) and the delay an 8 MiB /ingest frame causes other requests
   (the slowest GET meanwhile, from a process of its own; goal <= 100 ms).
2. server RSS after 1 and after 14 live runs streamed in one after another (goal: the 14th at most 1.5x the 1st).
   Each run: uops, a codegen context with a rewrite per kernel, kernel records, kernel-run spans, as VIZ=1 sends them
   (1 MiB frames, one event per line). RSS is read from /proc once each run has ended and the server had
   TINYVIZ_RUN_IDLE_S (--idle, default 2 s here; 300 s by default) to let go of runs nobody looks at.
3. peak RSS and time opening a Chrome trace of --chrome-mb MB (default 1024: 1 GiB; PyTorch-shaped, bench/load_bench.py's
   generator) as `tinyviz FILE` does (read + index into a server run), against `json.load` of the same file, each in a
   fresh process (goal: ours <= 3 GB).
  python bench/hardening_bench.py [--requests N] [--run-events N] [--runs N] [--idle S] [--chrome-mb MB] [--quick]
Nothing is asserted; --quick is the smoke size."""
from __future__ import annotations
import argparse, json, os, random, socket, statistics, subprocess, sys, tempfile, time
from pathlib import Path
import httpx

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
from load_bench import write_chrome_trace  # noqa: E402
from server_bench import ServerProc  # noqa: E402

def keepalive(srv: ServerProc, n: int) -> None:
  base, hdr = f"http://127.0.0.1:{srv.port}", {"X-Tinyviz-Token": srv.token}
  with httpx.Client(base_url=base, headers=hdr, trust_env=False) as kept:
    kept.get("/api/runs")
    lat = []
    for _ in range(n):
      t = time.perf_counter(); kept.get("/api/runs").raise_for_status(); lat.append(time.perf_counter() - t)
    med = statistics.median(lat)
    print(f"1. kept-alive GET /api/runs, {n}: median {med * 1e3:.2f} ms, p90 {sorted(lat)[int(n * 0.9)] * 1e3:.2f} ms (goal: median <= 5 ms)", flush=True)
    print("   " + frame_delay(srv, med), flush=True)

PROBE = """
import json, sys, time, httpx
c = httpx.Client(base_url=sys.argv[1], headers={"X-Tinyviz-Token": sys.argv[2]}, trust_env=False)
c.get("/api/runs")
print("ready", flush=True)
lat = []
while not lat or sys.stdin.readline() == "more\\n":
  t = time.perf_counter(); c.get("/api/runs"); lat.append(time.perf_counter() - t)
  print("ok", flush=True)
print(json.dumps(lat))
"""

def frame_delay(srv: ServerProc, idle_median: float) -> str:
  """The slowest GET /api/runs, from a process of its own (so that this one's sending does not count), while an
  8.5 MiB ingest frame (70k spans, one per line as our sender writes) is taken in."""
  from websockets.sync.client import connect
  run = {"type": "run", "script": "/x/big.py", "argv": ["big.py"], "start_time": 1.0, "clock_ns": 0, "pid": 7, "version": "b", "mode": "viz"}
  spans = [json.dumps({"type": "span", "track": "CPU", "name": f"k{i % 50}", "start_ns": i * 10, "end_ns": i * 10 + 5,
                       "cat": "kernel", "args": {"kernel": i % 50}}) for i in range(70_000)]
  frame = "[\n" + ",\n".join([json.dumps(run)] + spans) + "\n]"
  probe = subprocess.Popen([sys.executable, "-c", PROBE, f"http://127.0.0.1:{srv.port}", srv.token], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True, bufsize=1)
  assert probe.stdin is not None and probe.stdout is not None
  probe.stdout.readline()
  sock = socket.create_connection(("127.0.0.1", srv.port))
  with connect(f"ws://127.0.0.1:{srv.port}/ingest", sock=sock, proxy=None, max_size=None,
               additional_headers={"X-Tinyviz-Token": srv.token}) as ws:
    ws.recv(timeout=10)
    import threading
    done = threading.Event()
    def pump() -> None:  # one GET at a time, back to back, until the frame is acked
      while True:
        probe.stdout.readline()
        probe.stdin.write("more\n" if not done.is_set() else "stop\n")
        if done.is_set(): return
    th = threading.Thread(target=pump); th.start()
    t = time.perf_counter(); ws.send(frame); ws.recv(timeout=600); took = time.perf_counter() - t
    done.set(); th.join()
  lat = json.loads(probe.stdout.readline()); probe.wait()
  return (f"{len(frame) / 2**20:.1f} MiB ingest frame taken in {took * 1e3:.0f} ms; meanwhile, from another process, the slowest "
          f"of {len(lat)} GETs {max(lat) * 1e3:.0f} ms (median {statistics.median(lat) * 1e3:.1f} ms) against {idle_median * 1e3:.2f} ms "
          f"idle (goal: slowest <= 100 ms)")

def run_events(n: int, pid: int, seed: int = 0) -> list[str]:
  """About n events of one VIZ=1 run, one JSON line each."""
  rng = random.Random(seed)
  out = [json.dumps({"type": "run", "script": f"/bench/run{pid}.py", "argv": [], "start_time": 1.7e9, "clock_ns": 0, "pid": pid,
                     "version": "bench", "mode": "viz"})]
  uid, kid, t = 0, 0, 1000
  while len(out) < n:
    kid += 1
    first = uid + 1
    for j in range(20):  # a kernel's graph: a chain of 20 uops
      uid += 1
      out.append(json.dumps({"type": "uop", "id": uid, "op": rng.choice(["ADD", "MUL", "LOAD", "STORE", "RANGE"]), "dtype": "dtypes.float",
                             "arg": f"({j}, {kid})", "src": [uid - 1] if j else []}))
    out.append(json.dumps({"type": "context_begin", "id": kid, "parent": None, "kind": "kernel", "name": f"E_{kid}", "loc": ["bench.py", kid],
                           "ts_ns": t}))
    out.append(json.dumps({"type": "rewrite", "id": kid, "ctx": kid, "name": "lower", "loc": ["bench.py", 1], "input": first, "output": uid,
                           "matches": [[None, first + m, first + m + 1] for m in range(10)], "start_ns": t, "dur_ns": 500}))
    out.append(json.dumps({"type": "kernel", "id": kid, "name": f"E_{kid}", "device": "CPU", "src": "void k(float* a) {\n" + "  a[0] += 1;\n" * 20 + "}",
                           "global_size": [64, 1, 1], "local_size": [1, 1, 1], "flops": 64, "bytes": 256, "ctx": kid, "uops": []}))
    out.append(json.dumps({"type": "context_end", "id": kid, "ts_ns": t + 1000}))
    for _ in range(30):  # its runs
      d = rng.randrange(500, 5000)
      out.append(json.dumps({"type": "span", "track": "CPU", "name": f"E_{kid}", "start_ns": t, "end_ns": t + d, "cat": "kernel",
                             "args": {"kernel": kid}}))
      t += d + 100
  out.append(json.dumps({"type": "run_end", "ts_ns": t}))
  return out

def rss_mb(pid: int) -> float:
  with open(f"/proc/{pid}/status") as f:
    return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024

def stream_run(srv: ServerProc, lines: list[str]) -> None:
  from websockets.sync.client import connect
  sock = socket.create_connection(("127.0.0.1", srv.port))
  with connect(f"ws://127.0.0.1:{srv.port}/ingest", sock=sock, proxy=None, max_size=None,
               additional_headers={"X-Tinyviz-Token": srv.token}) as ws:
    ws.recv(timeout=30)
    i = 0
    while i < len(lines):  # 1 MiB frames, as the engine's sender cuts them
      j, size = i, 0
      while j < len(lines) and size < 1 << 20: size += len(lines[j]) + 2; j += 1
      ws.send("[\n" + ",\n".join(lines[i:j]) + "\n]")
      if json.loads(ws.recv(timeout=300))["type"] != "ack": raise SystemExit("a frame was refused")
      i = j

def memory_over_runs(tmp: Path, n_runs: int, n_events: int, idle: float) -> None:
  os.environ["TINYVIZ_RUN_IDLE_S"] = str(idle)  # the server inherits it (bench/server_bench.py's env)
  srv = ServerProc(tmp, [])
  try:
    pid = srv.proc.pid
    start = rss_mb(pid)
    lines = run_events(n_events, 1)
    rss = []
    for r in range(n_runs):
      stream_run(srv, [lines[0].replace('"pid": 1', f'"pid": {r + 1}'), *lines[1:]])
      time.sleep(idle + 1.5)  # nobody looks: the server lets the run go after `idle`
      rss.append(rss_mb(pid))
    with httpx.Client(base_url=f"http://127.0.0.1:{srv.port}", headers={"X-Tinyviz-Token": srv.token}, trust_env=False, timeout=300) as c:
      t = time.perf_counter(); c.get("/api/runs/1/tracks").raise_for_status(); back = time.perf_counter() - t
    spool = sum(f.stat().st_size for f in (tmp / "spool").rglob("*.jsonl"))
    print(f"2. server RSS, {n_runs} live runs of {len(lines)} events (TINYVIZ_RUN_IDLE_S={idle:g}): {start:.0f} MB at start, "
          f"{rss[0]:.0f} MB after the 1st, {rss[-1]:.0f} MB after the last ({n_runs}): {rss[-1] / rss[0]:.2f}x (goal <= 1.5x); "
          f"max {max(rss):.0f} MB; copies on disk {spool / 2**20:.0f} MB; run 1 read again on demand in {back * 1e3:.0f} ms", flush=True)
    print("   RSS after each run (MB): " + " ".join(f"{x:.0f}" for x in rss), flush=True)
  finally:
    srv.stop()
    os.environ.pop("TINYVIZ_RUN_IDLE_S", None)

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
{imports}
t = time.perf_counter()
{work}
print(json.dumps({{"s": time.perf_counter() - t, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "n": n}}))
"""
OURS = ("from profiler.load import load\nfrom viz.server.run import Run",
        "trace = load(PATH); run = Run.from_trace(1, PATH, trace); del trace; n = sum(len(t) for t in run.timeline.tracks)")
PEER = ("", "d = json.load(open(PATH, 'rb')); n = len(d['traceEvents'])")

def child(imports: str, work: str, path: Path) -> dict[str, float]:
  code = CHILD.format(root=str(ROOT), imports=imports, work=work.replace("PATH", repr(str(path))))
  p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=3600)
  if p.returncode != 0: return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"}  # type: ignore[dict-item]
  return json.loads(p.stdout.strip().splitlines()[-1])

def open_big_chrome(tmp: Path, mb: float) -> None:
  probe = tmp / "probe.json"
  write_chrome_trace(probe, 2000)
  n = max(1000, int(2000 * mb * 2**20 / probe.stat().st_size))
  path = tmp / "big.json"
  t = time.perf_counter()
  write_chrome_trace(path, n)
  size = path.stat().st_size / 2**20
  print(f"3. a {size:.0f} MB Chrome trace ({n} spans, written in {time.perf_counter() - t:.0f} s):", flush=True)
  ours, peer = child(*OURS, path), child(*PEER, path)
  def fmt(r: dict) -> str: return f"failed: {r['error']}" if "error" in r else f"peak RSS {r['rss_mb']:.0f} MB, {r['s']:.1f} s"
  print(f"   tinyviz (read + index, {ours.get('n', 0)} spans): {fmt(ours)}; json.load: {fmt(peer)} (goal: ours <= 3 GB)", flush=True)
  if "error" not in ours and "error" not in peer:
    print(f"   ours/json.load: RSS {ours['rss_mb'] / peer['rss_mb']:.2f}x, time {ours['s'] / peer['s']:.2f}x", flush=True)
  path.unlink()

def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--requests", type=int, default=200)
  ap.add_argument("--run-events", type=int, default=200_000)
  ap.add_argument("--runs", type=int, default=14)
  ap.add_argument("--idle", type=float, default=2.0, help="TINYVIZ_RUN_IDLE_S for part 2")
  ap.add_argument("--chrome-mb", type=float, default=1024)
  ap.add_argument("--quick", action="store_true", help="the smoke size: 10 requests, 3 runs of 3k events, an 8 MB Chrome trace")
  a = ap.parse_args()
  if a.quick: a.requests, a.run_events, a.runs, a.idle, a.chrome_mb = 10, 3000, 3, 0.5, 8
  with tempfile.TemporaryDirectory() as d:
    srv = ServerProc(Path(d), [])
    try: keepalive(srv, a.requests)
    finally: srv.stop()
  with tempfile.TemporaryDirectory() as d: memory_over_runs(Path(d), a.runs, a.run_events, a.idle)
  with tempfile.TemporaryDirectory() as d: open_big_chrome(Path(d), a.chrome_mb)

if __name__ == "__main__": main()
