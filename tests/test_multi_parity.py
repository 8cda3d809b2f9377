"""Multi-device behaviours tinygrad's test_multitensor.py relies on, checked against numpy: UOp.allreduce and
.bounds, *_like of a sharded tensor, assign into a slice (of one or several devices), clone, dropout on shards, and
the errors tinygrad raises."""
import numpy as np
import pytest
from tinygrad import Tensor, Device, dtypes, nn
from tinygrad.uop.ops import UOp, Ops

D2 = (f"{Device.DEFAULT}:1", f"{Device.DEFAULT}:2")
D4 = tuple(f"{Device.DEFAULT}:{i}" for i in range(1, 5))

@pytest.mark.parametrize("op,fn", [(Ops.ADD, np.add.reduce), (Ops.MUL, np.multiply.reduce), (Ops.MAX, np.maximum.reduce)])
def test_allreduce_combines_every_piece_on_every_device(op, fn):
  x = np.random.rand(8, 3).astype(np.float32) + 0.5
  t = Tensor(x).shard(D4, 0)
  out = Tensor(UOp.allreduce(t.uop, op, t.device))
  assert out.device == D4 and out.uop.axis == 0
  np.testing.assert_allclose(out.numpy(), np.tile(fn(x.reshape(4, 2, 3)), (4, 1)), rtol=1e-6)
  with pytest.raises(ValueError, match="ADD, Ops.MUL or Ops.MAX"): UOp.allreduce(t.uop, Ops.SUB, t.device)

def test_bounds_of_each_shard():
  t = Tensor.arange(12).reshape(6, 2).shard(D2[:2] + (f"{Device.DEFAULT}:3",), 0)
  assert t.uop.bounds == [(0, 2), (2, 4), (4, 6)]
  with pytest.raises(ValueError, match="not split"): Tensor.ones(4).shard(D2).uop.bounds

@pytest.mark.parametrize("axis", [None, 0, 1])
def test_like_of_a_sharded_tensor_is_sharded_the_same(axis):
  t = Tensor.empty(4, 6).shard(D2, axis)
  for like in (t.full_like(3.0), t.zeros_like(), t.rand_like(), t.randn_like(), Tensor.rand_like(t, dtype=dtypes.float16)):
    assert like.device == D2 and like.uop.axis == axis and like.shape == (4, 6)
  assert t.full_like(3.0).tolist() == [[3.0] * 6] * 4
  with pytest.raises(RuntimeError, match="no device="): t.rand_like(device=(f"{Device.DEFAULT}:3", f"{Device.DEFAULT}:4"))

def test_rand_on_a_device_tuple_is_refused():
  with pytest.raises(ValueError, match="shard"): Tensor.rand(8, device=D2)

def test_assign_into_a_slice_writes_the_buffer():
  for devs, axis in ((None, None), (D2, 0), (D2, None)):
    out = Tensor.zeros(4, 4).contiguous().realize()
    if devs: out = out.shard(devs, axis).contiguous().realize()
    ones = Tensor.ones(4, 1) if not devs else Tensor.ones(4, 1).shard(devs, axis)
    out[:, 2:3].assign(ones)
    ref = np.zeros((4, 4)); ref[:, 2:3] = 1
    np.testing.assert_equal(out.numpy(), ref)

def test_assign_through_transpose_and_flip_matches_numpy():
  out = Tensor.arange(6).reshape(2, 3).contiguous().realize()
  out.T.flip(0)[1:].assign(Tensor([[7, 8], [9, 10]]))
  ref = np.arange(6).reshape(2, 3); ref.T[::-1][1:] = [[7, 8], [9, 10]]
  assert out.tolist() == ref.tolist()

def test_clone_of_a_sharded_tensor_has_its_own_buffers():
  for axis in (None, 0):
    t = Tensor.arange(16).reshape(4, 4).contiguous().shard(D2, axis).contiguous().realize()
    c = t.clone().realize()
    assert c.device == D2 and c.uop.axis == axis
    c += 1
    assert c.tolist() == (np.arange(16).reshape(4, 4) + 1).tolist() and t.tolist() == np.arange(16).reshape(4, 4).tolist()

def test_dropout_on_shards_keeps_about_half():
  with Tensor.train():
    out = Tensor.ones(512).shard(D2, 0).dropout(0.5).numpy()
  assert set(np.unique(out)) == {0.0, 2.0} and 192 < (out == 0).sum() < 320

def test_shard_errors_are_tinygrads():
  with pytest.raises(RuntimeError, match="does not divide"): Tensor.ones(256).shard((*D2, f"{Device.DEFAULT}:3"), 0)
  with pytest.raises(ValueError, match="does not divide"): Tensor.ones(256).shard((*D2, f"{Device.DEFAULT}:3"), 0)
  with pytest.raises(RuntimeError, match="along axis None"): Tensor.ones(8).shard(D2).shard_like(Tensor.ones(8).shard(D2, 0))
  x = Tensor([1, 2], dtype=dtypes.int).shard(D2, 0)
  assert Tensor(x.uop).device == D2
  with pytest.raises(AssertionError, match="cast"): Tensor(x.uop, dtype=dtypes.float)

def test_device_less_constant_meets_a_sharded_tensor():
  s = Tensor([1.0, 2, 3, 4]).shard(D2, 0)
  np.testing.assert_equal((s + Tensor(UOp.const(dtypes.float, 1.0))).numpy(), [2, 3, 4, 5])
  np.testing.assert_equal((Tensor([1.0, 2.0]) * Tensor(UOp.const(dtypes.float, 3.0))).numpy(), [3, 6])

def test_allclose_is_a_tensor_and_optimizer_has_a_device():
  a = Tensor([1.0, 2.0])
  assert isinstance(a.allclose(a), Tensor) and a.allclose(a).item() is True
  w = Tensor.ones(3, requires_grad=True).shard(D2)
  assert nn.optim.SGD([w]).device == D2 and nn.optim.Adam([Tensor.ones(2, requires_grad=True)]).device == Device.DEFAULT
  assert Device[Device.DEFAULT].allocator is not None
