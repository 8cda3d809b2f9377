# The Tensor API around the ops: creation, random numbers, properties, realize/numpy/tolist/item,
# odd shapes, long lazy chains and shape errors. Checked against numpy on every device.
# Uses tinygrad's public API only, so the same file runs against real tinygrad.
import inspect
import functools
import numpy as np
import pytest
from tinygrad import Tensor, dtypes, Device
from tinygrad.uop.ops import UOp

DEVICES = ["CPU", "PYTHON"]

@pytest.fixture(params=DEVICES)
def dev(request): return request.param

from numpy_check import NP, WEAK, check  # noqa: E402,F401

def _takes_device(fn):
  params = inspect.signature(fn).parameters.values()
  return any(p.name == "device" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)

def arange(*args, device, **kwargs):
  # tinygrad >= 0.14 builds arange/eye without a device (they take no device=); older tinygrad and ours take device=
  if _takes_device(Tensor.arange): return Tensor.arange(*args, device=device, **kwargs)
  return Tensor.arange(*args, **kwargs).to(device)

def eye(*args, device, **kwargs):
  if _takes_device(Tensor.eye): return Tensor.eye(*args, device=device, **kwargs)
  return Tensor.eye(*args, **kwargs).to(device)

# ================================================================ creation from data

def test_from_list(dev):
  t = Tensor([1, 2, 3, 4], device=dev)
  assert t.dtype == dtypes.int and t.dtype == dtypes.int32
  assert t.shape == (4,)
  assert t.device == dev
  check(t, np.array([1, 2, 3, 4], np.int32))

def test_from_nested_list_and_tuple(dev):
  check(Tensor([[1.5, 2.0, -3.0], [4.0, 5.0, 6.25]], device=dev), np.array([[1.5, 2.0, -3.0], [4.0, 5.0, 6.25]], np.float32))
  check(Tensor([[[1], [2]], [[3], [4]]], device=dev), np.arange(1, 5, dtype=np.int32).reshape(2, 2, 1))
  check(Tensor((1, 2, 3), device=dev), np.array([1, 2, 3], np.int32))
  check(Tensor([1, 2.5], device=dev), np.array([1.0, 2.5], np.float32))
  check(Tensor([True, False, True], device=dev), np.array([True, False, True]))

def test_from_list_with_dtype(dev):
  check(Tensor([1, 2, 3], device=dev, dtype=dtypes.float32), np.array([1, 2, 3], np.float32))
  check(Tensor([1.7, -2.2], device=dev, dtype=dtypes.int32), np.array([1, -2], np.int32))
  check(Tensor([0, 3], device=dev, dtype=dtypes.bool), np.array([False, True]))

def test_from_numpy(dev):
  a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
  t = Tensor(a, device=dev)
  assert t.device == dev
  check(t, a, rtol=0, atol=0)
  check(Tensor(np.arange(6, dtype=np.int64).reshape(2, 3), device=dev), np.arange(6, dtype=np.int64).reshape(2, 3))
  check(Tensor(np.array([0.1, 0.2]), device=dev), np.array([0.1, 0.2]), rtol=0, atol=0)  # float64 stays float64

def test_from_noncontiguous_numpy(dev):
  a = np.arange(24, dtype=np.float32).reshape(4, 6)
  check(Tensor(a.T, device=dev), a.T)
  check(Tensor(a[::2, 1::2], device=dev), a[::2, 1::2])
  check(Tensor(a[:, ::-1], device=dev), a[:, ::-1])

def test_from_scalar(dev):
  for v, npdt, pytype in ((3, np.int32, int), (2.5, np.float32, float), (True, np.bool_, bool)):
    t = Tensor(v, device=dev)
    assert t.shape == ()
    out = t.numpy()
    assert out.shape == () and out.dtype == npdt and out == v
    assert t.item() == v and type(t.item()) is pytype
    assert t.tolist() == v

def test_scalar_with_dtype(dev):
  check(Tensor(2.5, device=dev, dtype=dtypes.float64), np.float64(2.5))
  check(Tensor(7, device=dev, dtype=dtypes.int8), np.int8(7))

def test_scalar_tensor_in_ops(dev):
  s = Tensor(2.0, device=dev)
  v = Tensor([1.0, 2.0, 3.0], device=dev)
  check(s * v, np.array([2.0, 4.0, 6.0], np.float32))
  check(v - s, np.array([-1.0, 0.0, 1.0], np.float32))
  check(s + s, np.float32(4.0))

# ================================================================ creation helpers

def test_zeros_ones(dev):
  for t, ref in ((Tensor.zeros(2, 3, device=dev), np.zeros((2, 3), np.float32)),
                 (Tensor.zeros((3, 1), device=dev), np.zeros((3, 1), np.float32)),
                 (Tensor.ones(4, device=dev), np.ones(4, np.float32)),
                 (Tensor.ones([2, 2, 2], device=dev), np.ones((2, 2, 2), np.float32)),
                 (Tensor.zeros(3, device=dev, dtype=dtypes.int32), np.zeros(3, np.int32)),
                 (Tensor.ones(2, device=dev, dtype=dtypes.bool), np.ones(2, np.bool_))):
    assert t.device == dev
    check(t, ref)

def test_full(dev):
  check(Tensor.full((2, 3), 1.5, device=dev), np.full((2, 3), 1.5, np.float32))
  check(Tensor.full((2,), 7, device=dev), np.full((2,), 7, np.int32))
  check(Tensor.full((1, 2), False, device=dev), np.full((1, 2), False))
  check(Tensor.full((3,), -2, device=dev, dtype=dtypes.int8), np.full((3,), -2, np.int8))
  check(Tensor.full((), 4.0, device=dev), np.float32(4.0))

def test_arange(dev):
  check(arange(5, device=dev), np.arange(5, dtype=np.int32))
  check(arange(2, 11, 3, device=dev), np.arange(2, 11, 3, dtype=np.int32))
  check(arange(5, 0, -1, device=dev), np.arange(5, 0, -1, dtype=np.int32))
  check(arange(-3, 3, device=dev), np.arange(-3, 3, dtype=np.int32))
  check(arange(0, 1, 0.25, device=dev), np.arange(0, 1, 0.25, dtype=np.float32))
  check(arange(5, device=dev, dtype=dtypes.float32), np.arange(5, dtype=np.float32))
  check(arange(3, 3, device=dev), np.arange(3, 3, dtype=np.int32))

def test_arange_in_ops(dev):
  check((arange(6, device=dev).reshape(2, 3) * 2 + 1).sum(axis=1), np.array([9, 27], np.int32))

def test_eye(dev):
  check(eye(3, device=dev), np.eye(3, dtype=np.float32))
  check(eye(2, 4, device=dev), np.eye(2, 4, dtype=np.float32))
  check(eye(3, device=dev, dtype=dtypes.int32), np.eye(3, dtype=np.int32))
  x = np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32)
  check(Tensor(x, device=dev) @ eye(3, device=dev), x, rtol=1e-6)

def test_like(dev):
  src = Tensor([[1, 2, 3], [4, 5, 6]], device=dev, dtype=dtypes.int8)
  for t, ref in ((src.zeros_like(), np.zeros((2, 3), np.int8)), (Tensor.zeros_like(src), np.zeros((2, 3), np.int8)),
                 (src.ones_like(), np.ones((2, 3), np.int8)), (src.full_like(7), np.full((2, 3), 7, np.int8)),
                 (src.zeros_like(dtype=dtypes.float32), np.zeros((2, 3), np.float32))):
    assert t.device == dev
    check(t, ref)
  f = Tensor([[1.0, 2.0, 3.0]], device=dev)
  for t in (f.rand_like(), f.randn_like(), Tensor.rand_like(f)):
    assert t.shape == (1, 3) and t.dtype == dtypes.float32 and t.device == dev
    assert np.isfinite(t.numpy()).all()

# ================================================================ random numbers

def test_rand(dev):
  t = Tensor.rand(40, 25, device=dev)
  assert t.shape == (40, 25) and t.dtype == dtypes.float32 and t.device == dev
  x = t.numpy()
  assert x.shape == (40, 25) and x.dtype == np.float32
  assert (x >= 0).all() and (x < 1).all()
  assert 0.45 < x.mean() < 0.55
  assert 0.25 < x.std() < 0.33  # uniform: 1/sqrt(12) ~ 0.289
  assert len(np.unique(x)) > 990
  assert abs(x[:, :12].mean() - x[:, 12:].mean()) < 0.1

def test_randn(dev):
  t = Tensor.randn(1000, device=dev)
  assert t.shape == (1000,) and t.dtype == dtypes.float32 and t.device == dev
  x = t.numpy()
  assert np.isfinite(x).all()
  assert abs(x.mean()) < 0.15
  assert 0.9 < x.std() < 1.1
  assert 0.62 < (np.abs(x) < 1).mean() < 0.74  # ~68% within one sigma
  assert len(np.unique(x)) > 990

def test_rand_shapes_and_dtype(dev):
  assert Tensor.rand(3, device=dev).shape == (3,)
  assert Tensor.rand((2, 3), device=dev).shape == (2, 3)
  assert Tensor.randn(2, 1, 3, device=dev).numpy().shape == (2, 1, 3)
  h = Tensor.rand(8, device=dev, dtype=dtypes.float16)
  assert h.dtype == dtypes.float16 and h.numpy().dtype == np.float16

def test_manual_seed_reproducible(dev):
  Tensor.manual_seed(1234)
  a1, b1, n1 = Tensor.rand(50, device=dev).numpy(), Tensor.rand(50, device=dev).numpy(), Tensor.randn(20, device=dev).numpy()
  Tensor.manual_seed(1234)
  a2, b2, n2 = Tensor.rand(50, device=dev).numpy(), Tensor.rand(50, device=dev).numpy(), Tensor.randn(20, device=dev).numpy()
  np.testing.assert_array_equal(a1, a2)
  np.testing.assert_array_equal(b1, b2)
  np.testing.assert_array_equal(n1, n2)
  assert not np.array_equal(a1, b1)  # successive draws differ
  Tensor.manual_seed(4321)
  assert not np.array_equal(Tensor.rand(50, device=dev).numpy(), a1)

def test_rand_in_ops(dev):
  Tensor.manual_seed(7)
  r = Tensor.rand(4, 5, device=dev)
  x = r.numpy()
  check(r * 2 - 1, x * 2 - 1)
  check(r.sum(axis=1), x.sum(axis=1), rtol=1e-5)

# ================================================================ properties and getting data out

def test_shape_dtype_device(dev):
  t = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=dev)
  assert t.shape == (2, 3) and isinstance(t.shape, tuple) and all(isinstance(s, int) for s in t.shape)
  assert t.dtype == dtypes.float32
  assert t.device == dev and isinstance(t.device, str)
  u = (t.permute(1, 0) * 2).sum(axis=0, keepdim=True)
  assert u.shape == (1, 2) and u.dtype == dtypes.float32 and u.device == dev

def test_default_device():
  assert isinstance(Device.DEFAULT, str) and Device.DEFAULT
  assert Tensor([1, 2]).device == Device.DEFAULT

def test_realize_returns_self(dev):
  t = Tensor([1, 2, 3], device=dev) * 2
  assert t.realize() is t
  check(t, np.array([2, 4, 6], np.int32))
  assert t.realize() is t  # again, already realized
  check(t + 1, np.array([3, 5, 7], np.int32))

def test_uop_property(dev):
  t = Tensor([1, 2, 3, 4], device=dev)
  assert isinstance(t.uop, UOp)
  assert (t * 4).uop is (t * 4).uop  # hash-consed graph
  assert (t * 4).uop is not (t * 5).uop
  t.realize()
  assert isinstance(t.uop, UOp)

def test_numpy_returns_fresh_array(dev):
  t = Tensor([1.0, 2.0], device=dev)
  a = t.numpy()
  a[0] = 100.0
  check(t, np.array([1.0, 2.0], np.float32))

def test_tolist(dev):
  assert Tensor([[1, 2], [3, 4]], device=dev).tolist() == [[1, 2], [3, 4]]
  assert Tensor([1.5, -2.0], device=dev).tolist() == [1.5, -2.0]
  assert Tensor([True, False], device=dev).tolist() == [True, False]
  out = Tensor([[0.5], [0.25]], device=dev).tolist()
  assert out == [[0.5], [0.25]] and all(type(v[0]) is float for v in out)
  assert Tensor([1, 2, 3], device=dev).sum().tolist() == 6

def test_item(dev):
  assert Tensor([7], device=dev).item() == 7 and type(Tensor([7], device=dev).item()) is int
  v = Tensor([[7.5]], device=dev).item()
  assert v == 7.5 and type(v) is float
  b = Tensor([True], device=dev).item()
  assert b is True
  assert Tensor([1.0, 2.0, 3.0], device=dev).mean().item() == pytest.approx(2.0)
  assert Tensor([3, 1, 2], device=dev).argmax().item() == 0

def test_to_other_device(dev):
  other = "PYTHON" if dev == "CPU" else "CPU"
  t = Tensor([[1.5, 2.5], [3.5, 4.5]], device=dev) * 2
  u = t.to(other)
  assert u.device == other and u.shape == (2, 2)
  check(u + 1, np.array([[4.0, 6.0], [8.0, 10.0]], np.float32))
  check(t, np.array([[3.0, 5.0], [7.0, 9.0]], np.float32))

# ================================================================ odd shapes

def test_zero_d(dev):
  s = Tensor([4.0, 5.0], device=dev).sum()
  assert s.shape == ()
  check(s, np.float32(9.0))
  check(s.reshape(1), np.array([9.0], np.float32))
  check(s.expand(2, 3), np.full((2, 3), 9.0, np.float32))
  check(s.unsqueeze(0), np.array([9.0], np.float32))
  check(s.exp().log(), np.float32(9.0), rtol=1e-5)
  check(Tensor([4.0], device=dev)[0], np.float32(4.0))

def test_size_one_dims(dev):
  x = np.random.default_rng(2).standard_normal((1, 3, 1)).astype(np.float32)
  t = Tensor(x, device=dev)
  check(t + Tensor(np.ones((2, 1, 4), np.float32), device=dev), x + np.ones((2, 1, 4), np.float32))
  check(t.sum(axis=1), x.sum(axis=1), rtol=1e-5)
  check(t.permute(2, 1, 0).reshape(3), x.reshape(3))
  check(t[0, :, 0], x[0, :, 0])
  check(Tensor([[5]], device=dev) * Tensor([[1, 2, 3]], device=dev), np.array([[5, 10, 15]], np.int32))

def test_empty_tensors(dev):
  e = Tensor([], device=dev)
  assert e.shape == (0,) and e.dtype == dtypes.float32
  assert e.numpy().shape == (0,) and e.tolist() == []
  z = Tensor.zeros(0, 3, device=dev)
  check(z, np.zeros((0, 3), np.float32))
  check(z + 1, np.zeros((0, 3), np.float32))
  check(z.sum(axis=0), np.zeros(3, np.float32))
  check(Tensor([[1.0, 2.0]], device=dev)[1:], np.zeros((0, 2), np.float32))
  check(Tensor([1.0, 2.0], device=dev)[1:1], np.zeros((0,), np.float32))

# ================================================================ lazy graphs: long chains, sharing, reuse

def test_deep_add_chain(dev):
  t = Tensor(np.arange(8, dtype=np.float32), device=dev)
  for _ in range(500): t = t + 1
  check(t, np.arange(8, dtype=np.float32) + 500)

def test_deep_mixed_chain(dev):
  x = np.linspace(-1, 1, 16, dtype=np.float32)
  t, ref = Tensor(x, device=dev), x.copy()
  for i in range(300):
    if i % 3 == 0: t, ref = t * 1.01, ref * np.float32(1.01)
    elif i % 3 == 1: t, ref = t - 0.01, ref - np.float32(0.01)
    else: t, ref = t.maximum(-2.0), np.maximum(ref, np.float32(-2.0))
  check(t, ref, rtol=1e-4, atol=1e-4)

def test_deep_chain_through_reduces(dev):
  x = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)
  t, ref = Tensor(x, device=dev), x.astype(np.float64)
  for _ in range(20):
    t = (t - t.mean(axis=1, keepdim=True)) * 0.9 + t.max(axis=0, keepdim=True) * 0.05
    ref = (ref - ref.mean(axis=1, keepdims=True)) * 0.9 + ref.max(axis=0, keepdims=True) * 0.05
  check(t, ref.astype(np.float32), rtol=1e-4, atol=1e-5)

def test_many_inputs(dev):
  arrs = [np.full((4,), i, np.float32) + np.arange(4, dtype=np.float32) for i in range(64)]
  total = functools.reduce(lambda a, b: a + b, [Tensor(a, device=dev) for a in arrs])
  check(total, sum(arrs))

def test_shared_subexpression(dev):
  x = np.array([1.0, -2.0, 3.0], np.float32)
  t = Tensor(x, device=dev)
  y = t * 2
  z = y + y.sum() + y.exp()
  check(z, x * 2 + (x * 2).sum() + np.exp(x * 2), rtol=1e-5)

def test_realize_midway_and_branch(dev):
  a = Tensor([1.0, 2.0, 3.0], device=dev) + 1
  a.realize()
  b, c = a * 2, a * 3
  check(b, np.array([4.0, 6.0, 8.0], np.float32))
  check(c, np.array([6.0, 9.0, 12.0], np.float32))
  check(a, np.array([2.0, 3.0, 4.0], np.float32))

def test_same_graph_twice(dev):
  x = Tensor([1.0, 2.0], device=dev)
  check((x * 3).sum(), np.float32(9.0))
  check((x * 3).sum(), np.float32(9.0))
  check((x * 4).sum(), np.float32(12.0))

# ================================================================ errors
# tinygrad raises several exception types for these; what counts is that it raises with a message that says
# what is wrong, at the latest when the result's shape is asked for (tinygrad <= 0.13 raises at the bad call,
# 0.14 when the shape is first needed).

def both(*parts): return "(?s)" + "".join(f"(?=.*{p})" for p in parts)

def test_broadcast_error(dev):
  a, b = Tensor.ones(2, 3, device=dev), Tensor.ones(4, device=dev)
  with pytest.raises(Exception, match=both("broadcast", r"\(2, 3\)", r"\(4,\)")): _ = (a + b).shape
  with pytest.raises(Exception, match="broadcast"): _ = (a * Tensor.ones(3, 2, device=dev)).shape
  with pytest.raises(Exception, match="broadcast"): _ = Tensor([True, False], device=dev).where(Tensor.ones(3, device=dev), 0.0).shape

def test_reshape_error(dev):
  t = Tensor.ones(2, 3, device=dev)
  with pytest.raises(Exception, match=both("reshape", r"\(2, 3\)", r"\(4,\)")): _ = t.reshape(4).shape
  with pytest.raises(Exception, match=r"\(2, 3\)"): _ = t.reshape(4, -1).shape
  with pytest.raises(Exception): _ = t.reshape(-1, -1).shape

def test_expand_error(dev):
  with pytest.raises(Exception, match=both(r"\(3,\)", r"\(4,\)")): _ = Tensor.ones(3, device=dev).expand(4).shape

def test_matmul_error(dev):
  with pytest.raises(Exception, match=both(r"\(2, 3\)", r"\(4, 5\)")):
    _ = (Tensor.ones(2, 3, device=dev) @ Tensor.ones(4, 5, device=dev)).shape
  with pytest.raises(Exception, match=both(r"\(3,\)", r"\(4,\)")): _ = (Tensor.ones(3, device=dev) @ Tensor.ones(4, device=dev)).shape
  with pytest.raises(Exception): _ = (Tensor.ones(2, 3, 4, device=dev) @ Tensor.ones(3, 4, 5, device=dev)).shape
  with pytest.raises(Exception, match=r"(?i)1-?d"): _ = (Tensor.ones(3, device=dev) @ Tensor(2.0, device=dev)).shape

def test_cat_stack_error(dev):
  with pytest.raises(Exception): _ = Tensor.ones(2, 3, device=dev).cat(Tensor.ones(2, 4, device=dev), dim=0).shape
  with pytest.raises(Exception): _ = Tensor.ones(2, 3, device=dev).stack(Tensor.ones(2, 4, device=dev)).shape

def test_index_errors(dev):
  t = Tensor([1, 2, 3, 4], device=dev)
  with pytest.raises(Exception, match="out of bounds|out of range"): _ = t[4].shape
  with pytest.raises(Exception, match="out of bounds|out of range"): _ = t[-5].shape
  with pytest.raises(Exception, match="(?i)too many indices"): _ = t[1, 2].shape

def test_bad_axis_errors(dev):
  t = Tensor.ones(2, 3, device=dev)
  with pytest.raises(Exception, match="out of range"): _ = t.sum(axis=2).shape
  with pytest.raises(Exception, match="out of range"): _ = t.flip(2).shape
  with pytest.raises(Exception, match="out of range"): _ = t.permute(1, 0, 2).shape
  with pytest.raises(Exception, match="permutation"): _ = t.permute(0, 0).shape

def test_pad_shrink_errors(dev):
  with pytest.raises(Exception, match="(?i)pad"): _ = Tensor.ones(2, device=dev).pad(((1, 1), (1, 1))).shape
  with pytest.raises(Exception, match="(?i)shrink"): _ = Tensor.ones(2, 3, device=dev).shrink(((0, 3), (0, 3))).shape

def test_item_error(dev):
  with pytest.raises(Exception, match="one element"): Tensor([1, 2], device=dev).item()

def test_ragged_list_error(dev):
  with pytest.raises(Exception, match="(?i)inhomogeneous|ragged"): Tensor([[1, 2], [3]], device=dev)
