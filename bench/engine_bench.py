"""Engine speed against numpy, side by side in one run: fused elementwise, a big sum, a matmul, and the cost of a
new kernel vs a cached re-run. Prints ratios (numpy time / our time: above 1 means we are faster).
  python bench/engine_bench.py [--quick]"""
from __future__ import annotations
import sys, time, statistics
import numpy as np
from tinygrad import Tensor, GlobalCounters

def best(fn, reps: int) -> float:
  ts = []
  for _ in range(reps):
    st = time.perf_counter(); fn(); ts.append(time.perf_counter() - st)
  return min(ts)

def kernel_time(build, reps: int) -> tuple[float, float]:
  """(wall time of realize incl. scheduling, time inside the kernels only), best of reps, on warm caches."""
  build().realize()
  walls, kerns = [], []
  for _ in range(reps):
    GlobalCounters.reset()
    st = time.perf_counter(); build().realize(); walls.append(time.perf_counter() - st)
    kerns.append(GlobalCounters.time_sum_s)
  return min(walls), min(kerns)

def row(name: str, ours: float, theirs: float, target: str) -> None:
  print(f"{name:34s} ours {ours * 1e3:9.3f} ms   numpy {theirs * 1e3:9.3f} ms   speed vs numpy {theirs / ours:6.2f}x   (target {target})")

def main(quick: bool = False) -> None:
  reps = 3 if quick else 10
  rng = np.random.default_rng(0)
  n = 1 << 22
  an, bn, cn = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
  a, b, c = (Tensor(x).realize() for x in (an, bn, cn))
  wall, kern = kernel_time(lambda: (a * b + c).relu(), reps)
  npt = best(lambda: np.maximum(an * bn + cn, 0), reps)
  row("fused (a*b+c).relu() 4M f32", wall, npt, ">= 2x")
  np.testing.assert_allclose((a * b + c).relu().numpy(), np.maximum(an * bn + cn, 0), rtol=1e-5, atol=1e-6)

  m = 1 << 24
  sn = rng.standard_normal(m, dtype=np.float32)
  s = Tensor(sn).realize()
  wall, kern = kernel_time(lambda: s.sum(), reps)
  npt = best(lambda: sn.sum(), reps)
  row("sum 16M f32", wall, npt, ">= 1.5x")
  assert abs(s.sum().item() - float(sn.astype(np.float64).sum())) < 1e-3 * m ** 0.5 * 10
  for name, ours, theirs in (("max", s.max, sn.max), ("mean", s.mean, sn.mean)):  # two kernels each too (engine/split_reduce.py)
    wall, kern = kernel_time(ours, reps)
    row(f"{name} 16M f32", wall, best(theirs, reps), ">= 1.5x")
  assert s.max().item() == sn.max()

  for k in (1024,) if quick else (1024, 2048):
    xn, yn = rng.standard_normal((k, k), dtype=np.float32), rng.standard_normal((k, k), dtype=np.float32)
    x, y = Tensor(xn).realize(), Tensor(yn).realize()
    wall, kern = kernel_time(lambda: x @ y, max(2, reps // 3))
    npt = best(lambda: xn @ yn, max(2, reps // 3))
    row(f"matmul {k}x{k} f32", wall, npt, ">= 0.8x")
    print(f"{'':34s} ours {2 * k ** 3 / wall / 1e9:7.1f} GFLOPS, numpy {2 * k ** 3 / npt / 1e9:7.1f} GFLOPS")
    np.testing.assert_allclose((x @ y).numpy(), xn @ yn, rtol=1e-3, atol=2e-3 * (k / 1024) ** 0.5)

  # a new kernel: schedule + codegen + compile (a fresh constant makes a kernel nobody has compiled), vs a cached re-run
  small = Tensor(rng.standard_normal(1024, dtype=np.float32)).realize()
  from tinygrad.runtime import ops_cpu
  import tempfile, pathlib
  ops_cpu.CACHE_DIR = pathlib.Path(tempfile.mkdtemp())
  news = []
  for i in range(3 if quick else 5):
    v = 1.0 + i / 7 + time.time() % 1
    st = time.perf_counter(); (small * v + v).realize(); news.append(time.perf_counter() - st)
  cached = best(lambda: (small * 2.5 + 2.5).realize(), reps * 5)
  npt = best(lambda: small.numpy() * 2.5 + 2.5, reps * 5)
  print(f"{'new kernel (schedule+codegen+cc)':34s} {statistics.median(news) * 1e3:9.3f} ms")
  print(f"{'cached re-run of a small kernel':34s} {cached * 1e3:9.3f} ms   ({cached / max(npt, 1e-9):.1f}x numpy's time for the same math incl. a copy out)")

if __name__ == "__main__": main("--quick" in sys.argv)
