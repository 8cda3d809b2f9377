"""A plan the search tries is built by a faster path than the plan the trace records (upcast's copies simplified with
the kernel's shared rewrite memo, a lane test by value before the one by rewriting): both must make the same kernel,
node for node, or the trace would show code other than what runs and a first run would pick differently from a
traced one."""
import numpy as np
import pytest
from tinygrad import Tensor, tracing
from tinygrad.dtype import dtypes
from tinygrad.uop.ops import UOp, Ops, rewrite_memo, untraced_rewrites
from tinygrad.engine.schedule import create_schedule, kernel_params
from tinygrad.codegen.lowerer import lower_kernel
from tinygrad.codegen import opts, vectorize

rng = np.random.default_rng(0)
def T(*shape): return Tensor(rng.standard_normal(shape, dtype=np.float32)).realize()

def _cases():
  a, b, x, w = T(32, 48), T(48, 40), T(4, 3, 8, 8), T(16, 3, 3, 3)
  a26, b1024, g = T(26, 272), T(272, 1024), T(4, 16, 8, 8)
  return {
    "matmul": lambda: a @ b,
    "matmul with bias and relu": lambda: (a @ b + T(40)).relu(),
    "conv with padding in the kernel": lambda: (x.pad((1, 1, 1, 1))._pool((3, 3), (1, 1), (1, 1)).reshape(4, 1, 3, 8, 8, 3, 3) * w.reshape(1, 16, 3, 1, 1, 3, 3)).sum((2, 5, 6)),
    "matmul, 26 rows by 1024 columns (ragged 6-row tile, B packed)": lambda: a26 @ b1024,
    "sum over batch, y and x": lambda: g.sum((0, 2, 3)),
    "max over a middle axis": lambda: g.max(1),
  }
CASES = _cases()

def _sink(t: Tensor):
  items, _ = create_schedule([t.uop])
  return lower_kernel(kernel_params([it for it in items if it.kind == "kernel"][-1])[0])

def _build_all(sink: UOp, granges: list[UOp], lanes: int, traced: bool) -> dict[str, tuple | None]:
  """Every candidate plan built as the search builds it (untraced, in one kernel's rewrite memo) or as the trace
  records the winner (each rewrite captured)."""
  out = {}
  with rewrite_memo():
    s = opts.merge_reduce_loops(sink)
    for name, build in opts.candidate_plans(s, granges, lanes):
      if traced:
        tracing.tracer, t = opts._RewriteLog(), tracing.tracer  # type: ignore[assignment]
        try: res = build()
        finally: tracing.tracer = t
      else:
        with untraced_rewrites(): res = build()
      out[name] = None if res is None else (res[0], tuple(res[1]))
  return out

@pytest.mark.parametrize("lanes", [16, 8])
@pytest.mark.parametrize("case", list(CASES))
def test_every_plan_is_the_same_built_fast_or_traced(case, lanes):
  sink, granges = _sink(CASES[case]())
  fast, traced = _build_all(sink, granges, lanes, False), _build_all(sink, granges, lanes, True)
  assert fast.keys() == traced.keys() and len(fast) > 1
  for name in fast:
    if fast[name] is None or traced[name] is None: assert fast[name] is traced[name], name
    else: assert fast[name][0] is traced[name][0] and fast[name][1] == traced[name][1], name  # UOps are hash-consed: the same object
  assert any(r is not None for r in fast.values())

def _rng(n: int, i: int, kind: str = "global") -> UOp: return UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, n),), (i, kind))
G, V = _rng(4, 0), _rng(8, 1, "vector")
N = G * 8 + V  # the output index split for 8 lanes

@pytest.mark.parametrize("idx, contiguous, by_value", [
  (N, True, True), (N * 64, False, False), ((N + 3) % 64, True, True), (N // 8 * 8 + N % 8 + 16, True, True), (N // 2, False, False),
  (N % 4, False, False), (N * 3 + 1, False, False), ((N + 5) * 2 - N, False, True)], ids=["plain", "strided", "mod wider than the lanes",
  "div and mod folded", "halved", "mod narrower than the lanes", "stride 3", "2n - n, unfolded by the rewrite: still rejected"])
def test_the_lane_test_by_value_agrees_with_the_one_by_rewriting(idx, contiguous, by_value):
  """_lanes_step_by_one rules out only what the rewrite test rejects (every contiguous index passes it), rules out
  the strided ones before any rewrite, and what it lets through is still the rewrite's to decide."""
  vectorize._base.cache_clear()
  assert (vectorize._base(idx, V, 8) is not None) == contiguous
  assert vectorize._lanes_step_by_one(idx, V, 8) == by_value

def test_the_lane_test_by_value_leaves_a_gather_by_a_loaded_index_to_the_rewrite():
  """An index that is a loaded value (an embedding's row by token id) has no value to test: it goes to the rewrite."""
  idx = UOp(Ops.LOAD, dtypes.int32, (UOp(Ops.DEFINE_GLOBAL, dtypes.int32, (), (0, 64)), N)) * 16 + N
  assert vectorize._value(idx, {V: 0}) is None and vectorize._lanes_step_by_one(idx, V, 8)

@pytest.mark.parametrize("case", ["matmul", "conv with padding in the kernel", "matmul, 26 rows by 1024 columns (ragged 6-row tile, B packed)"])
def test_the_copies_are_one_substitute_per_combination(case):
  """upcast's copies, made one dim at a time, are the kernel substituted once per combination of the copies, stores
  in itertools.product order (what the C code's statement order follows)."""
  import itertools
  from tinygrad.codegen.upcast import _copies, _copy_index, outer_ranges
  sink, granges = _sink(CASES[case]())
  # the rows by 6 (ragged: 6 doesn't divide 26, the last copies repeat the last row) or 4, the innermost dim by 4
  plan, _, _ = outer_ranges(granges, [(granges[0], 6 if "ragged" in case else 4), (granges[-1], 4)], 100)
  want = []
  for combo in itertools.product(*[range(f) for _, _, f in plan]):
    want.extend(UOp(Ops.SINK, src=sink.src).substitute({g: _copy_index(g, o, f, c) for (g, o, f), c in zip(plan, combo)}).src)
  assert _copies(sink, plan) is UOp(Ops.SINK, src=tuple(dict.fromkeys(want)))

def _copies_both_ways(sink: UOp, plan: list) -> tuple:
  """(upcast's copies simplified as they are made, or None where it leaves them to the raw way; the raw copies rewritten)."""
  from tinygrad.codegen.upcast import _copies, _copies_simplified, pm_copy_simplify
  from tinygrad.uop.ops import graph_rewrite, node_rewriter
  s = graph_rewrite(sink, pm_copy_simplify)
  return _copies_simplified(s, plan, node_rewriter(pm_copy_simplify)), graph_rewrite(_copies(s, plan), pm_copy_simplify)

@pytest.mark.parametrize("memo", [True, False], ids=["in a kernel's rewrite memo", "without one"])
@pytest.mark.parametrize("case", ["matmul", "conv with padding in the kernel", "matmul, 26 rows by 1024 columns (ragged 6-row tile, B packed)"])
def test_the_copies_simplified_as_made_are_the_raw_copies_rewritten(case, memo):
  """Each copy of a node built from its sources' simplified copies and simplified at once is the node the rewrite of
  the raw copies makes, store for store in the same order (a dim of 4 upcast by 4: the copy indices are constants)."""
  from tinygrad.codegen.upcast import outer_ranges
  sink, granges = _sink(CASES[case]())
  for ups in ([(granges[0], 6 if "ragged" in case else 2), (granges[-1], 4)], [(granges[-1], granges[-1].src[0].arg)], []):
    plan, _, _ = outer_ranges(granges, ups, 100)
    with rewrite_memo() if memo else untraced_rewrites():
      fast, raw = _copies_both_ways(sink, plan)
    assert fast is raw, ups

def test_stores_whose_copies_may_be_one_node_are_left_to_the_raw_copies():
  """A store to x and one to 0 of the same value: x's first copy is the second store. The raw copies drop it as a
  repeat, which the copies made simplified can't tell from two stores that only simplify to one node: they give up."""
  from tinygrad.codegen.upcast import outer_ranges, upcast
  x, out, inp = _rng(4, 0), UOp(Ops.DEFINE_GLOBAL, dtypes.float32, (), (0, 4)), UOp(Ops.DEFINE_GLOBAL, dtypes.float32, (), (1, 4))
  v = UOp(Ops.LOAD, dtypes.float32, (inp, UOp.const(dtypes.int32, 0)))
  sink = UOp(Ops.SINK, src=(UOp(Ops.STORE, dtypes.void, (out, x, v)), UOp(Ops.STORE, dtypes.void, (out, UOp.const(dtypes.int32, 0), v))))
  plan, _, _ = outer_ranges([x], [(x, 4)], 10)
  with rewrite_memo():
    fast, raw = _copies_both_ways(sink, plan)
    assert fast is None and len(raw.src) == 4
    with untraced_rewrites(): assert upcast(sink, plan, "") is raw
