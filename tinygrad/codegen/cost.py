"""The cost model that picks among a kernel's optimization plans."""
from __future__ import annotations
from tinygrad.dtype import dtypes
from tinygrad.helpers import prod
from tinygrad.uop.ops import UOp, Ops

def loop_cost(sink: UOp) -> float:
  """Estimated instructions per accumulated lane of the longest reduction: its loop body runs trips times, the rest
  (index math, stores, lane sums) once per output tile. A load or float op counts 1 whatever its width, a gathered
  vector 1 more per lane, integer index math a quarter (the C compiler folds most of it into addressing)."""
  topo = sink.toposort()
  scope: dict[UOp, frozenset[UOp]] = {}  # the ranges each value changes with, as the linearizer places it
  for u in topo:
    scope[u] = frozenset([u]) if u.op is Ops.RANGE else scope[u.src[0]] - frozenset(u.src[1:]) if u.op is Ops.REDUCE else frozenset().union(*[scope[s] for s in u.src])
  groups: dict[tuple[UOp, ...], list[UOp]] = {}
  for u in topo:
    if u.op is Ops.REDUCE: groups.setdefault(u.src[1:], []).append(u)
  if not groups: return 0.0
  rngs, reduces = max(groups.items(), key=lambda kv: prod(r.src[0].arg for r in kv[0]))
  trips = max(1, prod(r.src[0].arg for r in rngs))
  def w(n: UOp) -> float:
    if n.op in (Ops.CONST, Ops.RANGE, Ops.DEFINE_GLOBAL, Ops.SINK): return 0
    if n.op is Ops.VECTORIZE: return len(n.src)
    return 0.25 if n.dtype in dtypes.ints or n.dtype == dtypes.bool else 1
  inside = sum(w(n) for n in topo if scope[n] & set(rngs)) + len(reduces)  # + the accumulate of each reduction
  outside = sum(w(n) for n in topo if not scope[n] & set(rngs))
  return (inside * trips + outside) / (sum(u.dtype.count for u in reduces) * trips)
