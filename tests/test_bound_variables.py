"""Bound variables (Variable(...).bind(n)) where tinygrad scripts use them: int arithmetic of them as slice bounds and
in pad/shrink, and TinyJit calls that pass them (a KV-cache update at a position). Shapes here are concrete, so each
value is its value; checked against numpy."""
import numpy as np
import pytest
from tinygrad import Tensor, TinyJit, Variable

def test_int_of_bound_arithmetic():
  v = Variable("i", 0, 9).bind(4)
  assert [int(v + 1), int(10 - v - 3), int(v * 3 // 2), int(v % 3), int(-v + 9)] == [5, 3, 6, 1, 5]
  assert slice(v, v + 2).indices(10) == (4, 6, 1)
  with pytest.raises(TypeError, match="DEFINE_VAR"): int(Variable("j", 0, 9) + 1)  # unbound: no value

def test_slice_assign_at_bound_offset():
  out = Tensor.zeros(4, 5).contiguous().realize()
  vi = Variable("i", 0, 4).bind(3)
  out[:, vi:vi + 1].assign(Tensor.ones(4, 1)).realize()
  ref = np.zeros((4, 5), np.float32); ref[:, 3:4] = 1
  np.testing.assert_equal(out.numpy(), ref)

def test_shrink_and_pad_by_bound_expression():
  a = np.arange(24, dtype=np.float32).reshape(2, 12)
  p = Variable("p", 1, 12).bind(5)
  t = Tensor(a).shrink((None, (0, p))).pad((None, (0, 12 - p)))
  np.testing.assert_equal(t.numpy(), np.pad(a[:, :5], ((0, 0), (0, 7))))

def test_jit_takes_new_bound_values():
  # the position is a bound variable argument: every call writes its own position (a replay of the first value's
  # kernels would write the same column each time)
  cache = Tensor.zeros(3, 6).contiguous().realize()
  calls = []
  @TinyJit
  def write(x: Tensor, pos):
    calls.append(int(pos))
    cache[:, pos:pos + 1].assign(x).realize()
    return cache.sum(1).realize()
  v = Variable("pos", 0, 5)
  ref = np.zeros((3, 6), np.float32)
  for i in [0, 1, 2, 3, 1, 2]:
    x = np.full((3, 1), i + 1, np.float32)
    got = write(Tensor(x), v.bind(i)).numpy()
    ref[:, i:i + 1] = x
    np.testing.assert_equal(got, ref.sum(1))
  np.testing.assert_equal(cache.numpy(), ref)
  # 1 and 2 again replay what was captured for them: the Python function doesn't run
  assert calls == [0, 1, 2, 3]

def test_jit_kv_cache_with_bound_start_pos():
  # LLaMA's cache update: keys up to start_pos, the new one appended, padded back to the cache's size
  ctx = 8
  class Attn:
    @TinyJit
    def __call__(self, xk: Tensor, start_pos):
      if not hasattr(self, "cache"): self.cache = Tensor.zeros(2, ctx).contiguous().realize()
      keys = self.cache.shrink((None, (0, start_pos))).cat(xk, dim=1) if start_pos > 0 else xk
      self.cache.assign(keys.pad((None, (0, ctx - start_pos - xk.shape[1]))).contiguous()).realize()
  attn = Attn()
  attn(Tensor.full((2, 3), 1.0).contiguous(), 0)
  for i in range(3, 6): attn(Tensor.full((2, 1), float(i)).contiguous(), Variable("start_pos", 1, ctx).bind(i))
  np.testing.assert_equal(attn.cache.numpy(), np.array([[1, 1, 1, 3, 4, 5, 0, 0]] * 2, np.float32))
