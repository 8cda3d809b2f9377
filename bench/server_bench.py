"""The viz server: events per second from an engine run through the server to a page, what a page attached costs the
engine's step time against VIZ unset and against capture alone, and jumps to any step of a 5,000+-match rewrite;
all in one run, as ratios against peers measured alongside.
  python bench/server_bench.py [--quick]

1. events/s: a real engine run's trace (VIZ=-1 of the training loop below) sent through `/ingest` by the engine's own
   sender (profiler.live.LiveSink, reading the trace file as it does under VIZ=1), several times over as separate
   runs, until a page (a websocket client on /ws) has counted every event in the `events` messages. Target >= 200k.
2. step time: the median training step (steps 3.. of each process) with VIZ unset, VIZ=-1 (capture to the trace file)
   and VIZ=1 streaming to the server with a page attached, processes interleaved. Target: the page's extra cost
   (VIZ=1 - VIZ=-1) is no more than capture's own (VIZ=-1 - unset).
3. rewrite steps: GET /api/runs/R/rewrites/W/step/k for random k of a rewrite with 7,500 matches on a 12.5k-node
   graph, through HTTP. Target <= 100 ms each.
"""
from __future__ import annotations
import argparse, json, os, random, statistics, subprocess, sys, tempfile, threading, time
from pathlib import Path
import httpx
from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from profiler.live import LiveSink  # noqa: E402

TRAIN = """
import sys, time, json
import numpy as np
from tinygrad import Tensor, nn
steps = int(sys.argv[1])
rng = np.random.default_rng(0)
x, y = Tensor(rng.standard_normal((64, 32), dtype=np.float32)), Tensor(rng.integers(0, 10, 64))
l1, l2 = nn.Linear(32, 64), nn.Linear(64, 10)
opt = nn.optim.SGD([l1.weight, l1.bias, l2.weight, l2.bias], lr=0.01)
times = []
for i in range(steps):
  st = time.perf_counter()
  loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y)
  with Tensor.train(): opt.zero_grad(); loss.backward(); opt.step()
  loss.item()
  times.append(time.perf_counter() - st)
print(json.dumps(times))
"""

BIG_REWRITE = """
from tinygrad.uop.ops import UOp, Ops, graph_rewrite
from tinygrad.uop.symbolic import identities
from tinygrad.dtype import dtypes
g = UOp(Ops.DEFINE_GLOBAL, dtypes.float, (), 0)
terms = [(UOp(Ops.LOAD, dtypes.float, (g,), i) * 1.0 + 0.0) * 1.0 for i in range(2500)]
acc = terms[0]
for t in terms[1:]: acc = acc + t
graph_rewrite(UOp(Ops.SINK, dtypes.void, (acc,)), identities, name="identities x7500")
"""

def env(**kw: str) -> dict[str, str]:
  e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG", "TINYVIZ_URL", "TINYVIZ_TRACE")}
  e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
  return {**e, "BROWSER": "none", **kw}

def run_script(tmp: Path, name: str, text: str, args: list[str], **kw: str) -> subprocess.CompletedProcess:
  script = tmp / f"{name}.py"
  script.write_text(text)
  p = subprocess.run([sys.executable, str(script), *args], cwd=ROOT, env=env(**kw), capture_output=True, text=True, timeout=600)
  if p.returncode != 0: raise SystemExit(f"{name} failed:\n{p.stdout}\n{p.stderr}")
  return p

class ServerProc:
  def __init__(self, tmp: Path, args: list[str]):
    state = tmp / f"state-{time.monotonic_ns()}.json"
    self.proc = subprocess.Popen([sys.executable, "-m", "viz", "serve", "--no-browser", "--state-file", str(state), *args],
                                 cwd=ROOT, env=env(TINYVIZ_TRACE_DIR=str(tmp / "spool")), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
    while not state.exists():
      if self.proc.poll() is not None: raise SystemExit("the server did not start")
      time.sleep(0.05)
    st = json.loads(state.read_text())
    self.url, self.port, self.token = st["url"], st["port"], st["token"]

  def stop(self) -> None:
    self.proc.terminate()
    self.proc.wait(timeout=30)

class PageClient:
  """A page on /ws, counting the events of each run from the `events` messages."""
  def __init__(self, srv: ServerProc):
    self.counts: dict[int, int] = {}
    self.cond = threading.Condition()
    self.ws = connect(f"ws://127.0.0.1:{srv.port}/ws", origin=f"http://127.0.0.1:{srv.port}",  # type: ignore[arg-type]
                      additional_headers={"X-Tinyviz-Token": srv.token}, proxy=None, max_size=None).__enter__()
    threading.Thread(target=self._read, daemon=True).start()

  def _read(self) -> None:
    try:
      for text in self.ws:
        m = json.loads(text)
        if m["type"] == "events":
          with self.cond:
            self.counts[m["run"]] = self.counts.get(m["run"], 0) + sum(m["counts"].values())
            self.cond.notify_all()
    except Exception: pass

  def wait_total(self, n: int, timeout: float = 120) -> None:
    with self.cond:
      if not self.cond.wait_for(lambda: sum(self.counts.values()) >= n, timeout): raise SystemExit("the page did not get every event")

def cpu_seconds(pid: int) -> float:
  with open(f"/proc/{pid}/stat") as f: fields = f.read().rsplit(")", 1)[1].split()
  return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def events_per_second(tmp: Path, trace: Path, repeats: int) -> tuple[int, float, float]:
  """(events, wall seconds until the page had them all, CPU seconds the server spent on them)"""
  srv = ServerProc(tmp, [])
  try:
    page = PageClient(srv)
    n = sum(1 for _ in open(trace)) - 1
    os.environ["TINYVIZ_URL"] = srv.url
    cpu0, t0 = cpu_seconds(srv.proc.pid), time.perf_counter()
    for _ in range(repeats): LiveSink(str(trace), open_page=False).close(timeout=120)
    page.wait_total(n * repeats)
    return n * repeats, time.perf_counter() - t0, cpu_seconds(srv.proc.pid) - cpu0
  finally:
    os.environ.pop("TINYVIZ_URL", None)
    srv.stop()

def step_times(tmp: Path, steps: int, reps: int) -> dict[str, float]:
  srv = ServerProc(tmp, [])
  page = PageClient(srv)
  modes = {"VIZ unset": {}, "VIZ=-1 (capture)": {"VIZ": "-1"}, "VIZ=1 + page": {"VIZ": "1", "TINYVIZ_URL": srv.url}}
  got: dict[str, list[float]] = {m: [] for m in modes}
  try:
    for r in range(reps):
      for mode, extra in modes.items():
        p = run_script(tmp, "train", TRAIN, [str(steps)], TINYVIZ_TRACE=str(tmp / f"train-{r}.jsonl"), TINYVIZ_SERVER_DIR=str(tmp / "home"), **extra)
        got[mode].append(statistics.median(json.loads(p.stdout.strip().splitlines()[-1])[2:]))
    assert page.counts, "the page saw no run"
  finally: srv.stop()
  return {m: statistics.median(v) for m, v in got.items()}

def step_jumps(tmp: Path, samples: int) -> list[float]:
  trace = tmp / "big.tinyviz.jsonl"
  run_script(tmp, "big", BIG_REWRITE, [], VIZ="-1", TINYVIZ_TRACE=str(trace))
  srv = ServerProc(tmp, [str(trace)])
  try:
    http = httpx.Client(base_url=f"http://127.0.0.1:{srv.port}", headers={"X-Tinyviz-Token": srv.token}, trust_env=False, timeout=60)
    ctx = http.get("/api/runs/1/contexts").json()
    rw = max((r for c in ctx["contexts"] for r in c["rewrites"]), key=lambda r: r["n_matches"])
    n = rw["n_matches"]
    http.get(f"/api/runs/1/rewrites/{rw['id']}/step/0")  # the rewrite's one-time index
    rng, out = random.Random(0), []
    for k in rng.sample(range(1, n + 1), samples):
      st = time.perf_counter()
      r = http.get(f"/api/runs/1/rewrites/{rw['id']}/step/{k}")
      out.append(time.perf_counter() - st)
      assert r.status_code == 200 and r.json()["k"] == k
    print(f"rewrite '{rw['name']}': {n} matches, {len(r.json()['nodes'])} nodes at step {k}")
    return out
  finally: srv.stop()

def main() -> None:
  ap = argparse.ArgumentParser()
  ap.add_argument("--quick", action="store_true")
  a = ap.parse_args()
  steps, reps, repeats, samples = (8, 1, 2, 10) if a.quick else (12, 3, 3, 30)
  with tempfile.TemporaryDirectory() as d:
    tmp = Path(d)
    trace = tmp / "train.tinyviz.jsonl"
    run_script(tmp, "train", TRAIN, ["30"], VIZ="-1", TINYVIZ_TRACE=str(trace))
    n, dt, cpu = events_per_second(tmp, trace, repeats)
    print(f"events/s through the server to a page: {n / dt:,.0f}  ({n} events of {repeats} engine runs in {dt:.2f} s; "
          f"target >= 200,000); the server's CPU time alone gives {n / cpu:,.0f}/s ({os.getloadavg()[0]:.1f} load here)")
    t = step_times(tmp, steps, reps)
    base, cap, live = t["VIZ unset"], t["VIZ=-1 (capture)"], t["VIZ=1 + page"]
    print(f"training step (median): unset {base * 1e3:.1f} ms, VIZ=-1 {cap * 1e3:.1f} ms ({cap / base:.2f}x), "
          f"VIZ=1 + page {live * 1e3:.1f} ms ({live / base:.2f}x)")
    page, capture = live - cap, cap - base
    print(f"  the page adds {page / base:+.1%} of a step, capture {capture / base:+.1%}: page/capture = "
          f"{page / capture if capture > 0 else float('nan'):.2f} (target <= 1)")
    js = step_jumps(tmp, samples)
    js.sort()
    print(f"jump to step k over HTTP: median {statistics.median(js) * 1e3:.1f} ms, p90 {js[int(len(js) * 0.9)] * 1e3:.1f} ms, "
          f"max {js[-1] * 1e3:.1f} ms (target <= 100 ms)")

if __name__ == "__main__": main()
