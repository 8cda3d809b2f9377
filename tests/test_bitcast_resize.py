# Tensor.bitcast to a dtype of another size reinterprets the last dimension's bytes (tinygrad's rule, numpy's .view):
# every pair of sizes against numpy, on the CPU and PYTHON devices, and the error for bytes that don't divide.
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.dtype import _to_np_dtype

PAIRS = [(dtypes.float32, dtypes.int8), (dtypes.int8, dtypes.int16), (dtypes.uint8, dtypes.float64), (dtypes.float64, dtypes.uint16),
         (dtypes.int16, dtypes.int32), (dtypes.float16, dtypes.uint8), (dtypes.int64, dtypes.float32), (dtypes.uint32, dtypes.uint64)]

@pytest.mark.parametrize("src,dst", PAIRS, ids=[f"{a.name}-{b.name}" for a, b in PAIRS])
@pytest.mark.parametrize("device", ["CPU", "PYTHON"])
def test_matches_numpy_view(src, dst, device):
  raw = np.random.default_rng(0).integers(0, 256, size=2 * 3 * 16, dtype=np.uint8)
  x = raw.view(_to_np_dtype(src)).reshape(2, 3, -1)
  if dtypes.is_float(src): x = np.where(np.isfinite(x), x, 0).astype(x.dtype)  # a nan's payload may not survive a float copy
  got = Tensor(x, device=device).bitcast(dst)
  want = x.view(_to_np_dtype(dst))
  assert got.shape == want.shape and got.dtype == dst
  np.testing.assert_array_equal(got.numpy().view(np.uint8), want.view(np.uint8))

def test_on_a_lazy_view_and_back():
  a = Tensor.arange(24, dtype=dtypes.int32).reshape(4, 6)[:, 1:5] * 1000  # not a buffer: a computed, sliced tensor
  np.testing.assert_array_equal(a.bitcast(dtypes.uint8).bitcast(dtypes.int32).numpy(), a.numpy())
  np.testing.assert_array_equal(a.bitcast(dtypes.int16).numpy(), a.numpy().view(np.int16))

def test_bytes_that_dont_make_whole_items():
  with pytest.raises(RuntimeError, match=r"3 x 1 bytes don't make whole 2-byte items"):
    Tensor.empty((3,), dtype=dtypes.int8).bitcast(dtypes.float16)
  with pytest.raises(ValueError, match="bitcast of shape"): Tensor(1.0).bitcast(dtypes.uint8)
