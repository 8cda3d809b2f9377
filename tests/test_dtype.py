# dtypes, dtype promotion and the dtypes of op results, checked against numpy on every device.
# Uses tinygrad's public API only, so the same file runs against real tinygrad.
import numpy as np
import pytest
from tinygrad import Tensor, dtypes

DEVICES = ["CPU", "PYTHON"]

@pytest.fixture(params=DEVICES)
def dev(request): return request.param

B, I8, I16, I32, I64 = dtypes.bool, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64
U8, U16, U32, U64 = dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64
F16, F32, F64 = dtypes.float16, dtypes.float32, dtypes.float64
ALL = [B, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64]
NP = {B: np.bool_, I8: np.int8, I16: np.int16, I32: np.int32, I64: np.int64, U8: np.uint8, U16: np.uint16,
      U32: np.uint32, U64: np.uint64, F16: np.float16, F32: np.float32, F64: np.float64}
ids = lambda d: repr(d).replace("dtypes.", "")

# tinygrad >= 0.14 types results that come from python scalars as "weak" int/float, which turn into the
# default int/float (int32/float32) when stored. Accept that spelling too; every other engine must say int32/float32.
WEAK = {getattr(dtypes, "weakint", None): dtypes.int32, getattr(dtypes, "weakfloat", None): dtypes.float32}
WEAK.pop(None, None)

def same_dtype(actual, expected): return actual == expected or WEAK.get(actual) == expected

def check(t, expected, dtype, rtol=1e-6, atol=1e-6):
  expected = np.asarray(expected)
  assert same_dtype(t.dtype, dtype), f"dtype {t.dtype} != {dtype}"
  assert t.shape == expected.shape
  out = t.numpy()
  assert isinstance(out, np.ndarray)
  assert out.dtype == np.dtype(NP[dtype]), f"numpy dtype {out.dtype} != {NP[dtype]}"
  assert out.shape == expected.shape
  if dtypes.is_float(dtype): np.testing.assert_allclose(out, expected, rtol=rtol, atol=atol)
  else: np.testing.assert_array_equal(out, expected)

# ---------------------------------------------------------------- the dtypes themselves

def test_aliases():
  assert dtypes.int == dtypes.int32
  assert dtypes.float == dtypes.float32
  assert dtypes.double == dtypes.float64
  assert dtypes.half == dtypes.float16
  assert dtypes.long == dtypes.int64
  assert dtypes.int8 != dtypes.uint8
  assert dtypes.float32 != dtypes.int32

@pytest.mark.parametrize("dt,size", [(B, 1), (I8, 1), (I16, 2), (I32, 4), (I64, 8), (U8, 1), (U16, 2), (U32, 4), (U64, 8),
                                     (F16, 2), (F32, 4), (F64, 8)], ids=lambda x: ids(x) if not isinstance(x, int) else str(x))
def test_itemsize(dt, size):
  assert dt.itemsize == size

def test_classification():
  for dt in (F16, F32, F64): assert dtypes.is_float(dt) and not dtypes.is_int(dt)
  for dt in (I8, I16, I32, I64): assert dtypes.is_int(dt) and not dtypes.is_float(dt) and not dtypes.is_unsigned(dt)
  for dt in (U8, U16, U32, U64): assert dtypes.is_int(dt) and dtypes.is_unsigned(dt)
  assert not dtypes.is_float(B) and not dtypes.is_int(B)

def test_dtypes_hashable_and_distinct():
  assert len(set(ALL)) == len(ALL)
  assert {dtypes.int: 1}[dtypes.int32] == 1

# ---------------------------------------------------------------- creation dtypes

def test_list_dtypes(dev):
  assert Tensor([1, 2, 3, 4], device=dev).dtype == dtypes.int
  assert Tensor([1.0, 2.0], device=dev).dtype == dtypes.float32
  assert Tensor([1, 2.5], device=dev).dtype == dtypes.float32
  assert Tensor([True, False], device=dev).dtype == dtypes.bool
  assert Tensor([[1, 2], [3, 4]], device=dev).dtype == dtypes.int32

@pytest.mark.parametrize("dt", ALL, ids=ids)
def test_create_with_dtype(dev, dt):
  data = [0, 1, 2, 5]
  check(Tensor(data, device=dev, dtype=dt), np.array(data).astype(NP[dt]), dt)

@pytest.mark.parametrize("dt", ALL, ids=ids)
def test_from_numpy_keeps_dtype(dev, dt):
  a = np.array([[0, 1, 3], [7, 1, 0]]).astype(NP[dt])
  t = Tensor(a, device=dev)
  check(t, a, dt)

@pytest.mark.parametrize("dt", [I8, U8, I32, F16, F64, B], ids=ids)
def test_zeros_ones_full_dtype(dev, dt):
  check(Tensor.zeros(2, 3, device=dev, dtype=dt), np.zeros((2, 3), NP[dt]), dt)
  check(Tensor.ones(3, device=dev, dtype=dt), np.ones((3,), NP[dt]), dt)
  check(Tensor.full((2, 2), 1, device=dev, dtype=dt), np.full((2, 2), 1, NP[dt]), dt)

def test_default_creation_dtypes(dev):
  assert Tensor.zeros(2, device=dev).dtype == dtypes.float32
  assert Tensor.ones(2, device=dev).dtype == dtypes.float32
  assert Tensor.full((2,), 3, device=dev).dtype == dtypes.int32
  assert Tensor.full((2,), 3.0, device=dev).dtype == dtypes.float32
  assert Tensor.full((2,), True, device=dev).dtype == dtypes.bool
  assert Tensor.rand(3, device=dev).dtype == dtypes.float32
  assert Tensor.randn(3, device=dev).dtype == dtypes.float32

def test_scalar_tensor_numpy_dtype(dev):
  # tinygrad >= 0.14 gives python scalars a "weak" dtype, but what comes out is the default int/float
  assert Tensor(3, device=dev).numpy().dtype == np.int32
  assert Tensor(2.5, device=dev).numpy().dtype == np.float32
  assert Tensor(True, device=dev).numpy().dtype == np.bool_
  assert Tensor(2.5, device=dev, dtype=dtypes.float64).numpy().dtype == np.float64

# ---------------------------------------------------------------- casts

def test_cast_float_to_int_truncates(dev):
  a = np.array([-2.7, -1.5, -0.4, 0.0, 0.6, 1.5, 2.9], np.float32)
  check(Tensor(a, device=dev).cast(dtypes.int32), a.astype(np.int32), I32)
  check(Tensor(a, device=dev).cast(dtypes.int8), a.astype(np.int8), I8)

def test_cast_to_bool(dev):
  check(Tensor([0.0, 0.5, -2.0, 0.0], device=dev).cast(dtypes.bool), [False, True, True, False], B)
  check(Tensor([0, 3, -1], device=dev).cast(dtypes.bool), [False, True, True], B)

def test_cast_from_bool(dev):
  t = Tensor([True, False, True], device=dev)
  check(t.cast(dtypes.float32), [1.0, 0.0, 1.0], F32)
  check(t.cast(dtypes.int32), [1, 0, 1], I32)
  check(t.cast(dtypes.uint8), [1, 0, 1], U8)

def test_cast_int_to_float(dev):
  check(Tensor([1, -2, 300], device=dev).cast(dtypes.float16), np.array([1, -2, 300], np.float16), F16)
  check(Tensor([1, -2, 300], device=dev).cast(dtypes.float64), [1.0, -2.0, 300.0], F64)

def test_cast_float64_to_float32_rounds(dev):
  a = np.array([1 / 3, 1e-8, 123456.789], np.float64)
  check(Tensor(a, device=dev).cast(dtypes.float32), a.astype(np.float32), F32, rtol=0, atol=0)

def test_cast_unsigned_wraps(dev):
  a = np.array([0, 1, 255, 256, 1000], np.int32)
  check(Tensor(a, device=dev).cast(dtypes.uint8), a.astype(np.uint8), U8)
  check(Tensor([-1], device=dev).cast(dtypes.uint32), np.array([-1]).astype(np.uint32), U32)

def test_cast_shortcuts(dev):
  t = Tensor([1.5, -2.5], device=dev)
  check(t.int(), [1, -2], I32)
  check(t.half(), np.array([1.5, -2.5], np.float16), F16)
  check(Tensor([1, 0], device=dev).float(), [1.0, 0.0], F32)
  check(Tensor([1, 0], device=dev).bool(), [True, False], B)

def test_cast_after_ops_and_views(dev):
  t = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device=dev)
  out = (t.permute(1, 0)[1:, ::-1] * 1.5).cast(dtypes.int16)
  check(out, (np.arange(12, dtype=np.float32).reshape(3, 4).T[1:, ::-1] * 1.5).astype(np.int16), I16)

# ---------------------------------------------------------------- promotion between tensors

# what tinygrad's promotion lattice gives for a (op) b; a row per left dtype, columns in ALL order.
# signed ints with uint64 are left out: tinygrad 0.13 gives uint64 there, 0.14 a float.
_ = None
PROMO = {
  B:   [B,   I8,  I16, I32, I64, U8,  U16, U32, U64, F16, F32, F64],
  I8:  [I8,  I8,  I16, I32, I64, I16, I32, I64, _,   F16, F32, F64],
  I16: [I16, I16, I16, I32, I64, I16, I32, I64, _,   F16, F32, F64],
  I32: [I32, I32, I32, I32, I64, I32, I32, I64, _,   F16, F32, F64],
  I64: [I64, I64, I64, I64, I64, I64, I64, I64, _,   F16, F32, F64],
  U8:  [U8,  I16, I16, I32, I64, U8,  U16, U32, U64, F16, F32, F64],
  U16: [U16, I32, I32, I32, I64, U16, U16, U32, U64, F16, F32, F64],
  U32: [U32, I64, I64, I64, I64, U32, U32, U32, U64, F16, F32, F64],
  U64: [U64, _,   _,   _,   _,   U64, U64, U64, U64, F16, F32, F64],
  F16: [F16] * 9 + [F16, F32, F64],
  F32: [F32] * 10 + [F32, F64],
  F64: [F64] * 12,
}
PAIRS = [(a, b, PROMO[a][j]) for a in ALL for j, b in enumerate(ALL) if PROMO[a][j] is not None]

@pytest.mark.parametrize("a,b,res", PAIRS, ids=[f"{ids(a)}+{ids(b)}" for a, b, _r in PAIRS])
def test_binary_promotion(a, b, res):
  # a device is not what this is about: run on PYTHON only, which every machine has
  x, y = np.array([0, 1, 2, 3], NP[a]), np.array([1, 1, 0, 2], NP[b])
  out = Tensor(x, device="PYTHON") + Tensor(y, device="PYTHON")
  expected = (x.astype(np.float64) + y.astype(np.float64)).astype(NP[res]) if res != B else (x | y)
  check(out, expected, res)

@pytest.mark.parametrize("a,b", [(I8, U8), (I32, F16), (U32, I32), (B, F32), (I16, F64), (U8, U16)],
                         ids=lambda d: ids(d))
def test_promotion_mul_sub_max_where(dev, a, b):
  res = PROMO[a][ALL.index(b)]
  x, y = np.array([3, 1, 2], NP[a]) if a != B else np.array([1, 0, 1], np.bool_), np.array([1, 2, 2], NP[b])
  tx, ty = Tensor(x, device=dev), Tensor(y, device=dev)
  fx, fy = x.astype(np.float64), y.astype(np.float64)
  check(tx * ty, (fx * fy).astype(NP[res]), res)
  check(tx.maximum(ty), np.maximum(fx, fy).astype(NP[res]), res)
  cond = Tensor([True, False, True], device=dev)
  check(cond.where(tx, ty), np.where([True, False, True], fx, fy).astype(NP[res]), res)
  if res != B: check(tx - ty, (fx - fy).astype(NP[res]), res)

def test_comparison_results_are_bool(dev):
  x, y = Tensor([1, 5, 3], device=dev, dtype=dtypes.int8), Tensor([2.0, 5.0, 1.0], device=dev)
  check(x < y, [True, False, False], B)
  check(x == y, [False, True, False], B)
  check(x >= 3, [False, True, True], B)
  check(y != 1.0, [True, True, False], B)

# ---------------------------------------------------------------- promotion with python scalars

@pytest.mark.parametrize("dt", [I8, I16, I32, I64, U8, U16, U32, U64], ids=ids)
def test_int_tensor_plus_python_int_keeps_dtype(dev, dt):
  t = Tensor([1, 2, 3], device=dev, dtype=dt)
  check(t + 2, np.array([3, 4, 5], NP[dt]), dt)
  check(3 * t, np.array([3, 6, 9], NP[dt]), dt)

@pytest.mark.parametrize("dt", [I8, I32, I64, U8, U32], ids=ids)
def test_int_tensor_plus_python_float_is_default_float(dev, dt):
  check(Tensor([1, 2, 3], device=dev, dtype=dt) + 0.5, [1.5, 2.5, 3.5], F32)
  check(Tensor([1, 2, 3], device=dev, dtype=dt) * 1.5, [1.5, 3.0, 4.5], F32)

@pytest.mark.parametrize("dt", [F16, F32, F64], ids=ids)
def test_float_tensor_with_python_scalars_keeps_dtype(dev, dt):
  t = Tensor([1.0, 2.0, 4.0], device=dev, dtype=dt)
  check(t + 1, np.array([2, 3, 5], NP[dt]), dt)
  check(t * 0.5, np.array([0.5, 1, 2], NP[dt]), dt)
  check(1 / t, np.array([1, 0.5, 0.25], NP[dt]), dt)

def test_bool_tensor_with_python_scalars(dev):
  t = Tensor([True, False, True], device=dev)
  check(t * 1.5, [1.5, 0.0, 1.5], F32)
  check(t & True, [True, False, True], B)
  check(t | False, [True, False, True], B)
  check(t.where(2.5, -1.0), [2.5, -1.0, 2.5], F32)

def test_where_with_python_scalars(dev):
  c = Tensor([True, False], device=dev)
  check(c.where(Tensor([1, 2], device=dev, dtype=dtypes.int8), 0), np.array([1, 0], np.int8), I8)
  check(c.where(Tensor([1.5, 2.5], device=dev, dtype=dtypes.float16), 0), np.array([1.5, 0], np.float16), F16)

# ---------------------------------------------------------------- dtypes of op results

def test_true_division_of_ints_is_float(dev):
  check(Tensor([1, 2, 7], device=dev) / Tensor([2, 4, 2], device=dev), [0.5, 0.5, 3.5], F32)
  check(Tensor([1, 2, 7], device=dev) / 2, [0.5, 1.0, 3.5], F32)

def test_floor_division_of_ints_stays_int(dev):
  check(Tensor([7, 8, 9], device=dev) // Tensor([2, 3, 4], device=dev), [3, 2, 2], I32)
  check(Tensor([7, 8, 9], device=dev, dtype=dtypes.uint8) // 2, np.array([3, 4, 4], np.uint8), U8)

@pytest.mark.parametrize("fn", ["exp", "log", "sqrt", "sin", "cos", "sigmoid", "tanh", "reciprocal", "exp2", "log2"])
def test_float_unary_on_int_gives_float32(dev, fn):
  x = np.array([1, 2, 3], np.int32)
  ref = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
         "tanh": np.tanh, "reciprocal": lambda v: 1 / v, "exp2": np.exp2, "log2": np.log2}[fn]
  check(getattr(Tensor(x, device=dev), fn)(), ref(x.astype(np.float64)), F32, rtol=1e-5)

@pytest.mark.parametrize("dt", [I8, I32, I64, U8], ids=ids)
def test_int_preserving_unary(dev, dt):
  x = np.array([0, 3, 5], NP[dt])
  t = Tensor(x, device=dev)
  check(t.relu(), x, dt)
  check(t.abs(), x, dt)
  check(t.maximum(2), np.maximum(x, 2).astype(NP[dt]), dt)
  check(t * t, (x * x).astype(NP[dt]), dt)

def test_neg_and_abs_of_signed(dev):
  check(-Tensor([1, -2, 3], device=dev, dtype=dtypes.int8), np.array([-1, 2, -3], np.int8), I8)
  check(Tensor([-1, 2, -3], device=dev, dtype=dtypes.int64).abs(), np.array([1, 2, 3], np.int64), I64)

@pytest.mark.parametrize("dt", [F16, F64], ids=ids)
def test_float_unary_keeps_float_width(dev, dt):
  x = np.array([0.5, 1.0, 2.0], NP[dt])
  t = Tensor(x, device=dev)
  tol = 2e-3 if dt == F16 else 1e-12
  check(t.exp(), np.exp(x), dt, rtol=tol, atol=tol)
  check(t.sqrt(), np.sqrt(x), dt, rtol=tol, atol=tol)
  check(t.sigmoid(), 1 / (1 + np.exp(-x)), dt, rtol=tol, atol=tol)

def test_sum_dtypes(dev):
  # small ints accumulate into (at least) 32 bits; float16 sums stay float16
  check(Tensor([100, 100, 100], device=dev, dtype=dtypes.int8).sum(), np.int32(300), I32)
  check(Tensor([200, 200], device=dev, dtype=dtypes.uint8).sum(), np.uint32(400), U32)
  check(Tensor([60000, 60000], device=dev, dtype=dtypes.uint16).sum(), np.uint32(120000), U32)
  check(Tensor([True, True, False, True], device=dev).sum(), np.int32(3), I32)
  check(Tensor([1, 2], device=dev, dtype=dtypes.int64).sum(), np.int64(3), I64)
  check(Tensor([0.5, 0.25], device=dev, dtype=dtypes.float16).sum(), np.float16(0.75), F16)
  check(Tensor([0.5, 0.25], device=dev, dtype=dtypes.float64).sum(), np.float64(0.75), F64)

def test_mean_of_ints_is_float(dev):
  check(Tensor([1, 2, 4], device=dev).mean(), np.float32(7 / 3), F32)
  check(Tensor([[1, 2], [3, 5]], device=dev, dtype=dtypes.uint8).mean(axis=1), [1.5, 4.0], F32)

def test_max_min_keep_dtype(dev):
  check(Tensor([3, -7, 5], device=dev, dtype=dtypes.int8).max(), np.int8(5), I8)
  check(Tensor([3, -7, 5], device=dev, dtype=dtypes.int8).min(), np.int8(-7), I8)
  check(Tensor([3, 250, 5], device=dev, dtype=dtypes.uint8).max(), np.uint8(250), U8)
  check(Tensor([True, False], device=dev).max(), np.bool_(True), B)
  check(Tensor([0.5, -1.5], device=dev, dtype=dtypes.float16).min(), np.float16(-1.5), F16)

def test_argmax_dtype(dev):
  check(Tensor([0.5, 3.0, -1.0], device=dev).argmax(), np.int32(1), I32)
  check(Tensor([[1, 9], [8, 2]], device=dev, dtype=dtypes.uint8).argmin(axis=1), np.array([0, 1], np.int32), I32)

def test_matmul_dtypes(dev):
  a, b = np.array([[1, 2], [3, 4]], np.int32), np.array([[5, 6], [7, 8]], np.int32)
  check(Tensor(a, device=dev) @ Tensor(b, device=dev), a @ b, I32)
  check(Tensor(a.astype(np.float64), device=dev) @ Tensor(b.astype(np.float64), device=dev), (a @ b).astype(np.float64), F64)
  check(Tensor(a, device=dev) @ Tensor(b.astype(np.float32), device=dev), (a @ b).astype(np.float32), F32)

# ---------------------------------------------------------------- values at the edges of each dtype

def test_int8_wraps_like_c(dev):
  check(Tensor([127, -128], device=dev, dtype=dtypes.int8) + 1, np.array([-128, -127], np.int8), I8)

def test_uint8_wraps(dev):
  check(Tensor([200, 10], device=dev, dtype=dtypes.uint8) + Tensor([100, 250], device=dev, dtype=dtypes.uint8),
        np.array([44, 4], np.uint8), U8)

def test_int32_wraps(dev):
  check(Tensor([2**31 - 1], device=dev, dtype=dtypes.int32) + 1, np.array([-2**31], np.int32), I32)

def test_int64_beyond_32_bits(dev):
  a = np.array([2**40, -(2**50) + 3, 2**62], np.int64)
  check(Tensor(a, device=dev) + 1, a + 1, I64)
  check(Tensor(a, device=dev) * 2, a * 2, I64)

def test_uint32_and_uint64_large(dev):
  a = np.array([2**32 - 1, 2**31], np.uint32)
  check(Tensor(a, device=dev), a, U32)
  check(Tensor(a, device=dev) - Tensor(np.array([1, 1], np.uint32), device=dev), a - 1, U32)
  b = np.array([2**63 + 5, 2**64 - 1], np.uint64)
  check(Tensor(b, device=dev), b, U64)
  check(Tensor(b, device=dev) - Tensor(np.array([5, 1], np.uint64), device=dev), b - np.array([5, 1], np.uint64), U64)

def test_float64_keeps_precision(dev):
  t = Tensor(np.array([1.0, 1e-12, 1e300], np.float64), device=dev)
  out = (t + 1e-12).numpy()
  assert out.dtype == np.float64
  assert out[0] != 1.0 and out[0] - 1.0 == pytest.approx(1e-12, rel=1e-3)
  assert out[1] == pytest.approx(2e-12)
  assert out[2] == 1e300

def test_float16_rounding_and_range(dev):
  a = np.array([1 / 3, 1000.7, 65504.0, 1e-3], np.float16)
  check(Tensor(a, device=dev), a, F16, rtol=0, atol=0)
  with np.errstate(over="ignore"): expected = a * np.float16(2)  # 65504*2 overflows to inf
  check(Tensor(a, device=dev) * 2, expected, F16, rtol=1e-3)

def test_float32_overflow_to_inf(dev):
  out = (Tensor([3e38, -3e38], device=dev) * 10).numpy()
  assert out.dtype == np.float32 and np.isposinf(out[0]) and np.isneginf(out[1])
