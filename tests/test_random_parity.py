# Random draws as tinygrad's test_randomness checks them: a half draw is never 1.0, an int uniform covers [low, high)
# evenly, multinomial's bad arguments raise tinygrad's AssertionError.
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.uop.ops import Ops

def test_half_rand_stays_below_one():
  Tensor.manual_seed(0)
  x = Tensor.rand(2, 128, 128, dtype=dtypes.half).numpy()
  # tinygrad 0.14's half draws: 10 random bits (the significand's) over 2**10, so 0 occurs and 1 - 2**-10 is the top
  assert x.dtype == np.float16 and x.max() < 1.0 and (x == 0).any()
  np.testing.assert_equal(np.unique(x), np.arange(1024, dtype=np.float16) / 1024)  # every one of the 1024 values occurs

def test_stream_is_tinygrads():
  # Threefry-2x32 of a per-device counter, as tinygrad 0.14 draws: values printed by the real tinygrad 0.14 (DEV=CPU)
  Tensor.manual_seed(0)
  np.testing.assert_equal(Tensor.randperm(10).numpy(), [8, 9, 4, 3, 6, 1, 7, 5, 2, 0])  # tinygrad's test_randperm
  Tensor.manual_seed(0)
  np.testing.assert_equal(Tensor.rand(10).numpy()[:4], np.array([0.99732566, 0.54569364, 0.9858358, 0.31978977], np.float32))
  np.testing.assert_equal(Tensor.rand(3, 5).numpy()[0], np.array([0.33037782, 0.99196804, 0.24372923, 0.2984265, 0.023711562], np.float32))
  # another device has its own key and counter: its first draw is the same whatever was drawn on the CPU before
  np.testing.assert_equal(Tensor.rand(4, device="CPU:1").numpy(), np.array([0.26920438, 0.4049965, 0.57415116, 0.5340625], np.float32))

def test_jit_replays_the_stream():
  from tinygrad import TinyJit
  f = TinyJit(lambda x: (x + Tensor.rand(3, 4)).realize())
  Tensor.manual_seed(1)
  got = [f(Tensor.zeros(3, 4).contiguous()).numpy() for _ in range(4)]
  Tensor.manual_seed(1)
  ref = [Tensor.rand(3, 4).numpy() for _ in range(4)]
  np.testing.assert_equal(got, ref)

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

def test_rand_is_contiguous_by_default():
  # tinygrad 0.14: a draw is a buffer of its own, computed once by the realize that reaches it; later readers see
  # those very numbers (tinygrad's test_clone_with_shrink reads its buffer)
  a = Tensor.rand(16, 16)
  b = a.shrink(((2, 10), None)).clone().realize()
  assert a.uop.base.buffer is not b.uop.base.buffer
  np.testing.assert_equal(a.numpy()[2:10], b.numpy())
  # contiguous=False: nothing to hand a buffer to, the draws are part of their reader's kernel
  c = Tensor.rand(4, contiguous=False)
  (c + 1).realize()
  assert c.uop.base.op is not Ops.BUFFER
