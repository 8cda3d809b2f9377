"""dropout's probability ends, as torch.nn.functional.dropout: p=1 drops everything (zeros, zero gradient), p outside
[0, 1] is a ValueError (tinygrad's test_edgecases: test_dropout_rate_one, test_dropout_invalid_prob)."""
import numpy as np
import pytest
import torch
from tinygrad import Tensor

def test_dropout_rate_one_is_zeros_like_torch():
  a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
  tx = torch.tensor(a, requires_grad=True)
  ty = torch.nn.functional.dropout(tx, 1.0, True)
  ty.sum().backward()
  with Tensor.train():
    x = Tensor(a, requires_grad=True)
    y = x.dropout(1.0)
    y.sum().backward()
  np.testing.assert_equal(y.numpy(), ty.detach().numpy())
  np.testing.assert_equal(x.grad.numpy(), tx.grad.numpy())

@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_probability_outside_0_1(p):
  with pytest.raises(ValueError): torch.nn.functional.dropout(torch.ones(4), p, True)
  with Tensor.train(), pytest.raises(ValueError, match=r"must be in \[0, 1\], got"): Tensor.ones(4).dropout(p)
