"""A bound variable (Variable(...).bind(n)) used as a value, where tinygrad's test_tensor_variable uses one: a Tensor of
it, arithmetic with it, Tensor.from_uop, arange / full / flat pad / a shape taking it. Here it stands for its value
(shapes are concrete); checked against plain Python and numpy, and under TinyJit (a capture per value)."""
import numpy as np
import pytest
from tinygrad import Tensor, TinyJit, Variable, dtypes

def test_tensor_of_a_bound_variable_is_its_value():
  vv = Variable("a", 0, 10).bind(3)
  t = Tensor(vv)
  assert t.shape == () and t.dtype == dtypes.int and t.item() == 3
  assert (Tensor(vv) + 3).item() == 6
  assert (Tensor(5) * vv).item() == 15 and (Tensor(5) * (vv * 4)).item() == 60
  assert (Tensor([1.5, 2.0]) * vv).tolist() == [4.5, 6.0]
  assert Tensor(vv, dtype=dtypes.float).dtype == dtypes.float

def test_from_uop():
  vv = Variable("w", 0, 10).bind(2)
  assert Tensor.from_uop(vv * 4 + 1).item() == 9
  assert Tensor.from_uop(vv, dtype=dtypes.float).tolist() == 2.0
  assert Tensor.from_uop(vv.const_like(7)).item() == 7
  with pytest.raises(TypeError, match="DEFINE_VAR UOp has no value"): Tensor.from_uop(Variable("u", 0, 3))
  with pytest.raises(TypeError, match="takes a UOp"): Tensor.from_uop(3)

@pytest.mark.parametrize("args", [(0, 4), (4, 7), (0, 10, 2), (2, 14, 3)])
def test_arange_with_bound_ends(args):
  bound = [Variable(f"v{i}", 0, 20).bind(a) for i, a in enumerate(args)]
  assert Tensor.arange(*bound).tolist() == np.arange(*args).tolist()

def test_full_pad_and_shape_with_bound_variables():
  vv = Variable("x", 1, 10).bind(2)
  assert Tensor.full((3,), vv).tolist() == [2, 2, 2]
  a = np.ones((2, 2), np.float32)
  np.testing.assert_equal(Tensor(a).pad([vv, vv, 1, vv]).numpy(), np.pad(a, ((1, 2), (2, 2))))
  assert Tensor.empty(3, vv).shape == (3, 2) and Tensor.zeros(vv, 4).shape == (2, 4)

def test_jit_with_a_bound_value_inside():
  # the value enters a kernel as a constant: each value gets its own capture, so a replay never uses another's
  @TinyJit
  def scale(x: Tensor, k): return (x * Tensor(k)).realize()
  v = Variable("k", 0, 9)
  for k in [1, 2, 3, 2, 3, 1, 3]:
    np.testing.assert_equal(scale(Tensor([1.0, 2.0]), v.bind(k)).numpy(), [k, 2 * k])

def test_arithmetic_of_bound_variables_deep_or_mixed():
  # a value is found through any int arithmetic of bound variables and int constants, and only there
  vv, ww = Variable("p", 0, 10).bind(3), Variable("q", 0, 10).bind(4)
  assert Tensor(((vv + 1) * (ww - 1) + vv) // 2).item() == 7
  assert Tensor((vv * 2).maximum(ww * 2)).item() == 8
  t = Tensor([1, 2, 3]) + vv  # a graph of a buffer: no single value, an elementwise op with the bound one
  assert t.shape == (3,) and t.tolist() == [4, 5, 6]
