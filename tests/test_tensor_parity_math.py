# tinygrad 0.14's math, elementwise, reduction and loss API, each op checked against torch (forward values and the
# gradient of a weighted sum of its outputs) on CPU and PYTHON, with zero-size, extreme-value and bad-argument cases.
# Uses tinygrad's public API only.
import math
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tinygrad import Tensor, dtypes

DEVICES = ["CPU", "PYTHON"]

@pytest.fixture(params=DEVICES)
def dev(request): return request.param

def rnd(*shape, lo=-2.0, hi=2.0, seed=0):
  return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)

def agree(fn, tfn, *arrays, dev="CPU", rtol=1e-4, atol=1e-5, grad=True, seed=1):
  """fn on tinygrad tensors and tfn on torch tensors agree in value and dtype and, with grad, in the gradient of a
  weighted sum of the output (so every output element's derivative counts, not only their sum's)."""
  xs = [Tensor(a, device=dev, requires_grad=grad) for a in arrays]
  ts = [torch.tensor(a, requires_grad=grad) for a in arrays]
  out, ref = fn(*xs), tfn(*ts)
  o, r = out.numpy(), ref.detach().numpy()
  assert o.shape == r.shape, f"shape {o.shape} != {r.shape}"
  if np.issubdtype(r.dtype, np.floating): np.testing.assert_allclose(o, r, rtol=rtol, atol=atol)
  else: np.testing.assert_array_equal(o, r)
  if not grad: return
  w = np.random.default_rng(seed).uniform(0.5, 1.5, size=r.shape).astype(np.float32)
  (out * Tensor(w, device=dev)).sum().backward()
  (ref * torch.tensor(w)).sum().backward()
  for x, t in zip(xs, ts):
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)

# ================================================================ new elementwise ops

UNARY = {
  "erf": (lambda t: t.erf(), torch.erf, (-3, 3)),
  "atan": (lambda t: t.atan(), torch.atan, (-5, 5)),
  "asin": (lambda t: t.asin(), torch.asin, (-0.95, 0.95)),
  "acos": (lambda t: t.acos(), torch.acos, (-0.95, 0.95)),
  "asinh": (lambda t: t.asinh(), torch.asinh, (-5, 5)),
  "acosh": (lambda t: t.acosh(), torch.acosh, (1.1, 6)),
  "atanh": (lambda t: t.atanh(), torch.atanh, (-0.9, 0.9)),
  "log10": (lambda t: t.log10(), torch.log10, (0.1, 10)),
  "logsigmoid": (lambda t: t.logsigmoid(), F.logsigmoid, (-5, 5)),
  "gelu_erf": (lambda t: t.gelu(approximate="none"), F.gelu, (-4, 4)),
  "gelu_tanh": (lambda t: t.gelu(approximate="tanh"), lambda t: F.gelu(t, approximate="tanh"), (-4, 4)),
}

@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, dev):
  fn, tfn, (lo, hi) = UNARY[name]
  agree(fn, tfn, rnd(3, 7, lo=lo, hi=hi), dev=dev, rtol=2e-4, atol=2e-5)

def test_odd_functions_have_their_slope_at_zero():
  # built from |x|: the derivative at exactly 0 must still be f'(0), not sign's 0
  for name, slope in (("erf", 2 / math.sqrt(math.pi)), ("asinh", 1.0), ("asin", 1.0), ("atan", 1.0)):
    x = Tensor([0.0], requires_grad=True)
    getattr(x, name)().sum().backward()
    assert x.grad.numpy()[0] == pytest.approx(slope, rel=1e-3), name

def test_inverse_trig_outside_domain_is_nan():
  x = Tensor([-300.0, 1.5, 300.0])
  for name in ("asin", "acos", "atanh"): assert np.isnan(getattr(x, name)().numpy()).all(), name
  assert np.isnan(Tensor([0.5, -300.0]).acosh().numpy()).all()
  np.testing.assert_allclose(Tensor([-300.0, 300.0]).asinh().numpy(), np.arcsinh([-300.0, 300.0]), rtol=1e-6)  # no cancellation
  np.testing.assert_allclose(Tensor([-400.0, 400.0]).erf().numpy(), [-1.0, 1.0])

BINARY = {
  "copysign": (lambda a, b: a.copysign(b), torch.copysign),
  "logaddexp": (lambda a, b: a.logaddexp(b), torch.logaddexp),
  "fmod": (lambda a, b: a.fmod(b), torch.fmod),
}

@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name, dev):
  fn, tfn = BINARY[name]
  b = rnd(4, 5, seed=3)
  b[np.abs(b) < 0.2] = 0.7  # fmod's derivative jumps where a/b is an integer; keep away from tiny divisors
  agree(fn, tfn, rnd(4, 5), b, dev=dev)
  agree(fn, tfn, rnd(4, 5), rnd(1, 5, seed=4) + 3, dev=dev)  # broadcast

def test_copysign_signed_zero():
  a, b = [1.0, -1.0, 0.0, 2.0], [-0.0, 0.0, -1.0, -0.0]
  np.testing.assert_array_equal(Tensor(a).copysign(Tensor(b)).numpy(), torch.copysign(torch.tensor(a), torch.tensor(b)).numpy())

def test_fmod_int(dev):
  a, b = [-7, 7, 5, -5, 0], [3, -3, 2, 2, 4]
  np.testing.assert_array_equal(Tensor(a, device=dev).fmod(Tensor(b, device=dev)).numpy(), np.fmod(a, b))
  np.testing.assert_array_equal((Tensor(a, device=dev) % Tensor(b, device=dev)).numpy(), np.mod(a, b))  # % still floors

def test_logaddexp_extremes():
  a, b = [1.0, 2000.0, 30000.0, -300.0], [-1.0, 2.0, 3.0, -300.0]
  agree(lambda x, y: x.logaddexp(y), torch.logaddexp, np.float32(a), np.float32(b))

def test_isclose_allclose():
  a = [math.inf, -math.inf, math.nan, 0.0, 1.0, 1e-7]
  b = [math.inf, math.inf, math.nan, 1e-9, 1.0 + 1e-6, 0.0]
  for kw in ({}, {"equal_nan": True}, {"atol": 0.0}, {"rtol": 0.1}):
    np.testing.assert_array_equal(Tensor(a).isclose(Tensor(b), **kw).numpy(), torch.isclose(torch.tensor(a), torch.tensor(b), **kw).numpy())
  assert Tensor([1.0, 2.0]).allclose(Tensor([1.0, 2.0 + 1e-7])).item() is True  # a bool Tensor, as tinygrad 0.14
  assert Tensor([1.0, 2.0]).allclose(Tensor([1.0, 2.1])).item() is False

def test_isinf_keywords():
  v = [-math.inf, 0.0, math.inf, math.nan]
  assert Tensor(v).isinf().tolist() == [True, False, True, False]
  assert Tensor(v).isinf(detect_negative=False).tolist() == [False, False, True, False]
  assert Tensor(v).isinf(detect_positive=False).tolist() == [True, False, False, False]
  assert Tensor(v).isinf(False, False).tolist() == [False] * 4

def test_in_place_and_reflected_operators(dev):
  t = Tensor([1, 2, 3], device=dev).contiguous().realize()
  t //= 2; t **= 2; t |= 8; t &= 9; t ^= 3; t <<= 2; t >>= 1
  ref = np.array([1, 2, 3], np.int32)
  ref //= 2; ref **= 2; ref |= 8; ref &= 9; ref ^= 3; ref <<= 2; ref >>= 1
  assert t.tolist() == ref.tolist()
  m = Tensor([[1.0, 2.0], [3.0, 4.0]], device=dev).contiguous().realize()
  m @= Tensor([[0.0, 1.0], [1.0, 0.0]], device=dev)
  assert m.tolist() == [[2.0, 1.0], [4.0, 3.0]]
  assert (1 << Tensor([1, 2, 3], device=dev)).tolist() == [2, 4, 8] and (64 >> Tensor([1, 2], device=dev)).tolist() == [32, 16]

def test_gelu_bad_approximate():
  with pytest.raises(RuntimeError, match="approximate"): Tensor([1.0]).gelu(approximate="exact")

# ================================================================ numerics at the edges

EXTREME = {
  "sigmoid": (lambda t: t.sigmoid(), torch.sigmoid),
  "tanh": (lambda t: t.tanh(), torch.tanh),
  "softplus": (lambda t: t.softplus(), F.softplus),
  "softplus_beta": (lambda t: t.softplus(beta=3), lambda t: F.softplus(t, beta=3)),
  "quick_gelu": (lambda t: t.quick_gelu(), lambda t: t * torch.sigmoid(1.702 * t)),
  "gelu": (lambda t: t.gelu(), lambda t: F.gelu(t, approximate="tanh")),
  "silu": (lambda t: t.silu(), F.silu),
  "logsigmoid": (lambda t: t.logsigmoid(), F.logsigmoid),
  "mish": (lambda t: t.mish(), F.mish),
  "softmax": (lambda t: t.softmax(-1), lambda t: t.softmax(-1)),
  "log_softmax": (lambda t: t.log_softmax(-1), lambda t: t.log_softmax(-1)),
}

@pytest.mark.parametrize("name", list(EXTREME))
def test_finite_at_extremes(name, dev):
  fn, tfn = EXTREME[name]
  a = np.float32([[-1000.0, -400.0, -90.0, 0.5, 90.0, 400.0, 1000.0]])
  agree(fn, tfn, a, dev=dev, rtol=1e-4, atol=1e-6)

def test_softmax_gradient_precision():
  # the backward of a softmax summed with unit weights is s * (1 - sum s): ~1e-9, not ~1e-7 rounding noise
  a = rnd(45, 65, seed=7)
  x, t = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
  x.softmax(1).sum().backward()
  t.softmax(1).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-7)

def test_softmax_dtype_and_softmin():
  a = rnd(3, 4)
  agree(lambda x: x.softmin(1), lambda t: F.softmin(t, dim=1), a)
  out = Tensor(a).softmax(-1, dtype=dtypes.float64)
  assert out.dtype == dtypes.float64
  np.testing.assert_allclose(out.numpy(), torch.tensor(a).double().softmax(-1).numpy(), rtol=1e-6)

POW = [  # (base, exponent) pairs torch defines at the awkward points: zero and negative bases, integer exponents
  ([0.0, 0.0, 0.0, 2.0, -2.0, -3.0], [0.0, 0.3, -0.3, 0.0, 2.0, 3.0]),
  ([-1.5, 0.0, 1.5, -0.5], [2.0, 2.0, 2.0, -1.0]),
]

@pytest.mark.parametrize("case", range(len(POW)))
def test_pow_edges(case, dev):
  b, e = (np.float32(v) for v in POW[case])
  agree(lambda x, y: x ** y, lambda x, y: x ** y, b, e, dev=dev)

def test_pow_const_gradients():
  for x in (-math.inf, 0.0, 1.0, math.inf):
    for c in (-1, 0, 0.3, 1, 2):
      t, r = Tensor([x], requires_grad=True), torch.tensor([x], requires_grad=True)
      (t ** c).sum().backward()
      (r ** c).sum().backward()
      np.testing.assert_allclose(t.grad.numpy(), r.grad.numpy(), err_msg=f"{x} ** {c}")

def test_pow_negative_base_fractional_is_nan():
  # the exponent's gradient at a negative base is nan, as torch has it (log of a negative)
  agree(lambda x: (-2.0) ** x, lambda x: (-2.0) ** x, np.float32([-2.0, -1.0, 0.0, 1.0, 2.0, 0.5]))

def test_int_pow(dev):
  for base, e in (([11, 12, 13], 7), ([-2, 0, 2], 29), ([-2, 0, 2], 0), ([3, -3], 2)):
    out = Tensor(base, device=dev) ** e
    assert out.dtype == dtypes.int32
    assert out.tolist() == [b ** e for b in base]
  with pytest.raises(RuntimeError, match="non-negative integer"): Tensor([2, 3]) ** -2
  assert (Tensor([2, 3]) ** Tensor([2, 3])).tolist() == [4, 27]

def test_prod_gradient_with_zeros(dev):
  for row in ([1.0, 0.0, 3.0], [0.0, 0.0, 3.0], [2.0, 3.0, 4.0]):
    agree(lambda x: x.prod(), lambda x: x.prod(), np.float32(row), dev=dev)
  agree(lambda x: x.prod(1), lambda x: x.prod(1), np.float32([[1.0, 0.0, 3.0], [2.0, 3.0, 4.0], [0.0, 5.0, 0.0]]), dev=dev)

def test_clip_gradient_at_bounds(dev):
  # torch passes the gradient through at a bound (and hardtanh, its own op there, does not)
  a = np.float32([-3.0, -2.5, 0.0, 1.5, 2.0])
  agree(lambda x: x.clip(-2.5, 1.5), lambda x: x.clip(-2.5, 1.5), a, dev=dev)
  agree(lambda x: x.clip(None, 0.0), lambda x: x.clip(None, 0.0), a, dev=dev)
  agree(lambda x: x.clip(3, 0), lambda x: x.clip(3, 0), a, dev=dev)  # min > max: everything is max
  with pytest.raises(RuntimeError, match="at least one"): Tensor(a).clip()

def test_min_argmin_int_extremes(dev):
  v = [0, -2**31, 5, 2**31 - 1]
  assert Tensor(v, device=dev).min().item() == -2**31
  assert Tensor(v, device=dev).argmin().item() == 1
  assert Tensor(v, device=dev).max().item() == 2**31 - 1
  assert Tensor([3, 2, 2]).argmin().item() == 1  # first of a tie
  assert Tensor([True, False]).min().item() is False and Tensor([True, False]).argmin().item() == 1
  assert Tensor([200, 3, 255], dtype=dtypes.uint8).min().item() == 3
  agree(lambda x: x.min(1), lambda x: x.min(1).values, rnd(4, 5), dev=dev)
  agree(lambda x: x.min(), lambda x: x.min(), np.float32([[1.0, -1.0], [-1.0, 2.0]]), dev=dev)  # a tie splits the gradient

def test_comparison_gradients_are_zero():
  a, b = Tensor([1.0, 2.0, 3.0], requires_grad=True), Tensor([2.0, 2.0, 2.0], requires_grad=True)
  for op in (lambda x, y: x < y, lambda x, y: x != y, lambda x, y: x == y, lambda x, y: x >= y):
    a.grad = b.grad = None
    op(a, b).sum().backward()
    assert a.grad is not None and b.grad is not None
    assert a.grad.tolist() == [0.0] * 3 and b.grad.tolist() == [0.0] * 3
  x = Tensor([-1.0, 0.0, 2.0], requires_grad=True)
  (x * (x != 0)).sum().backward()
  assert x.grad.tolist() == [1.0, 0.0, 1.0]

# ================================================================ cumulative and reductions

def test_cummin(dev):
  a = rnd(5, 6)
  a[1, 2] = a[1, 4] = -5.0  # a tie: torch reports the last index
  agree(lambda x: x.cummin(1)[0], lambda x: torch.cummin(x, 1).values, a, dev=dev)
  vals, idx = Tensor(a, device=dev).cummin(1)
  np.testing.assert_array_equal(idx.numpy(), torch.cummin(torch.tensor(a), 1).indices.numpy())
  assert Tensor([3, -2**31, 4]).cummin(0)[0].tolist() == [3, -2**31, -2**31]

def test_logcumsumexp(dev):
  for axis in (0, 1, -1):
    agree(lambda x: x.logcumsumexp(axis), lambda x: torch.logcumsumexp(x, axis), rnd(4, 6), dev=dev)
  agree(lambda x: x.logcumsumexp(), lambda x: torch.logcumsumexp(x, 0), np.float32([0.0, 100.0, -1000.0, 1000.0]), dev=dev)
  agree(lambda x: x.logcumsumexp(), lambda x: torch.logcumsumexp(x, 0), np.float32(1.5), dev=dev)

def test_normalize(dev):
  agree(lambda x: x.normalize(), lambda x: F.normalize(x), rnd(4, 5), dev=dev)
  agree(lambda x: x.normalize(p=1, dim=-1), lambda x: F.normalize(x, p=1, dim=-1), rnd(2, 3, 4), dev=dev)
  np.testing.assert_array_equal(Tensor.zeros(2, 3).normalize().numpy(), np.zeros((2, 3)))  # eps keeps 0/0 away

def test_zero_size(dev):
  z = np.zeros((2, 0), np.float32)
  for fn, tfn in ((lambda x: x.erf(), torch.erf), (lambda x: x.logsigmoid(), F.logsigmoid), (lambda x: x.copysign(1.0), lambda x: x.copysign(1.0)),
                  (lambda x: x.logcumsumexp(1), lambda x: torch.logcumsumexp(x, 1)), (lambda x: x.cummin(1)[0], lambda x: torch.cummin(x, 1).values),
                  (lambda x: x.softmax(0), lambda x: x.softmax(0)), (lambda x: x.isclose(x), lambda x: x.isclose(x))):
    o, r = fn(Tensor(z, device=dev)).numpy(), tfn(torch.tensor(z)).numpy()
    assert o.shape == r.shape == (2, 0)

def test_zero_size_losses_and_reductions(dev):
  z = np.zeros((0, 5), np.float32)
  x, t = Tensor(z, device=dev), torch.tensor(z)
  assert np.isnan(x.cross_entropy(x).numpy()) and np.isnan(F.cross_entropy(t, t).numpy())  # a mean over nothing
  assert np.isnan(x.sigmoid().binary_crossentropy(x).numpy())
  assert x.binary_crossentropy_logits(x, reduction="sum").item() == 0.0
  assert x.binary_crossentropy_logits(x, reduction="none").shape == (0, 5)
  np.testing.assert_array_equal(x.prod(0).numpy(), t.prod(0).numpy())
  assert x.min(1).shape == x.argmin(1).shape == x.logsumexp(1).shape == (0,)

BAD_DIM = {
  "squeeze": lambda t: t.squeeze(3), "squeeze_0d": lambda t: t[0].sum().squeeze(1), "cumsum": lambda t: t.cumsum(2),
  "cumsum_0d": lambda t: t.sum().cumsum(1), "cumprod": lambda t: t.cumprod(-3), "cumprod_0d": lambda t: t.sum().cumprod(1),
  "cummax": lambda t: t.cummax(2), "cummax_0d": lambda t: t.sum().cummax(1), "cummin": lambda t: t.cummin(2),
  "logcumsumexp": lambda t: t.logcumsumexp(2), "flip": lambda t: t.flip(2), "sort": lambda t: t.sort(2),
  "gather": lambda t: t.gather(2, Tensor([[0]])), "sum": lambda t: t.sum(2), "sum_0d": lambda t: t.sum().sum(1), "max": lambda t: t.max(-3),
  "min": lambda t: t.min(2), "mean": lambda t: t.mean((0, 2)), "prod": lambda t: t.prod(2), "any": lambda t: t.any(2), "argmax": lambda t: t.argmax(2),
  "argmin": lambda t: t.argmin(2), "argmax_0d": lambda t: t.sum().argmax(1), "var": lambda t: t.var(2), "std": lambda t: t.std(2),
  "logsumexp": lambda t: t.logsumexp(2), "softmax": lambda t: t.softmax(2), "log_softmax": lambda t: t.log_softmax(-3),
}

@pytest.mark.parametrize("name", list(BAD_DIM))
def test_bad_dim_is_index_error(name):
  with pytest.raises(IndexError): BAD_DIM[name](Tensor(rnd(2, 3)))

def test_bad_arguments():
  t = Tensor(rnd(4, 3))
  with pytest.raises(RuntimeError, match="rounding_mode"): t.div(2, rounding_mode="typo")
  with pytest.raises(RuntimeError): t.bitwise_xor(t)
  with pytest.raises(TypeError): t.bitwise_and(t)  # also a TypeError, as a wrong dtype is
  with pytest.raises(RuntimeError, match="appear only once"): t.flip((0, 0))
  with pytest.raises(RuntimeError, match="appear only once"): t.flip((1, -1))
  with pytest.raises(ValueError, match="positive"): t.split(0)
  with pytest.raises(ValueError, match="positive"): t.chunk(0)
  with pytest.raises(ValueError, match="stack takes tensors"): Tensor.stack((Tensor([1, 2]), Tensor([3, 4])), Tensor([5, 6]))
  with pytest.raises(ValueError, match="stack takes tensors"): Tensor.stack(Tensor([1]), 2)
  with pytest.raises(ValueError, match="non-negative"): Tensor([1, 2]).one_hot(-2)
  with pytest.raises(RuntimeError, match="integer"): Tensor([1.0]).one_hot(3)
  with pytest.raises(AttributeError): t.sum(dtype="")
  with pytest.raises(TypeError, match="unknown dtype"): t.prod(dtype="floaty")
  for loss in (lambda y: t.cross_entropy(y, reduction="typo"), lambda y: t.sigmoid().binary_crossentropy(y.sigmoid(), reduction="avg"),
               lambda y: t.binary_crossentropy_logits(y, reduction="mean "), lambda y: t.cross_entropy(y, label_smoothing=1.5)):
    with pytest.raises(ValueError): loss(Tensor(rnd(4, 3, seed=2)))
  with pytest.raises(RuntimeError, match="match neither"): t.cross_entropy(Tensor(rnd(4, 1)))

def test_one_hot(dev):
  data = [[1, 2, 3], [0, 3, 5]]
  np.testing.assert_array_equal(Tensor(data, device=dev).one_hot(8).numpy(), F.one_hot(torch.tensor(data), 8).numpy())
  np.testing.assert_array_equal(Tensor(data, device=dev).one_hot().numpy(), F.one_hot(torch.tensor(data)).numpy())
  assert Tensor(data).one_hot(0).shape == (2, 3, 0)

# ================================================================ losses

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_crossentropy(reduction, dev):
  x, y = rnd(8, 5), np.clip(rnd(8, 5, lo=-0.5, hi=1.5, seed=2), 0, 1)
  agree(lambda a, b: a.sigmoid().binary_crossentropy(b, reduction=reduction),
        lambda a, b: F.binary_cross_entropy(a.sigmoid(), b, reduction=reduction), x, y, dev=dev)
  agree(lambda a, b: a.binary_crossentropy_logits(b, reduction=reduction),
        lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction=reduction), x, y, dev=dev)

def test_binary_crossentropy_logits_pos_weight_and_extremes(dev):
  pw = np.float32([0.25, 0.5, 1.0, 2.0, 7.0])
  x, y = rnd(8, 5), np.clip(rnd(8, 5, seed=2), 0, 1)
  agree(lambda a, b: a.binary_crossentropy_logits(b, pos_weight=Tensor(pw, device=dev)),
        lambda a, b: F.binary_cross_entropy_with_logits(a, b, pos_weight=torch.tensor(pw)), x, y, dev=dev)
  big = np.float32([[-500.0, 500.0, 0.0]])
  agree(lambda a, b: a.binary_crossentropy_logits(b), lambda a, b: F.binary_cross_entropy_with_logits(a, b), big, np.float32([[1.0, 0.0, 0.5]]), dev=dev)

@pytest.mark.parametrize("shape", [(10,), (8, 5), (4, 3, 2, 2)])
@pytest.mark.parametrize("ls", [0.0, 0.3])
def test_cross_entropy_class_probabilities(shape, ls, dev):
  agree(lambda a, b: a.cross_entropy(b, label_smoothing=ls), lambda a, b: F.cross_entropy(a, b, label_smoothing=ls),
        rnd(*shape), rnd(*shape, lo=0, hi=1, seed=3), dev=dev)

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_class_indices(reduction, dev):
  logits = rnd(6, 5, 3)  # classes on dim 1, as torch
  target = np.random.default_rng(0).integers(0, 5, size=(6, 3)).astype(np.int32)
  x, t = Tensor(logits, device=dev, requires_grad=True), torch.tensor(logits, requires_grad=True)
  out = x.cross_entropy(Tensor(target, device=dev), reduction=reduction, label_smoothing=0.2)
  ref = F.cross_entropy(t, torch.tensor(target).long(), reduction=reduction, label_smoothing=0.2)
  np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
  out.sum().backward()
  ref.sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-6)

# ================================================================ dtypes

def test_python_ints_beyond_int32_are_int64(dev):
  t = Tensor([2**40], device=dev)
  assert t.dtype == dtypes.int64 and t.numpy().tolist() == [1099511627776]
  assert Tensor([1, -2**31]).dtype == dtypes.int32 and Tensor([1, -2**31 - 1]).dtype == dtypes.int64
  assert Tensor(2**40, device=dev).dtype == dtypes.int64 and Tensor(2**40, device=dev).item() == 2**40
  assert Tensor([[1, 2], [3, 2**33]]).tolist() == [[1, 2], [3, 2**33]]
  assert Tensor([True, 1]).dtype == dtypes.int32 and Tensor([]).dtype == dtypes.float32

def test_arange_dtypes():
  assert Tensor.arange(5).dtype == dtypes.int32 and Tensor.arange(5.0).dtype == dtypes.float32
  assert Tensor.arange(0, 5, 0.5).dtype == dtypes.float32
  assert Tensor.arange(2**33, 2**33 + 3).dtype == dtypes.int64
  assert Tensor.arange(2**33, 2**33 + 3).tolist() == [2**33, 2**33 + 1, 2**33 + 2]

def test_dtype_min_max():
  assert (dtypes.int32.min, dtypes.int32.max) == (-2**31, 2**31 - 1) == (dtypes.min(dtypes.int32), dtypes.max(dtypes.int32))
  assert (dtypes.uint8.min, dtypes.uint8.max, dtypes.bool.min, dtypes.bool.max) == (0, 255, False, True)
  assert (dtypes.float32.min, dtypes.float32.max) == (-math.inf, math.inf)
  assert dtypes.int64.max == 2**63 - 1 and dtypes.uint64.max == 2**64 - 1
