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
