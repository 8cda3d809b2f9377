"""What the numpy-checked suites share: numpy dtypes and the check of a tensor's shape, dtype and values."""
import numpy as np
from tinygrad import Tensor, dtypes

NP = {dtypes.bool: np.bool_, dtypes.int8: np.int8, dtypes.int16: np.int16, dtypes.int32: np.int32, dtypes.int64: np.int64,
      dtypes.uint8: np.uint8, dtypes.uint16: np.uint16, dtypes.uint32: np.uint32, dtypes.uint64: np.uint64,
      dtypes.float16: np.float16, dtypes.float32: np.float32, dtypes.float64: np.float64}
# tinygrad >= 0.14 types results that come from python scalars as "weak" int/float (stored as int32/float32)
WEAK = {getattr(dtypes, "weakint", None): dtypes.int32, getattr(dtypes, "weakfloat", None): dtypes.float32}
WEAK.pop(None, None)

def check(t, expected, dtype=None, rtol=1e-5, atol=1e-6):
  """t's shape, dtype and values match the numpy array `expected` (dtype defaults to expected's)"""
  expected = np.asarray(expected)
  assert isinstance(t, Tensor)
  assert t.shape == expected.shape, f"shape {t.shape} != {expected.shape}"
  dtype = dtype if dtype is not None else {v: k for k, v in NP.items()}[expected.dtype.type]
  assert t.dtype == dtype or WEAK.get(t.dtype) == dtype, f"dtype {t.dtype} != {dtype}"
  out = t.numpy()
  assert out.shape == expected.shape and out.dtype == np.dtype(NP[dtype])
  if dtypes.is_float(dtype): np.testing.assert_allclose(out, expected, rtol=rtol, atol=atol, equal_nan=True)
  else: np.testing.assert_array_equal(out, expected)
