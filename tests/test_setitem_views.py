"""A setitem through a view of a realized tensor (a slice, a transpose, a flip, a reshape of it) writes the tensor
underneath, as in numpy and torch (tinygrad's test_setitem: N[1][2] = 5 is N[1, 2] = 5). Checked against numpy."""
import numpy as np
from tinygrad import Tensor

def test_chained_index_writes_the_base():
  n = np.zeros((3, 3), np.float32); n[1][2] = 5
  t = Tensor.zeros(3, 3).contiguous().realize(); t[1][2] = 5
  np.testing.assert_equal(t.numpy(), n)

def test_setitem_through_transpose_flip_and_slice():
  n = np.arange(6, dtype=np.float32).reshape(2, 3)
  t = Tensor(n.copy()).contiguous().realize()
  # (a realize between: a view of a tensor whose assign is still pending is not written through yet, see docs/engine.md)
  n.T[1, 0] = 50; t.T[1, 0] = 50; t.realize()
  n[:, ::-1][0] = 7; t[:, ::-1][0] = 7; t.realize()
  v_n, v_t = n[:, 1:], t[:, 1:]
  v_n[1] = -1; v_t[1] = -1
  np.testing.assert_equal(t.numpy(), n)
  np.testing.assert_equal(v_t.numpy(), v_n)  # the view sees the write too

def test_unrealized_view_still_only_changes_itself():
  # a lazy tensor has no buffer to write: the view alone takes the new value (tinygrad's test_setitem_into_unrealized)
  t = Tensor.arange(4).reshape(2, 2)
  t[1] = 5
  assert t.tolist() == [[0, 1], [5, 5]]
