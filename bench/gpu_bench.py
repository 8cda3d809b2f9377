"""Our CUDA device against PyTorch on the same GPU, side by side in one run: a 4096^2 fp32 matmul (GFLOPS) and a large
elementwise add (GB/s). Times are the GPU's own (CUDA events: ours through GlobalCounters.time_sum_s, torch's through
torch.cuda.Event), best of a few runs on warm caches; torch's column is absent when torch has no CUDA.
  python bench/gpu_bench.py [--quick]"""
from __future__ import annotations
import sys, time
import numpy as np
from tinygrad import Tensor, Device, GlobalCounters

def ours(build, reps: int) -> tuple[float, float]:
  """(GPU time of the kernels, wall time incl. scheduling and a synchronize), best of reps, after a warm-up run."""
  build().realize()
  Device["CUDA"].synchronize()
  gpu, wall = [], []
  for _ in range(reps):
    GlobalCounters.reset()
    st = time.perf_counter()
    build().realize()
    Device["CUDA"].synchronize()
    wall.append(time.perf_counter() - st); gpu.append(GlobalCounters.time_sum_s)
  return min(gpu), min(wall)

def theirs(torch, fn, reps: int) -> float:
  fn(); torch.cuda.synchronize()
  ts = []
  for _ in range(reps):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); fn(); b.record(); b.synchronize()
    ts.append(a.elapsed_time(b) * 1e-3)
  return min(ts)

def row(name: str, unit: str, work: float, our: tuple[float, float], their: float | None) -> None:
  rate = lambda t: work / t / 1e9
  s = f"{name:28s} ours {rate(our[0]):9.1f} {unit} ({our[0] * 1e3:8.3f} ms GPU, {our[1] * 1e3:8.3f} ms wall)"
  if their is not None: s += f"   torch {rate(their):9.1f} {unit} ({their * 1e3:8.3f} ms)   ours/torch {their / our[0]:6.3f}"
  print(s, flush=True)

def main(quick: bool = False) -> None:
  try:
    import torch
    torch = torch if torch.cuda.is_available() else None
  except ImportError: torch = None
  if torch is not None: torch.backends.cuda.matmul.allow_tf32 = False  # fp32 against fp32
  d = Device["CUDA"]
  print(f"device {d.name} {d.arch}; torch {torch.__version__ if torch else 'without CUDA: no comparison'}", flush=True)
  reps = 2 if quick else 5

  n = 4096
  a, b = Tensor.rand(n, n, device="CUDA").realize(), Tensor.rand(n, n, device="CUDA").realize()
  our = ours(lambda: a @ b, reps)
  their = None
  if torch is not None:
    ta, tb = (torch.from_numpy(x.numpy()).cuda() for x in (a, b))
    their = theirs(torch, lambda: ta @ tb, reps)
    np.testing.assert_allclose((a @ b)[:64, :64].numpy(), (ta @ tb)[:64, :64].cpu().numpy(), rtol=1e-3, atol=1e-2)
  row(f"matmul {n}x{n} fp32", "GFLOPS", 2 * n ** 3, our, their)

  m = 1 << 26
  x, y = Tensor.rand(m, device="CUDA").realize(), Tensor.rand(m, device="CUDA").realize()
  our = ours(lambda: x + y, reps)
  their = None
  if torch is not None:
    tx, ty = torch.rand(m, device="cuda"), torch.rand(m, device="cuda")
    their = theirs(torch, lambda: tx + ty, reps)
  row("add 64M fp32 (3 x 256 MB)", "GB/s", 3 * 4 * m, our, their)
  print(f"largest correction of GPU times onto the host clock: {d.clock_correction_ns / 1e3:.1f} us")

if __name__ == "__main__": main("--quick" in sys.argv)
