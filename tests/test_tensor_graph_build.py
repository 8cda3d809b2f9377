"""The op wrappers' fast paths build the very graph the plain Tensor ops build (hash-consed UOps: the same objects), so
every kernel stays the same: a Python scalar beside a tensor (x * 2, x.where(x, 0)) and the broadcasts of _broadcasted."""
import itertools
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.tensor import _const, _broadcast_shape
from tinygrad.uop.ops import Ops

DTYPES = (dtypes.float32, dtypes.int32, dtypes.bool, dtypes.uint8, dtypes.float16, dtypes.int64)
SHAPES = ((), (1,), (3,), (1, 1), (2, 3), (4, 1, 5))

def empty(shape, dt): return Tensor.empty(*shape, dtype=dt) if shape else Tensor.empty(1, dtype=dt).reshape(())

@pytest.mark.parametrize("dt", DTYPES)
def test_a_scalar_operand_is_the_constant_tensor_ops_make(dt):
  for shape, y, rev, match in itertools.product(SHAPES, (2, 2.5, True, -1, 0), (False, True), (True, False)):
    x = empty(shape, dt)
    got, want = x._broadcasted(y, rev, match), x._broadcasted(x._to_tensor(y), rev, match)  # the scalar as a Tensor
    assert all(g.uop is w.uop for g, w in zip(got, want)), (shape, y, rev, match)

def reference_where(c: Tensor, x, y) -> Tensor:
  """where as plain Tensor ops: each operand a Tensor, broadcast by the checked _broadcast_to."""
  cond = c if c.dtype == dtypes.bool else c != 0
  if not isinstance(x, Tensor) and not isinstance(y, Tensor):
    dt = dtypes.from_py(x) if type(x) == type(y) else dtypes.float32
    x, y = Tensor(_const(x, dt, c.device)), Tensor(_const(y, dt, c.device))
  elif not isinstance(x, Tensor): x = y._to_tensor(x)
  elif not isinstance(y, Tensor): y = x._to_tensor(y)
  xb, yb = x._broadcasted(y)
  shape = _broadcast_shape(cond.shape, xb.shape)
  return cond._broadcast_to(shape)._alu(Ops.WHERE, xb._broadcast_to(shape), yb._broadcast_to(shape), dtype=xb.dtype)

@pytest.mark.parametrize("dt", DTYPES)
def test_where_builds_the_graph_of_plain_tensor_ops(dt):
  for cs, xs in itertools.product(SHAPES, SHAPES):
    c, x = empty(cs, dtypes.bool), empty(xs, dt)
    try: _broadcast_shape(cs, xs)
    except ValueError: continue
    for a, b in ((x, 0), (0, x), (x, x), (x, 1.5), (2, 3)):
      assert c.where(a, b).uop is reference_where(c, a, b).uop, (cs, xs, a, b)

def test_fast_paths_compute_what_numpy_does():
  a = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
  t = Tensor(a)
  np.testing.assert_equal((t * 2 + 1).numpy(), a * 2 + 1)
  np.testing.assert_equal((1 - t).numpy(), 1 - a)
  np.testing.assert_equal(t.relu().numpy(), np.maximum(a, 0))
  np.testing.assert_equal((t > 0).where(3, t).numpy(), np.where(a > 0, 3, a))
  np.testing.assert_equal(Tensor(a.astype(np.int32)).where(t, 7).numpy(), np.where(a != 0, a, 7))
  np.testing.assert_equal((Tensor([True, False]) + 1).numpy(), np.array([2, 1], np.int32))  # an int beside bools: int32
  with pytest.raises(ValueError, match="cannot broadcast"): t + Tensor.ones(3)
