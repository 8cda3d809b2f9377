"""Data parallelism on the CPU: the digits CNN of examples/beautiful_digits.py, one jitted Adam step, with the batch
sharded over CPU and CPU:1 (weights replicated, gradients all-reduced) against the same step on one CPU device, in
one run, rounds interleaved so machine load hits both alike. Prints steps/s side by side, the ratio, and the load
average (the goal, >= 1.5x, assumes two idle cores).
  python bench/multi_bench.py [--quick] [--bs N] [--devices N]"""
from __future__ import annotations
import argparse, os, pathlib, sys, time
import numpy as np
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "examples"))
from tinygrad import Tensor, nn, Device
from tinygrad.nn.state import get_parameters, get_state_dict
from beautiful_digits import Model, make_train_step

def make(devices: tuple[str, ...] | None, bs: int):
  Tensor.manual_seed(0)
  model = Model(8)
  if devices is not None:
    for t in get_state_dict(model).values(): t.to_(devices)
  step = make_train_step(model, nn.optim.Adam(get_parameters(model), lr=1e-3))
  rng = np.random.default_rng(0)
  x, y = Tensor(rng.standard_normal((bs, 1, 8, 8), dtype=np.float32)), Tensor(rng.integers(0, 10, bs, dtype=np.int32))
  if devices is not None: x, y = x.shard(devices, axis=0), y.shard(devices, axis=0)
  x, y = x.realize(), y.realize()
  for _ in range(3): step(x, y)  # run, capture, first replay
  return lambda: step(x, y)

def steps_per_s(step, n: int) -> tuple[float, float]:
  """Steps per second of wall time, and this process's CPU milliseconds per step (all its threads)."""
  st, cpu = time.perf_counter(), time.process_time()
  for _ in range(n): loss = step()
  loss.item()
  return n / (time.perf_counter() - st), (time.process_time() - cpu) * 1e3 / n

def main() -> None:
  ap = argparse.ArgumentParser()
  ap.add_argument("--quick", action="store_true")
  ap.add_argument("--bs", type=int, default=256)
  ap.add_argument("--devices", type=int, default=2)
  a = ap.parse_args()
  devices = tuple(f"{Device.DEFAULT}:{i}" for i in range(a.devices))
  one, multi = make(None, a.bs), make(devices, a.bs)
  rounds, n = (2, 5) if a.quick else (5, 15)
  load0 = os.getloadavg()[0]
  r1, rm = [], []
  for _ in range(rounds):
    r1.append(steps_per_s(one, n)); rm.append(steps_per_s(multi, n))
  (s1, c1), (sm, cm) = (tuple(float(np.median(v)) for v in zip(*r)) for r in (r1, rm))
  print(f"digits CNN, batch {a.bs}, Adam, TinyJit; {len(os.sched_getaffinity(0))} cores, load average {load0:.1f} -> {os.getloadavg()[0]:.1f}")
  print(f"  one {Device.DEFAULT} device          {s1:8.2f} steps/s   {c1:7.1f} CPU ms/step")
  print(f"  sharded over {'+'.join(devices):10s} {sm:8.2f} steps/s   {cm:7.1f} CPU ms/step   {sm / s1:.2f}x")

if __name__ == "__main__": main()
