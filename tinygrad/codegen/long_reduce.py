"""A long reduction over a big input (a split reduction's first kernel, engine/split_reduce.py; the row sums of a big
matrix): independent accumulators. With one vector accumulator each add waits for the one before (3-4 cycles on a
Zen 2 core): a sum over 1M floats in cache ran 124 us with one, 59 us with four (hand-written C, one core). Such a
kernel reading more than the renderer's parallel_stream_bytes also runs on every core (engine/realize.py)."""
from __future__ import annotations
from typing import Any
from tinygrad.helpers import prod
from tinygrad.uop.ops import UOp, Ops
from tinygrad.uop.symbolic import _terms
from tinygrad.codegen.upcast import choose_upcasts

ACCUMULATORS = 4        # independent vector accumulators: enough to cover an add's latency at one add per cycle
MIN_STEPS = 512         # elements each output reduces: shorter loops are over before latency matters
MIN_ELEMENTS = 1 << 20  # elements the whole kernel reduces: smaller kernels are left as the plan search makes them
REDUCE_LANES = "lanes along the reduction"  # opts.candidate_plans' name for the plan these copies go into

def latency_upcasts(sink: UOp, granges: list[UOp], reduces: list[UOp] | None = None) -> list[tuple[UOp, int]]:
  """Copies of the innermost output dim for a long reduction whose copies share no load (choose_upcasts gives none):
  each copy its own accumulator, so ACCUMULATORS adds are in flight (a split sum: 4 of its chunks at a time).
  reduces: the kernel's REDUCEs, where the caller has them."""
  if not granges or (g := granges[-1]).src[0].arg % ACCUMULATORS: return []
  if reduces is None: reduces = [u for u in sink.toposort() if u.op is Ops.REDUCE]
  if not reduces: return []
  steps = prod(r.src[0].arg for r in reduces[0].src[1:])
  if steps < MIN_STEPS or steps * prod(r.src[0].arg for r in granges) < MIN_ELEMENTS: return []
  return [(g, ACCUMULATORS)]

def long_reduce_plans(sink: UOp, granges: list[UOp], plans: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
  """Of the plan search's candidates, only lanes along the reduction for a long reduction that reads each element once
  (latency_upcasts applies) along a contiguous reduce loop: the cost model counts neither the add latency those
  accumulators hide nor what packing lanes across the outputs costs (it picked a packed transpose of a split sum's
  chunks: 1.4 ms against 0.12 ms for 1M floats)."""
  # the cheap tests first (most kernels leave at the first or second), the upcast choice only for a long reduction
  if not (keep := [p for p in plans if p[0] == REDUCE_LANES]): return plans
  topo = sink.toposort()
  if not latency_upcasts(sink, granges, reduces := [u for u in topo if u.op is Ops.REDUCE]): return plans
  if choose_upcasts(sink, granges, budget=16, first=(4, 2), rest=(4, 2)): return plans
  R = reduces[0].src[-1]
  loads = [u for u in topo if u.op is Ops.LOAD and R in u.src[1].toposort()]
  if R.src[0].arg % 4 or not loads or not all(any(t is R for t in _terms(ld.src[1])) for ld in loads): return plans
  # built here, so a plan that can't apply after all leaves the search as it was
  if (res := keep[0][1]()) is None: return plans
  return [(REDUCE_LANES, lambda: res)]

def reads_once(p: Any) -> bool:
  """A reduction Program that reads each element once, into accumulators of its own, and stores each output as one
  value (a split sum's partials, row sums): engine/realize.py runs it on every core when it streams enough memory.
  Not a matrix-vector product (every row's accumulator reads the same vector), nor lanes along the outputs."""
  seen: set[UOp] = set()
  for r in p.acc_of:
    loads = {u for u in r.src[0].toposort() if u.op is Ops.LOAD}
    if not loads or loads & seen: return False
    seen |= loads
  return bool(seen) and all(u.src[2].dtype.count == 1 or u.arg is not None for u in p.uops if u.op is Ops.STORE)
