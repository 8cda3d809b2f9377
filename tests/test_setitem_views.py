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
  n.T[1, 0] = 50; t.T[1, 0] = 50  # no realize between: each write goes after the one still pending
  n[:, ::-1][0] = 7; t[:, ::-1][0] = 7
  v_n, v_t = n[:, 1:], t[:, 1:]
  v_n[1] = -1; v_t[1] = -1
  np.testing.assert_equal(t.numpy(), n)
  np.testing.assert_equal(v_t.numpy(), v_n)  # the view sees the write too

def test_unrealized_view_still_only_changes_itself():
  # a lazy tensor has no buffer to write: the view alone takes the new value (tinygrad's test_setitem_into_unrealized)
  t = Tensor.arange(4).reshape(2, 2)
  t[1] = 5
  assert t.tolist() == [[0, 1], [5, 5]]

def test_assigns_into_two_slices_without_realize():
  # the second assign's base has the first still pending: both land (the second was lost), scalars fill the slice
  t = Tensor.zeros(6).contiguous().realize()
  t[:3].assign(1.0)
  t[3:].assign(Tensor.full((3,), 2.0))
  assert t.tolist() == [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]

def test_setitem_through_detach_writes_the_tensor_underneath():
  # as tinygrad: a detached tensor shares its buffer, so writing into it (or a view of it) writes the original
  t = Tensor.zeros(4, 3).contiguous().realize()
  d = t.detach()
  d[1] = 5
  expect = np.zeros((4, 3), np.float32); expect[1] = 5
  np.testing.assert_array_equal(d.numpy(), expect)  # read through the detached tensor first
  np.testing.assert_array_equal(t.numpy(), expect)
  u = Tensor.ones(2, 2).contiguous().realize()
  u.detach()[:, 1].assign(Tensor([7., 8.])).realize()
  np.testing.assert_array_equal(u.numpy(), [[1, 7], [1, 8]])
  lazy = Tensor.ones(3) * 2  # nothing realized: the detached graph changes alone, as in tinygrad
  ld = lazy.detach(); ld[0] = 7
  np.testing.assert_array_equal(ld.numpy(), [7, 2, 2]); np.testing.assert_array_equal(lazy.numpy(), [2, 2, 2])
