"""setitem with tensor indices, `t[idx] = v` on a realized tensor, against numpy's `a[idx] = v` in the same run, rounds
interleaved: 1-d writes (random positions, duplicates among them) and numpy's advanced-indexing example at tinygrad's
test size (`t[:, ind_1, :, ind_2, :] = v` into 10x20x30x40x50). Each figure is the median over the rounds of wall ms
and this process's CPU ms (all its threads), ours realized (the scatter and the write back into t). --onehot also
times the one-hot write this engine did before (tensor_ops_index._scatter_items) on the smallest 1-d size.
  python bench/scatter_bench.py [--quick] [--rounds N] [--onehot]"""
from __future__ import annotations
import argparse, os, statistics, time
import numpy as np
from tinygrad import Tensor, dtypes

def timed(fn) -> tuple[float, float]:
  st, cpu = time.perf_counter(), time.process_time()
  fn()
  return (time.perf_counter() - st) * 1e3, (time.process_time() - cpu) * 1e3

def case_1d(n: int, j: int):
  rng = np.random.default_rng(0)
  a, idx, v = rng.standard_normal(n).astype(np.float32), rng.integers(0, n, j).astype(np.int32), rng.standard_normal(j).astype(np.float32)
  t, ti, tv = Tensor(a).contiguous().realize(), Tensor(idx).realize(), Tensor(v).realize()
  def ours():
    t[ti] = tv
    t.realize()
  def numpy(): a[idx] = v
  return f"1-d: {j:,} values into {n:,}", ours, numpy, lambda: np.testing.assert_array_equal(t.numpy(), a)

def case_advanced():
  shape, vshape = (10, 20, 30, 40, 50), (2, 3, 4, 10, 30, 50)
  a, i1, i2 = np.zeros(shape, np.int32), np.array([5, 3, 7, 8]), np.array([[[0], [1], [2]], [[3], [4], [5]]])
  v = np.arange(int(np.prod(vshape)), dtype=np.int32).reshape(vshape)
  t, t1, t2, tv = Tensor(a).contiguous().realize(), Tensor(i1).realize(), Tensor(i2).realize(), Tensor(v).realize()
  def ours():
    t[:, t1, :, t2, :] = tv
    t.realize()
  def numpy(): a[:, i1, :, i2, :] = v
  return f"t[:, ind_1, :, ind_2, :] = v: {v.size:,} values into {a.size:,} (int32)", ours, numpy, lambda: np.testing.assert_array_equal(t.numpy(), a)

def main() -> None:
  ap = argparse.ArgumentParser()
  ap.add_argument("--quick", action="store_true")
  ap.add_argument("--rounds", type=int, default=7)
  ap.add_argument("--onehot", action="store_true")
  a = ap.parse_args()
  cases = [case_1d(10_000, 1_000)] if a.quick else [case_1d(100_000, 1_000), case_1d(1_000_000, 1_000), case_1d(1_000_000, 100_000), case_1d(16_000_000, 1_000_000), case_advanced()]
  rounds = 2 if a.quick else a.rounds
  print(f"load average {os.getloadavg()[0]:.2f}; median of {rounds} rounds, wall ms / CPU ms")
  for name, ours, numpy, check in cases:
    ours(); numpy(); check()  # compiled once; the same result
    got: dict[str, list[tuple[float, float]]] = {"ours": [], "numpy": []}
    for _ in range(rounds):
      got["ours"].append(timed(ours)); got["numpy"].append(timed(numpy))
    w = {k: statistics.median(x[0] for x in v) for k, v in got.items()}
    c = {k: statistics.median(x[1] for x in v) for k, v in got.items()}
    print(f"{name}: ours {w['ours']:.2f} / {c['ours']:.2f}, numpy {w['numpy']:.2f} / {c['numpy']:.2f}, {w['ours'] / max(w['numpy'], 1e-9):.1f}x numpy's wall time")
  if a.onehot:  # the one-hot write over every place and value, as before: a (values, places) compare
    t, v = Tensor.zeros(100_000).contiguous().realize(), Tensor.ones(1_000).realize()
    idx = Tensor(np.random.default_rng(1).integers(0, 100_000, 1_000).astype(np.int32)).realize()
    t._scatter_items(v, idx).realize()
    wall, cpu = timed(lambda: t._scatter_items(v, idx).realize())
    print(f"one-hot write (before), 1,000 values into 100,000: {wall:.2f} / {cpu:.2f}")

if __name__ == "__main__": main()
