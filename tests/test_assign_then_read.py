"""A graph built on a pending assign reads the written buffer once the assign has run: it never runs the write again
(tinygrad's becomes_map). Before, `t += 1; y = t * 2; t.realize()` left y = 4 and t = 2: y's graph ran the += a second
time, into t's buffer. Expected values are numpy's (and tinygrad 0.14's for the same code)."""
import numpy as np
from tinygrad import Tensor

def fresh(n=3) -> Tensor: return Tensor.zeros(n).contiguous().realize()

def test_derived_tensor_read_after_the_assign_ran():
  t = fresh(); t += 1; y = t * 2
  t.realize()
  np.testing.assert_equal(y.numpy(), [2, 2, 2])
  np.testing.assert_equal(t.numpy(), [1, 1, 1])

def test_derived_tensor_read_first():
  t = fresh(); t += 1; y = t * 2
  np.testing.assert_equal(y.numpy(), [2, 2, 2])
  np.testing.assert_equal(t.numpy(), [1, 1, 1])

def test_view_of_a_pending_assign_read_after_it():
  t = fresh(); t += 1; v = t[0:2]; z = v + 0
  np.testing.assert_equal(t.numpy(), [1, 1, 1])
  np.testing.assert_equal(v.numpy(), [1, 1])
  np.testing.assert_equal(z.numpy(), [1, 1])

def test_the_assigning_tensor_gone():
  t = fresh(); t += 1; y = t * 2
  t.realize(); del t
  np.testing.assert_equal(y.numpy(), [2, 2, 2])

def test_inplace_add_on_a_view_then_read_both_orders():
  for first in ("base", "view"):
    t = Tensor.zeros(4, 5).contiguous().realize()
    r = t[0:2]; r += 3
    got = [t.numpy(), r.numpy()] if first == "base" else [r.numpy(), t.numpy()][::-1]
    want = np.zeros((4, 5), np.float32); want[0:2] += 3
    np.testing.assert_equal(got[0], want)
    np.testing.assert_equal(got[1], want[0:2])

def test_setitem_through_a_reshape_of_a_pending_assign():
  t = Tensor.zeros(4, 5).contiguous().realize()
  t += 1
  t.reshape(20)[3] = 5
  want = np.ones(20, np.float32); want[3] = 5
  np.testing.assert_equal(t.numpy().ravel(), want)

def test_assign_through_a_reshape_of_a_pending_assign():
  t = Tensor.arange(20).float().reshape(4, 5).contiguous().realize()
  t += 1
  r = t.reshape(2, 10); r += 3
  want = np.arange(20, dtype=np.float32) + 4
  np.testing.assert_equal(t.numpy().ravel(), want)
  np.testing.assert_equal(r.numpy().ravel(), want)

def test_optimizer_step_then_an_old_graph():
  # a loss built before the step reads the weights it was built on only while they are pending; afterwards it reads
  # the updated buffer once, and the step's writes are not repeated
  w = Tensor([1.0, 2.0], requires_grad=True)
  w.realize()
  w.assign(w.detach() * 10)
  s = w.sum()
  w.realize()
  np.testing.assert_equal(w.numpy(), [10, 20])
  assert s.item() == 30
  np.testing.assert_equal(w.numpy(), [10, 20])
