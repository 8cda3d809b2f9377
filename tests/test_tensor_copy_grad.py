"""Tensor behaviours tinygrad's test_tensor.py checks: deepcopy, lists of numpy arrays, a bad dtype, clone's
gradient and buffer, and requires_grad=False propagating through ops (checked against numpy and torch)."""
import copy
import numpy as np
import pytest
import torch
from tinygrad import Tensor, dtypes

def test_deepcopy_is_an_independent_copy():
  a = Tensor([1.0, 2.0, 3.0], requires_grad=True).realize()
  b = copy.deepcopy(a)
  assert b.tolist() == [1.0, 2.0, 3.0] and b.requires_grad is True and b.dtype == a.dtype
  b += 1
  b.realize()
  assert a.tolist() == [1.0, 2.0, 3.0] and b.tolist() == [2.0, 3.0, 4.0]

@pytest.mark.parametrize("data", [[np.array([1, 2, 3]), np.array([4, 5, 6])], [np.array([1.5, 2.0]), np.array([1, 2])],
                                  [np.array(1.0), np.array(2.0)], [[np.int64(3), np.float32(0.5)]]])
def test_list_of_numpy_arrays(data):
  np.testing.assert_equal(Tensor(data).numpy(), np.array(data))

def test_dtype_not_a_dtype():
  for bad in ((dtypes.int,), "typo"):
    with pytest.raises(AttributeError): Tensor([3], dtype=bad)
    with pytest.raises(TypeError): Tensor([3], dtype=bad)

def test_clone_carries_gradient_and_owns_buffer():
  a = Tensor.rand(4, 4, requires_grad=True)
  a.mul(5.0).sum().backward()
  b = a.clone()
  np.testing.assert_allclose(b.grad.numpy(), np.full((4, 4), 5.0))
  b.realize(); a.realize()
  assert b.uop.base.buffer is not a.uop.base.buffer
  with pytest.raises(AttributeError, match="BUFFER"): (a + 1).uop.buffer

def test_requires_grad_false_propagates():
  xn, wn = np.random.rand(1, 3).astype(np.float32), np.random.rand(3, 3).astype(np.float32)
  x, m, W = Tensor(xn, requires_grad=False), Tensor(xn, requires_grad=False), Tensor(wn, requires_grad=True)
  tmp = x.mul(m)
  tmp2 = tmp * 2
  mm = tmp2.matmul(W)
  mm.relu().sum().backward()
  assert x.grad is None and m.grad is None and tmp.grad is None and tmp2.grad is None
  assert mm.grad is not None
  tx, tW = torch.tensor(xn), torch.tensor(wn, requires_grad=True)
  ((tx * tx * 2) @ tW).relu().sum().backward()
  np.testing.assert_allclose(W.grad.numpy(), tW.grad.numpy(), rtol=1e-6)

def test_default_requires_grad_still_gets_gradients():
  a = Tensor.rand(3)  # requires_grad None: as tinygrad 0.14, it takes a gradient
  h = a * 3
  h.sum().backward()
  np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0, 3.0])
  np.testing.assert_allclose(h.grad.numpy(), [1.0, 1.0, 1.0])

def test_sparse_crossentropy_labels_broadcast_over_one_row():
  logits, y = np.random.rand(5).astype(np.float32), np.array([1, 3])
  ours = Tensor(logits).sparse_categorical_crossentropy(Tensor(y), label_smoothing=0.1).item()
  ref = torch.nn.functional.cross_entropy(torch.tensor(logits).expand(2, 5), torch.tensor(y), label_smoothing=0.1).item()
  np.testing.assert_allclose(ours, ref, rtol=1e-6)
  with pytest.raises(ValueError, match="don't match logits"): Tensor(np.random.rand(3, 5)).sparse_categorical_crossentropy(Tensor([1, 2]))
