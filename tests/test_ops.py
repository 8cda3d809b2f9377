# Tensor ops checked against numpy (values, shapes, dtypes) on every device.
# Uses tinygrad's public API only, so the same file runs against real tinygrad.
import math
import numpy as np
import pytest
from tinygrad import Tensor, dtypes

DEVICES = ["CPU", "PYTHON"]

@pytest.fixture(params=DEVICES)
def dev(request): return request.param

from numpy_check import NP, WEAK, check  # noqa: E402,F401

def rnd(*shape, lo=-2.0, hi=2.0, seed=0):
  return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)

def rint(*shape, lo=-5, hi=6, seed=0):
  return np.random.default_rng(seed).integers(lo, hi, size=shape).astype(np.int32)

# ================================================================ elementwise unary

def _sigmoid(x): return 1 / (1 + np.exp(-x))

UNARY = {
  "neg": (lambda t: -t, np.negative, None),
  "abs": (lambda t: t.abs(), np.abs, None),
  "relu": (lambda t: t.relu(), lambda x: np.maximum(x, 0), None),
  "exp": (lambda t: t.exp(), np.exp, None),
  "exp2": (lambda t: t.exp2(), np.exp2, None),
  "log": (lambda t: t.log(), np.log, "pos"),
  "log2": (lambda t: t.log2(), np.log2, "pos"),
  "sqrt": (lambda t: t.sqrt(), np.sqrt, "pos"),
  "rsqrt": (lambda t: t.rsqrt(), lambda x: 1 / np.sqrt(x), "pos"),
  "sin": (lambda t: t.sin(), np.sin, None),
  "cos": (lambda t: t.cos(), np.cos, None),
  "tan": (lambda t: t.tan(), np.tan, "small"),
  "sigmoid": (lambda t: t.sigmoid(), _sigmoid, None),
  "tanh": (lambda t: t.tanh(), np.tanh, None),
  "reciprocal": (lambda t: t.reciprocal(), np.reciprocal, "pos"),
  "square": (lambda t: t.square(), np.square, None),
  "sign": (lambda t: t.sign(), np.sign, None),
  "floor": (lambda t: t.floor(), np.floor, None),
  "ceil": (lambda t: t.ceil(), np.ceil, None),
  "trunc": (lambda t: t.trunc(), np.trunc, None),
}

@pytest.mark.parametrize("name", list(UNARY))
def test_unary(dev, name):
  fn, ref, domain = UNARY[name]
  x = rnd(3, 5, lo=0.1, hi=4.0) if domain == "pos" else rnd(3, 5, lo=-1.2, hi=1.2) if domain == "small" else rnd(3, 5, lo=-3.5, hi=3.5)
  check(fn(Tensor(x, device=dev)), ref(x.astype(np.float64)).astype(np.float32), rtol=1e-5, atol=1e-5)

def test_unary_special_values(dev):
  t = Tensor([0.0, 1.0, -1.0, 4.0], device=dev)
  out = t.log().numpy()
  assert np.isneginf(out[0]) and out[1] == 0 and np.isnan(out[2])
  out = t.sqrt().numpy()
  assert np.isnan(out[2]) and out[3] == pytest.approx(2.0)
  out = Tensor([-100.0, 100.0, 0.0], device=dev).sigmoid().numpy()
  np.testing.assert_allclose(out, [0.0, 1.0, 0.5], atol=1e-6)
  out = Tensor([-50.0, 50.0], device=dev).tanh().numpy()
  np.testing.assert_allclose(out, [-1.0, 1.0], atol=1e-6)
  assert np.isposinf(Tensor([100.0], device=dev).exp().numpy()[0])

def test_sin_cos_large_arguments(dev):
  x = np.array([0.0, math.pi / 2, math.pi, 10.0, -25.0, 100.0], np.float32)
  check(Tensor(x, device=dev).sin(), np.sin(x.astype(np.float64)).astype(np.float32), atol=1e-4)
  check(Tensor(x, device=dev).cos(), np.cos(x.astype(np.float64)).astype(np.float32), atol=1e-4)

def test_unary_on_int(dev):
  x = rint(4, 3)
  t = Tensor(x, device=dev)
  check(-t, -x)
  check(t.abs(), np.abs(x))
  check(t.relu(), np.maximum(x, 0))
  check(t.square(), x * x)
  check(t.sign(), np.sign(x))

def test_logical_not_and_invert(dev):
  b = np.array([True, False, False, True])
  check(Tensor(b, device=dev).logical_not(), ~b)
  check(~Tensor(b, device=dev), ~b)
  x = np.array([0, 5, -3], np.int32)
  check(~Tensor(x, device=dev), ~x)

# ================================================================ elementwise binary

BINARY = {
  "add": (lambda a, b: a + b, np.add),
  "sub": (lambda a, b: a - b, np.subtract),
  "mul": (lambda a, b: a * b, np.multiply),
  "div": (lambda a, b: a / b, np.divide),
  "maximum": (lambda a, b: a.maximum(b), np.maximum),
  "minimum": (lambda a, b: a.minimum(b), np.minimum),
}

@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("sa,sb", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((1,), (5,)),
                                   ((), (2, 3)), ((4, 1, 1), ())], ids=str)
def test_binary_broadcast(dev, name, sa, sb):
  fn, ref = BINARY[name]
  a, b = rnd(*sa, seed=1), rnd(*sb, lo=0.5, hi=2.0, seed=2)
  check(fn(Tensor(a, device=dev), Tensor(b, device=dev)), ref(a, b), rtol=1e-5, atol=1e-6)

@pytest.mark.parametrize("name", ["add", "sub", "mul", "maximum", "minimum"])
def test_binary_int(dev, name):
  fn, ref = BINARY[name]
  a, b = rint(3, 4, seed=3), rint(4, seed=4)
  check(fn(Tensor(a, device=dev), Tensor(b, device=dev)), ref(a, b))

def test_python_scalars_both_sides(dev):
  x = rnd(2, 3, lo=0.5, hi=3.0)
  t = Tensor(x, device=dev)
  check(t + 2, x + 2)
  check(2 + t, 2 + x)
  check(t - 1.5, x - 1.5)
  check(1.5 - t, 1.5 - x)
  check(t * 3, x * 3)
  check(3 * t, 3 * x)
  check(t / 4, x / 4)
  check(4 / t, 4 / x)
  check(t ** 2, x ** 2)
  check(2 ** t, (2.0 ** x.astype(np.float64)).astype(np.float32))
  check(t.maximum(1.0), np.maximum(x, 1.0))
  check(t.minimum(1), np.minimum(x, 1.0))

def test_int_python_scalars(dev):
  x = rint(5, seed=5)
  t = Tensor(x, device=dev)
  check(t + 3, x + 3)
  check(10 - t, 10 - x)
  check(t * -2, x * -2)
  check(t ** 2, x ** 2)
  check(t ** 3, x ** 3)

def test_pow(dev):
  base = rnd(2, 4, lo=0.2, hi=3.0, seed=6)
  ex = rnd(2, 4, lo=-2.0, hi=2.0, seed=7)
  check(Tensor(base, device=dev) ** Tensor(ex, device=dev), np.power(base.astype(np.float64), ex).astype(np.float32), rtol=1e-4)
  check(Tensor(base, device=dev).pow(0.5), np.sqrt(base), rtol=1e-5)
  check(Tensor(base, device=dev) ** 0, np.ones_like(base))
  check(Tensor(base, device=dev) ** -1, 1 / base, rtol=1e-5)

def test_pow_negative_base_integer_exponent(dev):
  x = np.array([-2.0, -1.5, 0.0, 3.0], np.float32)
  check(Tensor(x, device=dev) ** 2, x ** 2)
  check(Tensor(x, device=dev) ** 3, x ** 3, rtol=1e-5)

def test_division_by_zero(dev):
  out = (Tensor([1.0, -1.0, 0.0], device=dev) / Tensor([0.0, 0.0, 0.0], device=dev)).numpy()
  assert np.isposinf(out[0]) and np.isneginf(out[1]) and np.isnan(out[2])

def test_int_floordiv_and_mod(dev):
  a = np.array([7, 8, 9, 0, 100], np.int32)
  b = np.array([2, 3, 4, 5, 7], np.int32)
  check(Tensor(a, device=dev) // Tensor(b, device=dev), a // b)
  check(Tensor(a, device=dev) % Tensor(b, device=dev), a % b)
  check(Tensor(a, device=dev) // 3, a // 3)
  check(Tensor(a, device=dev) % 3, a % 3)

def test_bitwise(dev):
  a, b = np.array([12, 5, 0, 255], np.int32), np.array([10, 3, 7, 15], np.int32)
  ta, tb = Tensor(a, device=dev), Tensor(b, device=dev)
  check(ta & tb, a & b)
  check(ta | tb, a | b)
  check(ta ^ tb, a ^ b)
  check(ta << 2, a << 2)
  check(ta >> 1, a >> 1)
  p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
  check(Tensor(p, device=dev) & Tensor(q, device=dev), p & q)
  check(Tensor(p, device=dev) | Tensor(q, device=dev), p | q)
  check(Tensor(p, device=dev) ^ Tensor(q, device=dev), p ^ q)

def test_clip(dev):
  x = rnd(4, 5, lo=-3, hi=3, seed=8)
  check(Tensor(x, device=dev).clip(-1, 1.5), np.clip(x, -1, 1.5))
  check(Tensor(x, device=dev).clip(0, 0.5), np.clip(x, 0, 0.5))
  xi = rint(6, seed=9)
  check(Tensor(xi, device=dev).clip(-2, 2), np.clip(xi, -2, 2))

# ================================================================ comparisons and where

CMP = {"lt": (lambda a, b: a < b, np.less), "le": (lambda a, b: a <= b, np.less_equal), "gt": (lambda a, b: a > b, np.greater),
       "ge": (lambda a, b: a >= b, np.greater_equal), "eq": (lambda a, b: a == b, np.equal), "ne": (lambda a, b: a != b, np.not_equal)}

@pytest.mark.parametrize("name", list(CMP))
def test_compare(dev, name):
  fn, ref = CMP[name]
  a, b = rint(3, 4, lo=-2, hi=3, seed=10).astype(np.float32), rint(4, lo=-2, hi=3, seed=11).astype(np.float32)
  check(fn(Tensor(a, device=dev), Tensor(b, device=dev)), ref(a, b))
  check(fn(Tensor(a, device=dev), 1.0), ref(a, 1.0))
  ai = a.astype(np.int32)
  check(fn(Tensor(ai, device=dev), 0), ref(ai, 0))

def test_compare_python_scalar_on_left(dev):
  x = np.array([1.0, 2.0, 3.0], np.float32)
  check(2.0 < Tensor(x, device=dev), 2.0 < x)
  check(2 >= Tensor(x, device=dev), 2 >= x)

def test_where(dev):
  c = rnd(3, 4, seed=12) > 0
  x, y = rnd(3, 4, seed=13), rnd(4, seed=14)
  tc = Tensor(c, device=dev)
  check(tc.where(Tensor(x, device=dev), Tensor(y, device=dev)), np.where(c, x, y))
  check(Tensor.where(tc, Tensor(x, device=dev), 0.0), np.where(c, x, 0.0).astype(np.float32))
  check(tc.where(1.0, Tensor(y, device=dev)), np.where(c, 1.0, y).astype(np.float32))
  check((Tensor(x, device=dev) > 0).where(Tensor(x, device=dev), Tensor(x, device=dev) * 0.1), np.where(x > 0, x, x * 0.1))

def test_where_broadcasts_condition(dev):
  c = np.array([[True], [False]])
  x = rint(2, 3, seed=15)
  check(Tensor(c, device=dev).where(Tensor(x, device=dev), -1), np.where(c, x, -1).astype(np.int32))

# ================================================================ reductions

REDUCE = {
  "sum": (lambda t, **kw: t.sum(**kw), np.sum),
  "mean": (lambda t, **kw: t.mean(**kw), np.mean),
  "max": (lambda t, **kw: t.max(**kw), np.max),
  "min": (lambda t, **kw: t.min(**kw), np.min),
  "prod": (lambda t, **kw: t.prod(**kw), np.prod),
}
AXES = [None, 0, 1, 2, -1, -2, (0, 2), (1, 2), (0, 1, 2), (-1, 0)]

@pytest.mark.parametrize("name", list(REDUCE))
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduce(dev, name, axis, keepdim):
  fn, ref = REDUCE[name]
  x = rnd(2, 3, 4, lo=0.5, hi=1.5, seed=16) if name == "prod" else rnd(2, 3, 4, seed=16)
  check(fn(Tensor(x, device=dev), axis=axis, keepdim=keepdim), ref(x, axis=axis, keepdims=keepdim), rtol=1e-5, atol=1e-5)

@pytest.mark.parametrize("name", ["sum", "max", "min", "prod"])
def test_reduce_int(dev, name):
  fn, ref = REDUCE[name]
  x = rint(3, 4, lo=-3, hi=4, seed=17)
  # numpy sums/multiplies int32 into int64; tinygrad keeps int32
  check(fn(Tensor(x, device=dev)), ref(x).astype(np.int32))
  check(fn(Tensor(x, device=dev), axis=1), ref(x, axis=1).astype(np.int32))
  check(fn(Tensor(x, device=dev), axis=0, keepdim=True), ref(x, axis=0, keepdims=True).astype(np.int32))

def test_reduce_defaults_positional_axis(dev):
  x = rnd(3, 4, seed=18)
  t = Tensor(x, device=dev)
  check(t.sum(), x.sum())
  check(t.sum(1), x.sum(1))
  check(t.max(0), x.max(0))
  check(t.mean(-1), x.mean(-1))

def test_reduce_all_negative(dev):
  x = -rnd(4, 5, lo=1.0, hi=9.0, seed=19)
  check(Tensor(x, device=dev).max(), x.max())
  check(Tensor(x, device=dev).max(axis=1), x.max(axis=1))

def test_reduce_size_one_and_0d(dev):
  x = rnd(1, 3, 1, seed=20)
  t = Tensor(x, device=dev)
  check(t.sum(axis=0), x.sum(axis=0))
  check(t.sum(axis=2, keepdim=True), x.sum(axis=2, keepdims=True))
  check(t.max(axis=(0, 2)), x.max(axis=(0, 2)))
  s = Tensor([2.5], device=dev).reshape(())
  check(s.sum(), np.float32(2.5))
  check(s.max(), np.float32(2.5))

def test_reduce_large_row(dev):
  x = rnd(2, 1000, seed=21)
  check(Tensor(x, device=dev).sum(axis=1), x.sum(axis=1), rtol=1e-4, atol=1e-4)
  check(Tensor(x, device=dev).max(), x.max())

@pytest.mark.parametrize("fname", ["argmax", "argmin"])
def test_argmax_argmin(dev, fname):
  ref = np.argmax if fname == "argmax" else np.argmin
  x = rnd(3, 4, 5, seed=22)
  t = Tensor(x, device=dev)
  check(getattr(t, fname)(), np.int32(ref(x)), dtypes.int32)
  for axis in (0, 1, 2, -1):
    check(getattr(t, fname)(axis=axis), ref(x, axis=axis).astype(np.int32), dtypes.int32)
    check(getattr(t, fname)(axis=axis, keepdim=True), np.expand_dims(ref(x, axis=axis), axis).astype(np.int32), dtypes.int32)

def test_argmax_ties_pick_first(dev):
  x = np.array([[1, 5, 5, 0], [7, 7, 7, 7], [0, 0, -1, -1]], np.int32)
  check(Tensor(x, device=dev).argmax(axis=1), np.argmax(x, axis=1).astype(np.int32), dtypes.int32)
  check(Tensor(x, device=dev).argmin(axis=1), np.argmin(x, axis=1).astype(np.int32), dtypes.int32)
  check(Tensor(x, device=dev).argmax(), np.int32(np.argmax(x)), dtypes.int32)

def test_reduce_bool(dev):
  b = np.array([[True, False, True], [False, False, False]])
  check(Tensor(b, device=dev).sum(axis=1), b.sum(axis=1).astype(np.int32), dtypes.int32)
  check(Tensor(b, device=dev).max(axis=1), b.max(axis=1))

def test_empty_reduce(dev):
  check(Tensor.zeros(0, 3, device=dev).sum(axis=0), np.zeros(3, np.float32))
  check(Tensor.ones(2, 0, device=dev).sum(axis=1), np.zeros(2, np.float32))

# ================================================================ reduce results feeding more work

def test_softmax(dev):
  x = rnd(4, 6, lo=-4, hi=4, seed=23)
  e = np.exp(x - x.max(axis=1, keepdims=True))
  ref = e / e.sum(axis=1, keepdims=True)
  t = Tensor(x, device=dev)
  check(t.softmax(axis=-1), ref, rtol=1e-5)
  manual = (t - t.max(axis=1, keepdim=True)).exp()
  check(manual / manual.sum(axis=1, keepdim=True), ref, rtol=1e-5)
  check(t.softmax(axis=0), np.exp(x) / np.exp(x).sum(axis=0, keepdims=True), rtol=1e-5)

def test_center_and_variance(dev):
  x = rnd(5, 7, seed=24)
  t = Tensor(x, device=dev)
  check(t - t.mean(), x - x.mean(), atol=1e-5)
  centered = t - t.mean(axis=1, keepdim=True)
  check((centered * centered).mean(axis=1), x.var(axis=1), atol=1e-5)
  check(((centered * centered).mean(axis=1) + 1e-5).sqrt().sum(), np.sqrt(x.var(axis=1) + 1e-5).sum(), rtol=1e-5)

def test_reduce_of_reduce(dev):
  x = rnd(3, 4, 5, seed=25)
  t = Tensor(x, device=dev)
  check(t.sum(axis=2).max(axis=1), x.sum(axis=2).max(axis=1))
  check((t.max(axis=0) * 2 + 1).sum(), (x.max(axis=0) * 2 + 1).sum(), rtol=1e-5, atol=1e-5)
  check(t.mean(axis=(0, 1)).argmax(), np.int32(x.mean(axis=(0, 1)).argmax()), dtypes.int32)

def test_reduced_value_used_twice(dev):
  x = rnd(4, 4, seed=26)
  t = Tensor(x, device=dev)
  s = t.sum(axis=0)
  check(s * s + s, x.sum(axis=0) ** 2 + x.sum(axis=0), rtol=1e-5, atol=1e-5)
  check(t / s, x / x.sum(axis=0), rtol=1e-4, atol=1e-5)

# ================================================================ movement

def test_reshape(dev):
  x = rnd(2, 3, 4, seed=27)
  t = Tensor(x, device=dev)
  check(t.reshape(6, 4), x.reshape(6, 4))
  check(t.reshape((4, 6)), x.reshape(4, 6))
  check(t.reshape(-1), x.reshape(-1))
  check(t.reshape(2, -1), x.reshape(2, -1))
  check(t.reshape(-1, 3, 2), x.reshape(-1, 3, 2))
  check(t.reshape(1, 24, 1), x.reshape(1, 24, 1))
  check(Tensor([7.0], device=dev).reshape(()), np.float32(7.0))
  check(Tensor([7.0], device=dev).reshape(()).reshape(1, 1), np.full((1, 1), 7.0, np.float32))

def test_permute(dev):
  x = rnd(2, 3, 4, seed=28)
  t = Tensor(x, device=dev)
  check(t.permute(2, 0, 1), x.transpose(2, 0, 1))
  check(t.permute((1, 2, 0)), x.transpose(1, 2, 0))
  check(t.permute(0, 1, 2), x)

def test_expand(dev):
  x = rnd(3, 1, seed=29)
  t = Tensor(x, device=dev)
  check(t.expand(3, 4), np.broadcast_to(x, (3, 4)))
  check(t.expand((2, 3, 5)), np.broadcast_to(x, (2, 3, 5)))
  check(t.expand(-1, 4), np.broadcast_to(x, (3, 4)))
  check(Tensor([1.5], device=dev).reshape(()).expand(2, 2), np.full((2, 2), 1.5, np.float32))

def test_pad(dev):
  x = rnd(2, 3, seed=30)
  t = Tensor(x, device=dev)
  check(t.pad(((1, 2), (0, 1))), np.pad(x, ((1, 2), (0, 1))))
  check(t.pad(((0, 0), (2, 2)), value=-1.5), np.pad(x, ((0, 0), (2, 2)), constant_values=-1.5))
  check(t.pad((None, (1, 0))), np.pad(x, ((0, 0), (1, 0))))
  xi = rint(3, seed=31)
  check(Tensor(xi, device=dev).pad(((2, 1),)), np.pad(xi, (2, 1)))

def test_shrink(dev):
  x = rnd(4, 5, seed=32)
  t = Tensor(x, device=dev)
  check(t.shrink(((1, 3), (0, 5))), x[1:3, 0:5])
  check(t.shrink(((0, 4), (2, 3))), x[:, 2:3])
  check(t.shrink((None, (1, 4))), x[:, 1:4])

def test_flip(dev):
  x = rnd(2, 3, 4, seed=33)
  t = Tensor(x, device=dev)
  check(t.flip(0), np.flip(x, 0))
  check(t.flip(-1), np.flip(x, -1))
  check(t.flip((0, 2)), np.flip(x, (0, 2)))

def test_transpose(dev):
  x = rnd(2, 3, 4, seed=34)
  check(Tensor(x[0], device=dev).transpose(), x[0].T)
  check(Tensor(x, device=dev).transpose(0, 2), np.swapaxes(x, 0, 2))
  check(Tensor(x, device=dev).transpose(-1, -2), np.swapaxes(x, -1, -2))

def test_flatten(dev):
  x = rnd(2, 3, 4, seed=35)
  t = Tensor(x, device=dev)
  check(t.flatten(), x.reshape(-1))
  check(t.flatten(1), x.reshape(2, 12))
  check(t.flatten(0, 1), x.reshape(6, 4))
  check(Tensor([3.0], device=dev).reshape(()).flatten(), np.array([3.0], np.float32))

def test_squeeze_unsqueeze(dev):
  x = rnd(1, 3, 1, 2, seed=36)
  t = Tensor(x, device=dev)
  check(t.squeeze(), x.squeeze())
  check(t.squeeze(0), x.squeeze(0))
  check(t.squeeze(-2), x.squeeze(-2))
  check(t.squeeze(1), x)  # not size 1: unchanged, like torch
  y = rnd(3, 2, seed=37)
  u = Tensor(y, device=dev)
  check(u.unsqueeze(0), y[None])
  check(u.unsqueeze(1), y[:, None])
  check(u.unsqueeze(-1), y[..., None])
  check(u.unsqueeze(2), y[:, :, None])

GETITEM = [
  (1,), (-1,), (slice(1, 3),), (slice(None, None, 2),), (slice(None, None, -1),), (slice(3, 0, -2),), (slice(-2, None),),
  (slice(2, 100),), (slice(None), 1), (slice(None), -2, slice(1, None)), (1, 2, 3), (-1, -1, -1), (None,),
  (slice(None), None, slice(1, None)), (1, slice(None, None, -1)), (slice(None, None, -2), slice(None), slice(None, None, 3)),
  (slice(None, 1), None, 0, None), (0, slice(None, -1), slice(4, 0, -1)), (slice(2, 2),),
]

@pytest.mark.parametrize("idx", GETITEM, ids=str)
def test_getitem(dev, idx):
  x = rnd(4, 3, 5, seed=38)
  check(Tensor(x, device=dev)[idx if len(idx) > 1 else idx[0]], x[idx if len(idx) > 1 else idx[0]])

def test_getitem_int_tensor_values(dev):
  x = rint(5, 4, seed=39)
  t = Tensor(x, device=dev)
  check(t[2], x[2])
  check(t[:, ::-1][1:4:2], x[:, ::-1][1:4:2])
  check(t[-1][-1], x[-1][-1])

def test_cat(dev):
  a, b, c = rnd(2, 3, seed=40), rnd(4, 3, seed=41), rnd(2, 5, seed=42)
  ta, tb, tc = Tensor(a, device=dev), Tensor(b, device=dev), Tensor(c, device=dev)
  check(ta.cat(tb), np.concatenate([a, b]))
  check(ta.cat(tb, dim=0), np.concatenate([a, b], 0))
  check(Tensor.cat(ta, tc, dim=1), np.concatenate([a, c], 1))
  check(ta.cat(tc, ta, dim=-1), np.concatenate([a, c, a], -1))
  check(ta.cat(ta, ta), np.concatenate([a, a, a]))

def test_cat_int_and_1d(dev):
  a, b = rint(3, seed=43), rint(1, seed=44)
  check(Tensor(a, device=dev).cat(Tensor(b, device=dev)), np.concatenate([a, b]))

def test_stack(dev):
  a, b, c = rnd(2, 3, seed=45), rnd(2, 3, seed=46), rnd(2, 3, seed=47)
  ta, tb, tc = Tensor(a, device=dev), Tensor(b, device=dev), Tensor(c, device=dev)
  check(ta.stack(tb), np.stack([a, b]))
  check(Tensor.stack(ta, tb, tc, dim=1), np.stack([a, b, c], 1))
  check(ta.stack(tb, dim=-1), np.stack([a, b], -1))
  check(Tensor([1.0], device=dev).reshape(()).stack(Tensor([2.0], device=dev).reshape(())), np.array([1.0, 2.0], np.float32))

# ================================================================ non-contiguous views feeding ops

def test_ops_after_permute(dev):
  x, y = rnd(3, 4, seed=48), rnd(4, 3, seed=49)
  tx, ty = Tensor(x, device=dev), Tensor(y, device=dev)
  check(tx.permute(1, 0) + ty, x.T + y)
  check(tx.permute(1, 0).exp().sum(axis=1), np.exp(x.T).sum(axis=1), rtol=1e-5)
  check(tx.permute(1, 0).reshape(-1), x.T.reshape(-1))
  check(tx.permute(1, 0).reshape(2, 6) * 2, x.T.reshape(2, 6) * 2)

def test_ops_after_shrink_and_flip(dev):
  x = rnd(5, 6, seed=50)
  t = Tensor(x, device=dev)
  check(t[1:4, ::-1].sum(axis=0), x[1:4, ::-1].sum(axis=0), rtol=1e-5, atol=1e-5)
  check(t.flip(0)[::2] * t[:3], x[::-1][::2] * x[:3])
  check(t.shrink(((1, 3), (2, 6))).reshape(-1), x[1:3, 2:6].reshape(-1))
  check(t.flip((0, 1)).reshape(3, 10).max(axis=1), x[::-1, ::-1].reshape(3, 10).max(axis=1))

def test_ops_after_pad(dev):
  x = rnd(2, 3, seed=51)
  t = Tensor(x, device=dev)
  check(t.pad(((1, 1), (1, 1))).exp(), np.exp(np.pad(x, 1)), rtol=1e-5)
  check(t.pad(((0, 1), (2, 0))).sum(axis=0), np.pad(x, ((0, 1), (2, 0))).sum(axis=0), atol=1e-6)
  check(t.pad(((1, 1), (0, 0))).reshape(-1), np.pad(x, ((1, 1), (0, 0))).reshape(-1))
  check((t + 1).pad(((1, 0), (0, 0)), value=-5.0).max(axis=1), np.pad(x + 1, ((1, 0), (0, 0)), constant_values=-5.0).max(axis=1))

def test_ops_after_expand(dev):
  x = rnd(3, 1, seed=52)
  t = Tensor(x, device=dev)
  check(t.expand(3, 4).sum(axis=1), np.broadcast_to(x, (3, 4)).sum(axis=1))
  check(t.expand(3, 4).permute(1, 0).reshape(-1), np.broadcast_to(x, (3, 4)).T.reshape(-1))

def test_movement_chain(dev):
  x = rnd(2, 3, 4, seed=53)
  t = Tensor(x, device=dev)
  out = t.permute(2, 0, 1).flip(1).pad(((0, 0), (1, 0), (0, 2)))[1:, :, ::2].reshape(3, -1)
  ref = np.pad(x.transpose(2, 0, 1)[:, ::-1], ((0, 0), (1, 0), (0, 2)))[1:, :, ::2].reshape(3, -1)
  check(out, ref)
  check(out.sum(axis=1), ref.sum(axis=1), atol=1e-5)

# ================================================================ matmul

def test_matmul_2d(dev):
  a, b = rnd(3, 4, seed=54), rnd(4, 5, seed=55)
  check(Tensor(a, device=dev) @ Tensor(b, device=dev), a @ b, rtol=1e-5, atol=1e-5)
  check(Tensor(a, device=dev).matmul(Tensor(b, device=dev)), a @ b, rtol=1e-5, atol=1e-5)

def test_matmul_batched(dev):
  a, b = rnd(2, 3, 4, seed=56), rnd(2, 4, 5, seed=57)
  check(Tensor(a, device=dev) @ Tensor(b, device=dev), a @ b, rtol=1e-5, atol=1e-5)
  w = rnd(4, 2, seed=58)
  check(Tensor(a, device=dev) @ Tensor(w, device=dev), a @ w, rtol=1e-5, atol=1e-5)
  c = rnd(3, 1, 2, 4, seed=59)
  check(Tensor(c, device=dev) @ Tensor(b, device=dev), c @ b, rtol=1e-5, atol=1e-5)

def test_matmul_vectors(dev):
  m, v, u = rnd(3, 4, seed=60), rnd(4, seed=61), rnd(3, seed=62)
  check(Tensor(m, device=dev) @ Tensor(v, device=dev), m @ v, rtol=1e-5, atol=1e-5)
  check(Tensor(u, device=dev) @ Tensor(m, device=dev), u @ m, rtol=1e-5, atol=1e-5)
  check(Tensor(v, device=dev) @ Tensor(v, device=dev), np.float32(v @ v), rtol=1e-5)

def test_matmul_int(dev):
  a, b = rint(3, 4, seed=63), rint(4, 2, seed=64)
  check(Tensor(a, device=dev) @ Tensor(b, device=dev), a @ b)

def test_matmul_odd_shapes(dev):
  a, b = rnd(1, 7, seed=65), rnd(7, 1, seed=66)
  check(Tensor(a, device=dev) @ Tensor(b, device=dev), a @ b, rtol=1e-5)
  check(Tensor(b, device=dev) @ Tensor(a, device=dev), b @ a, rtol=1e-5)
  c, d = rnd(17, 33, seed=67), rnd(33, 9, seed=68)
  check(Tensor(c, device=dev) @ Tensor(d, device=dev), c @ d, rtol=1e-4, atol=1e-4)

def test_matmul_of_views(dev):
  a, b = rnd(4, 3, seed=69), rnd(5, 4, seed=70)
  ta, tb = Tensor(a, device=dev), Tensor(b, device=dev)
  check(ta.permute(1, 0) @ tb.permute(1, 0), a.T @ b.T, rtol=1e-5, atol=1e-5)
  check(ta.flip(0)[1:] @ tb[:3, ::-1][:, :3].transpose(), a[::-1][1:] @ b[:3, ::-1][:, :3].T, rtol=1e-5, atol=1e-5)

def test_linear_layer_chain(dev):
  x, w1, w2 = rnd(4, 8, seed=71), rnd(8, 6, seed=72), rnd(6, 3, seed=73)
  h = np.maximum(x @ w1 + 0.1, 0)
  logits = h @ w2
  e = np.exp(logits - logits.max(axis=1, keepdims=True))
  ref = e / e.sum(axis=1, keepdims=True)
  out = ((Tensor(x, device=dev) @ Tensor(w1, device=dev) + 0.1).relu() @ Tensor(w2, device=dev)).softmax(axis=1)
  check(out, ref, rtol=1e-4, atol=1e-5)
