"""UOp.axis on multi-device values (tinygrad's tests read `t.uop.axis`): the axis a value is split along, None when each
device holds a copy or the value is on one device. The expected axes are what tinygrad 0.14 answers for the same graphs."""
from tinygrad import Tensor

DEVS = ("CPU:0", "CPU:1")

def test_axis_follows_the_ops():
  t = Tensor.ones(4, 6).shard(DEVS, axis=1)
  assert t.uop.axis == 1 and (t + 1).uop.axis == 1 and (t * t).exp().uop.axis == 1
  assert t.sum(1).uop.axis is None  # reduced over the split axis: combined on every device
  assert t.sum(0).uop.axis == 0  # the split axis moves down one
  assert t.reshape(2, 2, 6).uop.axis == 2 and t.T.uop.axis == 0 and t.permute(1, 0).uop.axis == 0
  assert Tensor.ones(4).shard(DEVS).uop.axis is None and Tensor.ones(3).uop.axis is None
  assert Tensor.ones(4, 6).shard(DEVS, axis=0).uop.axis == 0

def test_axis_is_computed_once_per_node():
  t = Tensor.ones(4, 6).shard(DEVS, axis=1) + 2
  u = t.uop
  assert u.axis == 1
  assert object.__getattribute__(u, "_axis") == 1  # cached on the node: a second read lowers nothing
  assert u.axis == 1 and (t.numpy() == 3).all()
