"""The real viz server under load, in one run:
1. request latency on a kept-alive connection, against a new connection per request (which Nagle's algorithm +
   delayed ACK never hit), interleaved. Issue 17 goal: kept-alive median <= 5 ms.
2. the delay an 8 MiB /ingest frame (70k spans, one per line as our sender writes) causes other requests: the
   slowest GET /api/runs while the frame is taken in, against the median with no frame. Goal <= 100 ms.
  python bench/keepalive_bench.py [N]
"""
from __future__ import annotations
import json, socket, statistics, sys, tempfile, threading, time
from pathlib import Path
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_bench import ServerProc  # noqa: E402

def main() -> None:
  n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
  with tempfile.TemporaryDirectory() as d:
    srv = ServerProc(Path(d), [])
    try:
      base, hdr = f"http://127.0.0.1:{srv.port}", {"X-Tinyviz-Token": srv.token}
      kept = httpx.Client(base_url=base, headers=hdr, trust_env=False)
      kept.get("/api/runs")  # connect once
      ka, fresh = [], []
      for _ in range(n):
        t = time.perf_counter(); r = kept.get("/api/runs"); ka.append(time.perf_counter() - t); r.raise_for_status()
        with httpx.Client(base_url=base, headers=hdr, trust_env=False) as c:
          t = time.perf_counter(); r = c.get("/api/runs"); fresh.append(time.perf_counter() - t); r.raise_for_status()
      a, b = statistics.median(ka), statistics.median(fresh)
      print(f"GET /api/runs, {n} each: kept-alive median {a * 1e3:.2f} ms (p90 {sorted(ka)[int(n * 0.9)] * 1e3:.2f}), "
            f"new connection {b * 1e3:.2f} ms: kept-alive/new = {a / b:.2f}x (goal: kept-alive <= 5 ms)")
      print(big_frame_delay(srv, kept, a))
    finally: srv.stop()

def big_frame_delay(srv: ServerProc, client: httpx.Client, idle_median: float) -> str:
  from websockets.sync.client import connect
  run = {"type": "run", "script": "/x/big.py", "argv": ["big.py"], "start_time": 1.0, "clock_ns": 0, "pid": 7, "version": "b", "mode": "viz"}
  spans = [json.dumps({"type": "span", "track": "CPU", "name": f"k{i % 50}", "start_ns": i * 10, "end_ns": i * 10 + 5,
                       "cat": "kernel", "args": {"kernel": i % 50}}) for i in range(70_000)]
  frame = "[\n" + ",\n".join([json.dumps(run)] + spans) + "\n]"
  lat, done = [], threading.Event()
  def probe() -> None:
    while not done.is_set():
      t = time.perf_counter(); client.get("/api/runs"); lat.append(time.perf_counter() - t)
  sock = socket.create_connection(("127.0.0.1", srv.port))
  with connect(f"ws://127.0.0.1:{srv.port}/ingest", sock=sock, proxy=None, max_size=None,
               additional_headers={"X-Tinyviz-Token": srv.token}) as ws:
    ws.recv(timeout=10)
    th = threading.Thread(target=probe); th.start()
    time.sleep(0.2)
    t = time.perf_counter(); ws.send(frame); ws.recv(timeout=300); took = time.perf_counter() - t
    done.set(); th.join()
  return (f"{len(frame) / 2**20:.1f} MiB ingest frame taken in {took * 1e3:.0f} ms; meanwhile the slowest of {len(lat)} GETs "
          f"{max(lat) * 1e3:.0f} ms (median {statistics.median(lat) * 1e3:.1f} ms) against {idle_median * 1e3:.2f} ms idle "
          f"(goal: slowest <= 100 ms)")

if __name__ == "__main__": main()
