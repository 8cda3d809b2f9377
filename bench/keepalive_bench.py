"""Request latency on a kept-alive connection to the real viz server, against a new connection per request (which
Nagle's algorithm + delayed ACK never hit), measured interleaved in one run. Issue 17 goal: keep-alive median <= 5 ms.
  python bench/keepalive_bench.py [N]
"""
from __future__ import annotations
import statistics, sys, tempfile, time
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
    finally: srv.stop()

if __name__ == "__main__": main()
