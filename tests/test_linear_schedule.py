"""Tensor.linear_with_vars / run_linear (tinygrad 0.14's LINEAR form of a schedule), and a contiguous() tensor that
one realize computes on the way keeps its buffer (it isn't computed again by the next realize)."""
import numpy as np
import pytest
from tinygrad import Tensor, GlobalCounters
from tinygrad.uop.ops import Ops
from tinygrad.engine.realize import run_linear, compile_linear

def _kernels(linear): return [c for c in linear.src if c.src[0].op is Ops.SINK]

def test_linear_runs_what_realize_would():
  a = Tensor([1.0, 2.0, 3.0]).contiguous().realize()
  out = (a * 2 + 1).sum()
  linear, var_vals = out.linear_with_vars()
  assert linear.op is Ops.LINEAR and var_vals == {}
  assert len(_kernels(linear)) == 1
  GlobalCounters.reset()
  run_linear(linear, var_vals)
  assert GlobalCounters.kernel_count == 1
  assert out.item() == 15.0

def test_linear_holds_copies_and_buffers():
  a = Tensor([1, 2, 3])  # a host list: one copy in, then the kernel
  linear = (a + 1).schedule_linear()
  ops = [c.src[0].op for c in linear.src]
  assert ops.count(Ops.COPY) == 1 and ops.count(Ops.SINK) == 1
  k = _kernels(linear)[0]
  assert all(b.op is Ops.BUFFER for b in k.src[1:])  # the buffers it writes, then reads
  run_linear(compile_linear(linear))

def test_nothing_to_run_is_an_empty_linear():
  a = Tensor([4.0, 5.0]).contiguous().realize()
  linear, _ = a.linear_with_vars()
  assert len(linear.src) == 0
  run_linear(linear)
  assert a.tolist() == [4.0, 5.0]

def test_run_linear_rejects_other_uops():
  with pytest.raises(TypeError, match="LINEAR"): run_linear(Tensor([1.0]).uop)

def test_contiguous_intermediate_is_computed_once():
  w = (Tensor.arange(600).reshape(20, 30).float() * 0.5).contiguous()
  (w + 1).realize()
  assert w.uop.base.op is Ops.BUFFER  # w took the buffer the first realize wrote
  GlobalCounters.reset()
  out = (w * 2).realize()
  assert GlobalCounters.kernel_count == 1  # only the multiply: w is not recomputed
  np.testing.assert_allclose(out.numpy(), np.arange(600).reshape(20, 30) * 1.0)

def test_embedding_second_lookup_is_one_kernel():
  from tinygrad.nn import Embedding
  layer = Embedding(20, 30)
  layer.weight = Tensor.zeros_like(layer.weight).contiguous()
  run_linear(layer(Tensor([[1, 5], [12, 19]])).schedule_linear())
  out = layer(Tensor([[1, 2, 3]]))
  assert len(_kernels(out.schedule_linear())) == 1
  assert out.numpy().shape == (1, 3, 30)

def test_contiguous_inside_a_function_body_stays_the_bodys():
  from tinygrad import function
  kept = []
  @function
  def f(x):
    kept.append(y := (x * 2).contiguous())  # a body tensor kept alive: not a buffer of its own
    return y + 1
  a = Tensor([1.0, 2.0]).realize()
  assert f(a).tolist() == [3.0, 5.0] and f(a + 1).tolist() == [5.0, 7.0]
