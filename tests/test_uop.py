"""UOp hash-consing, UPat/PatternMatcher, graph_rewrite and the symbolic tables."""
import sys, pytest
from tinygrad import dtypes
from tinygrad.uop.ops import UOp, UPat, Ops, PatternMatcher, graph_rewrite
from tinygrad.uop.symbolic import symbolic

def test_hash_consing_returns_the_same_object():
  a, b = UOp.const(dtypes.int, 3), UOp.const(dtypes.int, 3)
  assert a is b
  assert (a + b) is (a + b)
  assert UOp.const(dtypes.int, 1) is not UOp.const(dtypes.float, 1)
  assert UOp.const(dtypes.float, 1.0) is UOp.const(dtypes.float, 1)  # the value is normalised to the dtype

def test_uop_is_immutable():
  a = UOp.const(dtypes.int, 3)
  with pytest.raises(AttributeError): a.arg = 4

def test_repr_in_tinygrad_form():
  r = repr(UOp.const(dtypes.int, 1) + UOp.const(dtypes.int, 2))
  assert r.startswith("UOp(Ops.ADD, dtypes.int, arg=None, src=(") and "UOp(Ops.CONST, dtypes.int, arg=2, src=())" in r

def test_toposort_sources_first():
  x = UOp.variable("x", 0, 10)
  y = (x + 1) * (x + 1)
  order = y.toposort()
  assert order[-1] is y and order.index(x) < order.index(x + 1) < order.index(y)
  assert len(order) == 4  # x, 1, x+1, y: shared nodes once

def test_upat_remembers_where_it_was_written():
  p = UPat.cvar("a") + UPat.cvar("b"); line = sys._getframe().f_lineno
  assert p.location == (__file__, line)
  assert UPat(Ops.ADD).location[0] == __file__

def test_both_pattern_spellings_fold_to_the_same_const():
  expr = UOp.const(dtypes.int, 2) + UOp.const(dtypes.int, 2)
  sugar = PatternMatcher([(UPat.cvar("x") + UPat.cvar("y"), lambda x, y: x.const_like(x.arg + y.arg))])
  plain = PatternMatcher([(UPat(Ops.ADD, src=(UPat.cvar("x"), UPat.cvar("y"))), lambda x, y: x.const_like(x.arg + y.arg))])
  assert graph_rewrite(expr, sugar) is graph_rewrite(expr, plain) is UOp.const(dtypes.int, 4)

def test_commutative_src_matches_either_order():
  x = UOp.variable("x", 0, 10)
  pm = PatternMatcher([(UPat(Ops.ADD, src=[UPat.var("v"), UPat.cvar("c")]), lambda v, c: v)])
  assert graph_rewrite(x + 5, pm) is x
  assert graph_rewrite(UOp.const(dtypes.int, 5) + x, pm) is x
  ordered = PatternMatcher([(UPat(Ops.ADD, src=(UPat.var("v"), UPat.cvar("c"))), lambda v, c: v)])
  assert graph_rewrite(UOp.const(dtypes.int, 5) + x, ordered) is not x

def test_matchers_combine_with_plus_and_ctx_is_passed():
  seen = []
  a = PatternMatcher([(UPat(Ops.MUL, name="m"), lambda ctx, m: seen.append(m) or None)])
  b = PatternMatcher([(UPat(Ops.MUL, src=(UPat.var("x"), UPat.cvar("c", ))), lambda x, c: x if c.arg == 1 else None)])
  x = UOp.variable("x", 0, 10)
  assert graph_rewrite(x * 1, a + b, ctx="c") is x
  assert len(seen) == 1

def test_rewrite_runs_to_fixed_point_on_new_nodes():
  x = UOp.variable("x", 0, 10)
  # each step peels one +1; the result is rewritten again until nothing matches
  pm = PatternMatcher([(UPat.var("y") + 1, lambda y: y)])
  assert graph_rewrite(((x + 1) + 1) + 1, pm) is x

def test_deep_chain_no_recursion_limit():
  x = UOp.variable("x", 0, 10)
  c = x
  for _ in range(12000): c = c + 1
  assert sys.getrecursionlimit() < 12000
  out = graph_rewrite(c, symbolic)
  assert out.op is Ops.ADD and out.src[0] is x and out.src[1].arg == 12000
  assert len(c.toposort()) > 12000

def test_constant_reassociation():
  x = UOp.variable("x", 0, 100)
  assert graph_rewrite(x + 3 + 4, symbolic) is x + 7
  assert graph_rewrite(x * 2 * 3, symbolic) is x * 6

def test_identities():
  x = UOp.variable("x", 0, 100)
  assert graph_rewrite(x + 0, symbolic) is x
  assert graph_rewrite(x * 1, symbolic) is x
  assert graph_rewrite(x * 0, symbolic) is UOp.const(dtypes.int, 0)
  f = UOp(Ops.DEFINE_VAR, dtypes.float, (), ("f", 0, 1))
  assert graph_rewrite(f * 1.0 + 0.0, symbolic) is f

def test_index_math_simplifies_with_bounds():
  i, j = UOp.variable("i", 0, 9), UOp.variable("j", 0, 3)
  assert graph_rewrite((i * 4 + j) // 4, symbolic) is i
  assert graph_rewrite((i * 4 + j) % 4, symbolic) is j
  g = UOp.variable("g", 0, 39)
  assert graph_rewrite((g // 4) * 4 + g % 4, symbolic) is g
  # a flat index read through a (32, 32, 3, 3) view of a contiguous buffer folds back to the index (Adam's updates of
  # a conv weight were left with this chain of divisions, scalar loops GCC could not vectorize)
  f = UOp.variable("f", 0, 9215)
  assert graph_rewrite((f // 288) * 288 + ((f // 9) % 32) * 9 + ((f // 3) % 3) * 3 + f % 3, symbolic) is f
  assert graph_rewrite(((g // 4) % 5) * 4 + g % 4, symbolic) is graph_rewrite(g % 20, symbolic)
  assert graph_rewrite(j < 4, symbolic) is UOp.const(dtypes.bool, True)
  assert graph_rewrite(j // 8, symbolic) is UOp.const(dtypes.int, 0)

def test_symbolic_keeps_values():
  # check the simplified expression against direct evaluation over the whole domain
  from tinygrad.uop.alu import exec_alu
  i, j = UOp.variable("i", 0, 7), UOp.variable("j", 0, 5)
  exprs = [((i * 6 + j) // 3) % 4, (i * 12 + j * 2) % 6 + (i * 12 + j * 2) // 6, ((i + 3) * 2 + j + 5) // 2,
           (((i * 6 + j) // 3) % 5) * 3 + (i * 6 + j) % 3, (((i * 6 + j) // 2) % 4) * 2 + (i * 6 + j) % 2 + j]
  def ev(u, env):
    vals = {}
    for n in u.toposort():
      if n.op is Ops.DEFINE_VAR: vals[n] = env[n.arg[0]]
      elif n.op is Ops.CONST: vals[n] = n.arg
      else: vals[n] = exec_alu(n.op, n.dtype, [vals[s] for s in n.src])
    return vals[u]
  for e in exprs:
    s = graph_rewrite(e, symbolic)
    for a in range(8):
      for b in range(6): assert ev(e, {"i": a, "j": b}) == ev(s, {"i": a, "j": b})

def test_bounds_of_a_negated_bool_are_its_logical_not():
  """NEG on a bool is `not` (how >= and <= are built): its bounds must stay within {False, True}, or ANDs and ORs
  of such comparisons fold to a wrong constant."""
  i = UOp.variable("i", 0, 3)
  ge = UOp(Ops.NEG, dtypes.bool, (i < 2,))  # i >= 2
  assert (ge.vmin, ge.vmax) == (False, True)
  assert UOp(Ops.NEG, dtypes.bool, (UOp.const(dtypes.bool, True),)).vmax is False
  import numpy as np
  from tinygrad import Tensor
  a, b = Tensor.arange(2).reshape(2, 1), Tensor.arange(2).reshape(1, 2)
  np.testing.assert_array_equal(((a >= b) & Tensor([[True, True], [True, True]])).numpy(), [[True, False], [True, True]])
  np.testing.assert_array_equal(((a <= b) | Tensor([[False, False], [False, False]])).numpy(), [[True, True], [False, True]])
