"""Tensor.rearrange against einops itself on numpy arrays (the formulas einops documents), and its errors."""
import einops, numpy as np, pytest
from tinygrad import Tensor

CASES = [
  ((2, 3), "batch channel -> (batch channel)", {}),
  ((2, 3, 4, 5), "b c h w -> b h w c", {}),
  ((2, 3, 4, 6), "b c h (w p) -> b (c p) h w", {"p": 2}),
  ((6, 3, 4), "(b1 b2) h w -> h (b1 w) b2", {"b1": 2}),
  ((2, 3, 8, 6), "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", {"p1": 2, "p2": 3}),
  ((2, 3, 4), "b h w -> b 1 h w 1", {}),
  ((2, 1, 4), "b 1 w -> w b", {}),
  ((2, 3, 4, 5), "b ... w -> w ... b", {}),
  ((2, 3, 4, 5), "b ... -> b (...)", {}),
  ((2, 3, 4, 5), "... h w -> ... (w h)", {}),
  ((4,), "... -> ...", {}),
  ((2, 3), "a b -> b a", {"a": 2, "b": 3}),
  ((2, 3, 4), "b () w -> b w ()".replace("()", "c"), {}),
  ((12,), "(a b c) -> c b a", {"a": 2, "b": 3}),
  ((2, 0, 3), "a b c -> c (a b)", {}),
]

@pytest.mark.parametrize("shape,formula,sizes", CASES, ids=[c[1] for c in CASES])
def test_rearrange_matches_einops(shape, formula, sizes):
  x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
  want = einops.rearrange(x, formula, **sizes)
  got = Tensor(x).rearrange(formula, **sizes)
  assert got.shape == want.shape
  np.testing.assert_array_equal(got.numpy(), want)

def test_rearrange_gradient_flows_back():
  x = Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4), requires_grad=True)
  (x.rearrange("b c (h p) -> b (c p) h", p=2) * Tensor(np.arange(24, dtype=np.float32).reshape(2, 6, 2))).sum().backward()
  w = einops.rearrange(np.arange(24, dtype=np.float32).reshape(2, 6, 2), "b (c p) h -> b c (h p)", p=2)
  np.testing.assert_array_equal(x.grad.numpy(), w)

@pytest.mark.parametrize("formula,sizes,words", [
  ("a b c", {}, '"->"'),
  ("a b -> a c", {}, "one side only"),
  ("a a -> a a", {}, "repeats"),
  ("a b -> (a b", {}, "without ')'"),
  ("(a b) c -> a b c", {}, "can't infer"),
  ("(a b) c -> a b c", {"a": 5}, "can't split"),
  ("a b c -> a b c", {}, "has 2"),
  ("a b -> a b", {"z": 1}, "not used"),
  ("(... a) b -> a ... b", {}, "parentheses"),
  ("a b -> a b ...", {}, "both sides"),
  ("a 2 -> a", {}, "invalid axis name"),
])
def test_rearrange_errors_name_the_problem(formula, sizes, words):
  with pytest.raises((ValueError, AssertionError)) as e: Tensor.ones(4, 3).rearrange(formula, **sizes)
  assert words in str(e.value)
  # tinygrad raises AssertionError here: a script catching it keeps working
  assert isinstance(e.value, AssertionError)
