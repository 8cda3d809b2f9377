# Random draws as tinygrad's test_randomness checks them: a half draw is never 1.0, an int uniform covers [low, high)
# evenly, multinomial's bad arguments raise tinygrad's AssertionError.
import numpy as np
import pytest
from tinygrad import Tensor, dtypes

def test_half_rand_stays_below_one():
  Tensor.manual_seed(0)
  x = Tensor.rand(2, 128, 128, dtype=dtypes.half).numpy()
  assert x.dtype == np.float16 and x.max() < 1.0 and (x == 0).any()  # 11 random bits: 0 is drawn, 1 - 2**-11 is the top
  assert len(np.unique(x)) > 1500  # still fine-grained: most of the 2048 values occur

def test_int_uniform_covers_low_to_high():
  Tensor.manual_seed(0)
  x = Tensor.uniform(100_000, low=-100, high=100, dtype=dtypes.int32)
  assert x.dtype == dtypes.int32
  v = x.numpy()
  assert v.min() == -100 and v.max() == 99
  counts = np.bincount(v + 100, minlength=200)
  assert counts.min() > 350 and counts.max() < 650  # ~500 each: no pile-up at 0 (truncation toward zero after adding low)

def test_multinomial_errors_are_tinygrads():
  with pytest.raises(AssertionError): Tensor(2.0).multinomial(1)
  with pytest.raises(AssertionError): Tensor([1.0, 9.0]).multinomial(0)
  with pytest.raises(AssertionError): Tensor([0.1, 0.9]).multinomial(100, replacement=False)
  with pytest.raises(NotImplementedError): Tensor([0.1, 0.9]).multinomial(2, replacement=False)  # also what it is
