"""Opening a big trace: peak memory and time of `profiler.load.load` against plain `json` parsing of the same file.

Generates, into a temp dir, a Chrome trace-event JSON of N spans shaped like PyTorch's (CPU ops and GPU kernels as X
events with their args, flows, memory instants, metadata), its gzipped copy, and a tinyviz JSON Lines trace of N
spans (bench/timeline_bench.py's generator). Each reader runs in a fresh subprocess, ours and the peer interleaved;
the child reports its own peak RSS (ru_maxrss) and the time of the call. Peers: `json.load` of the Chrome file
(through `gzip.open` for the .gz: what our reader did before it streamed), `[json.loads(l) for l in f]` for JSONL.
Ratios are ours / peer (below 1: ours uses less); ours decodes and validates every event (msgspec Structs), the
peers only parse. Nothing is asserted.
  python bench/load_bench.py [--quick] [--spans N] [--runs R] [--root DIR] [--keep DIR]
--root imports `profiler` from another checkout (e.g. a copy of an older tree), for before/after figures."""
from __future__ import annotations
import argparse, gzip, json, os, random, statistics, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from timeline_bench import write_trace as write_jsonl_trace  # noqa: E402

OPS = ["aten::linear", "aten::addmm", "aten::relu", "aten::copy_", "aten::empty", "aten::t", "aten::mul", "aten::sum",
       "aten::conv2d", "aten::convolution", "aten::_convolution", "aten::add_", "Optimizer.step#Adam.step"]
KERNELS = [f"void at::native::vectorized_elementwise_kernel<4, at::native::Op{i}Functor<float>, at::detail::Array<char*, {2 + i % 3}> >"
           for i in range(40)] + [f"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize{64 * (1 + i % 4)}x128x32_warpgroupsize1x1x1"
                                   for i in range(20)]

def write_chrome_trace(path: Path, n_spans: int, seed: int = 0) -> None:
  """About n_spans X events: 60% CPU ops on two threads, 40% kernels on two streams, a flow per launch, memory instants."""
  rng = random.Random(seed)
  pid, t, ext = 4242, 1_700_000_000_000.0, 0
  with open(path, "w") as f:
    f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85000000000}],\n'
            '  "displayTimeUnit": "ms",\n  "traceEvents": [\n')
    meta = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}] + \
           [{"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"thread {tid} (python)"}} for tid in (pid, pid + 1)] + \
           [{"ph": "M", "name": "thread_name", "pid": 0, "tid": s, "args": {"name": f"stream {s}"}} for s in (7, 13)]
    f.write(",\n".join(json.dumps(m) for m in meta))
    for i in range(n_spans):
      ext += 1
      t += rng.random() * 5
      dur = round(rng.random() * 40, 3)
      if rng.random() < 0.6:
        ev = {"ph": "X", "cat": "cpu_op", "name": OPS[rng.randrange(len(OPS))], "pid": pid, "tid": pid + i % 2, "ts": round(t, 3),
              "dur": dur, "args": {"External id": ext, "Record function id": 0, "Ev Idx": i}}
      else:
        stream = (7, 13)[i % 2]
        ev = {"ph": "X", "cat": "kernel", "name": KERNELS[rng.randrange(len(KERNELS))], "pid": 0, "tid": stream, "ts": round(t, 3),
              "dur": dur, "args": {"External id": ext, "queued": 0, "device": 0, "context": 1, "stream": stream, "correlation": ext,
                                   "registers per thread": 32, "grid": [rng.randrange(1, 4096), 1, 1], "block": [128, 1, 1]}}
        f.write(",\n" + json.dumps({"ph": "f", "id": ext, "pid": 0, "tid": stream, "ts": round(t, 3), "cat": "ac2g", "name": "ac2g", "bp": "e"}))
      f.write(",\n" + json.dumps(ev))
      if i % 50 == 0:
        f.write(",\n" + json.dumps({"ph": "i", "s": "t", "name": "[memory]", "pid": pid, "tid": pid, "ts": round(t, 3),
                                    "args": {"Total Allocated": rng.randrange(1 << 30), "Bytes": 4096, "Device Id": -1}}))
    f.write('\n  ],\n  "traceName": "bench.pt.trace.json"\n}\n')

CHILD = """
import gzip, json, resource, sys, time
sys.path.insert(0, {root!r})
{imports}
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
{work}
dt = time.perf_counter() - t
print(json.dumps({{"s": dt, "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "base_kb": base, "n": n}}))
"""
OURS = ("from profiler.load import load", "n = len(load(PATH).events)")
PEERS = {"chrome": ("", "d = json.load(open(PATH, 'rb')); n = len(d['traceEvents'])"),
         "chrome.gz": ("", "d = json.load(gzip.open(PATH)); n = len(d['traceEvents'])"),
         "jsonl": ("", "n = len([json.loads(l) for l in open(PATH, 'rb')])")}

def child(root: str, imports: str, work: str, path: Path) -> dict[str, float]:
  code = CHILD.format(root=root, imports=imports, work=work.replace("PATH", repr(str(path))))
  p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=3600)
  if p.returncode != 0: raise RuntimeError(f"child failed:\n{p.stderr}")
  return json.loads(p.stdout.strip().splitlines()[-1])

def main() -> int:
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--spans", type=int, default=1_000_000)
  ap.add_argument("--quick", action="store_true", help="100k spans")
  ap.add_argument("--runs", type=int, default=3, help="subprocess runs per reader and file (medians are printed)")
  ap.add_argument("--root", default=str(ROOT), help="the checkout whose profiler is measured")
  ap.add_argument("--keep", default=None, help="write the traces into this folder and keep them (reused when present)")
  a = ap.parse_args()
  n = 100_000 if a.quick else a.spans
  tmp = tempfile.TemporaryDirectory() if a.keep is None else None
  d = Path(a.keep or tmp.name)  # type: ignore[union-attr]
  d.mkdir(parents=True, exist_ok=True)
  files = {"chrome": d / f"trace_{n}.json", "chrome.gz": d / f"trace_{n}.json.gz", "jsonl": d / f"trace_{n}.jsonl"}
  if not files["chrome"].exists(): write_chrome_trace(files["chrome"], n)
  if not files["chrome.gz"].exists():
    with open(files["chrome"], "rb") as src, gzip.open(files["chrome.gz"], "wb", compresslevel=6) as dst:
      while chunk := src.read(1 << 20): dst.write(chunk)
  if not files["jsonl"].exists(): write_jsonl_trace(files["jsonl"], n)
  print(f"{n:,} spans; profiler from {a.root}; {a.runs} runs each, medians; peak RSS of the child process "
        f"(its RSS after imports in brackets)")
  print(f"{'file':<13} {'MB':>6} {'events':>9} | {'ours MB':>13} {'peer MB':>13} {'ratio':>6} | {'ours s':>7} {'peer s':>7} {'ratio':>6}")
  for kind, path in files.items():
    ours: list[dict[str, float]] = []
    peer: list[dict[str, float]] = []
    for _ in range(a.runs):
      ours.append(child(a.root, *OURS, path))
      peer.append(child(a.root, *PEERS[kind], path))
    def med(rs: list[dict[str, float]], k: str) -> float: return statistics.median(r[k] for r in rs)
    orss, prss, os_, ps = med(ours, "rss_kb") / 1024, med(peer, "rss_kb") / 1024, med(ours, "s"), med(peer, "s")
    print(f"{kind:<13} {os.path.getsize(path) / 1e6:6.0f} {int(ours[0]['n']):9,} | {orss:6.0f} [{med(ours, 'base_kb') / 1024:4.0f}] "
          f"{prss:6.0f} [{med(peer, 'base_kb') / 1024:4.0f}] {orss / prss:5.2f}x | {os_:7.2f} {ps:7.2f} {os_ / ps:5.2f}x")
  if tmp is not None: tmp.cleanup()
  return 0

if __name__ == "__main__":
  sys.exit(main())
