"""The plan search leaves the scalar plan unbuilt where another plan already costs less than the scalar plan can
(opts._scalar_floor): the pick must be the one a search that builds and costs every plan makes, and the floor must
never be above the scalar plan's cost."""
import numpy as np
import pytest
from tinygrad import Tensor
from tinygrad.uop.ops import rewrite_memo, untraced_rewrites
from tinygrad.engine.schedule import create_schedule, kernel_params
from tinygrad.codegen.lowerer import lower_kernel
from tinygrad.codegen import opts, plan_cache

rng = np.random.default_rng(0)
def T(*shape): return Tensor(rng.standard_normal(shape, dtype=np.float32)).realize()

def _cases():
  a, b, x, w, g = T(32, 48), T(48, 40), T(4, 3, 8, 8), T(16, 3, 3, 3), T(4, 16, 8, 8)
  return {
    "matmul": lambda: a @ b,
    "matmul, 10 columns": lambda: T(128, 256) @ T(256, 10),
    "matmul with bias and relu": lambda: (a @ b + T(40)).relu(),
    "conv with padding in the kernel": lambda: (x.pad((1, 1, 1, 1))._pool((3, 3), (1, 1), (1, 1)).reshape(4, 1, 3, 8, 8, 3, 3) * w.reshape(1, 16, 3, 1, 1, 3, 3)).sum((2, 5, 6)),
    "sum over batch, y and x": lambda: g.sum((0, 2, 3)),
    "sum of a row of 128": lambda: T(128).sum(),
    "max over a middle axis": lambda: g.max(1),
  }
CASES = _cases()

def _sink(t: Tensor):
  items, _ = create_schedule([t.uop])
  return lower_kernel(kernel_params([it for it in items if it.kind == "kernel"][-1])[0])

@pytest.fixture
def no_remembered_plans(tmp_path, monkeypatch):
  monkeypatch.setattr(plan_cache, "plan_dir", lambda: tmp_path)

def _full_search(sink, granges, lanes: int):
  """Every plan built and costed, in order; the first of the cheapest wins (as apply_opts did before the floor)."""
  with rewrite_memo(), untraced_rewrites():
    s = opts.merge_reduce_loops(sink)
    plans = opts.long_reduce_plans(s, granges, opts.candidate_plans(s, granges, lanes, prune=opts.PRUNE))
    built = [(n, res, opts.plan_cost(n, res[0], s, granges, lanes, opts.MAX_UPCAST)) for n, plan in plans if (res := plan()) is not None]
    floor = opts._scalar_floor(s, granges, lanes, opts.MAX_UPCAST)
  return built, floor

@pytest.mark.parametrize("lanes", [16, 8])
@pytest.mark.parametrize("case", list(CASES))
def test_the_pick_is_the_full_searchs_and_the_floor_is_below_the_scalar_cost(case, lanes, no_remembered_plans):
  sink, granges = _sink(CASES[case]())
  built, floor = _full_search(sink, granges, lanes)
  scalar = dict((n, c) for n, _, c in built).get("scalar")
  if floor is not None and scalar is not None: assert floor <= scalar, (floor, scalar)
  tried: list[dict] = []
  with rewrite_memo(): got_sink, got_granges = opts.apply_opts(sink, granges, vector=lanes, tried=tried)
  if len(built) > 1:
    name, (want_sink, want_granges), _ = min(built, key=lambda b: b[2])
    assert [d["name"] for d in tried if d["chosen"]] == [name]
    assert got_sink is want_sink and list(got_granges) == list(want_granges)  # hash-consed: the very same kernel

def _tried(case: str) -> dict[str, dict]:
  sink, granges = _sink(CASES[case]())
  tried: list[dict] = []
  with rewrite_memo(): opts.apply_opts(sink, granges, vector=8, tried=tried)
  return {d["name"]: d for d in tried}

def test_the_scalar_plan_is_left_unbuilt_where_a_vector_plan_costs_less(no_remembered_plans):
  """A Linear layer's 10 outputs a row: its vector tile costs under one op per accumulated lane, which its scalar plan
  can't (GCC doesn't pack it), so that is not built. A matmul whose scalar copies GCC packs into vectors (slp_lanes)
  can cost less: its scalar plan is built, and wins."""
  scalar = _tried("matmul, 10 columns")["scalar"]
  assert scalar["cost"] is None and scalar["why"].startswith("not built") and not scalar["chosen"]
  scalar = _tried("matmul")["scalar"]
  assert scalar["cost"] is not None and scalar["chosen"]
