"""The C compiler's own mistakes must not reach results: selects in nested loops with odd inner trip counts, which
GCC 12 at -O3 with AVX2 got wrong (its masked loop epilogue), checked against numpy on the CPU device."""
import numpy as np
import pytest
from tinygrad import Tensor

@pytest.mark.parametrize("shape", [(4, 6), (4, 7), (8, 6), (3, 5), (16, 6), (5, 3, 7)])
def test_nested_selects_in_odd_sized_loops(shape):
  rng = np.random.default_rng(0)
  xn, wn = (rng.uniform(-3, 3, size=shape).astype(np.float32) for _ in range(2))
  x, w = Tensor(xn, device="CPU"), Tensor(wn, device="CPU")
  got = (x < -1).where(0, ((x < -1).where(-1, x) > 1).where(0, w)).numpy()
  np.testing.assert_array_equal(got, np.where(xn < -1, 0, np.where(np.where(xn < -1, -1, xn) > 1, 0, wn)))
  np.testing.assert_array_equal(x.clip(-1, 1).numpy(), np.clip(xn, -1, 1))
  np.testing.assert_array_equal((x > 0).where(x * w, 0).numpy(), np.where(xn > 0, xn * wn, 0))

def test_a_kernel_with_only_reduce_loops_is_not_split_over_threads():
  # a conv weight gradient over a batch: 72 outputs, each a 6,400-term sum, and no global loop; splitting its first
  # (reduce) loop over threads had them all add into the same accumulators: wrong, and differently each run
  import torch
  from tinygrad import nn
  from tinygrad.engine import realize
  rng = np.random.default_rng(0)
  imgs = rng.standard_normal((64, 1, 12, 12)).astype(np.float32)
  conv = nn.Conv2d(1, 8, 3)
  conv.weight.requires_grad = True
  g = conv(Tensor(imgs)).relu().sum().gradient(conv.weight)[0].numpy()
  tw = torch.tensor(conv.weight.numpy(), requires_grad=True)
  torch.nn.functional.conv2d(torch.tensor(imgs), tw, torch.tensor(conv.bias.numpy())).relu().sum().backward()
  np.testing.assert_allclose(g, tw.grad.numpy(), rtol=1e-4, atol=1e-2)
  # read in the code, not the uops: a program from the on-disk program cache (a second process) carries only its source
  for p in realize._programs.values():
    lines = [ln.strip() for ln in p.src.splitlines()]
    # the loop split over threads: after `parallel for`, or after `for` inside a parallel region (a scratch array filled first)
    split = [lines[i + 1] for i, ln in enumerate(lines) if ln.startswith(("#pragma omp parallel for", "#pragma omp for"))]
    assert p.parallel == any(ln.startswith("#pragma omp parallel") for ln in lines) == bool(split), p.name
    assert all(ln.startswith("for (int gidx") for ln in split), (p.name, split)
