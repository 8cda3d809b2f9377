"""Kernel optimizations, decided from the lowered kernel: upcasting (register blocking).
A global loop g that some loads don't depend on is split as g = g'*u + c for c in 0..u-1 and the kernel body is
copied u times with c a constant: those loads are then shared by the copies, and the copies' reductions share one
loop (the linearizer merges reductions over the same ranges). This is how a matmul stops being memory bound."""
from __future__ import annotations
import itertools
from tinygrad.dtype import dtypes
from tinygrad.helpers import getenv, prod
from tinygrad.uop.ops import UOp, UPat, Ops, PatternMatcher, graph_rewrite
from tinygrad.uop.symbolic import symbolic

MAX_UPCAST = 128

def _depends(u: UOp, r: UOp, memo: dict) -> bool:
  return r in memo.setdefault(u, set(x for x in u.toposort() if x.op is Ops.RANGE))

def choose_upcasts(sink: UOp, granges: list[UOp]) -> list[tuple[UOp, int]]:
  """(global range, factor) pairs: the innermost global dim by up to 16 and one outer dim by up to 8, each only where
  a load inside a reduction does not depend on it (so the copies share that load)."""
  if getenv("NOOPT", 0) or not granges: return []
  topo = sink.toposort()
  reduces = [u for u in topo if u.op is Ops.REDUCE]
  if not reduces or prod(r.src[0].arg for r in reduces[0].src[1:]) < 8: return []
  loads = [u for r in reduces for u in r.src[0].toposort() if u.op is Ops.LOAD]
  memo: dict = {}
  def reused(g: UOp) -> bool: return any(not _depends(ld.src[1], g, memo) for ld in loads)
  out: list[tuple[UOp, int]] = []
  last = granges[-1]
  for f in (16, 8, 4):
    if last.src[0].arg % f == 0 and last.src[0].arg > f and reused(last): out.append((last, f)); break
  for g in reversed(granges[:-1]):
    for f in (8, 4):
      if g.src[0].arg % f == 0 and g.src[0].arg >= f and reused(g) and prod(x[1] for x in out) * f <= MAX_UPCAST: out.append((g, f)); break
    if len(out) == 2: break
  return out

class _Upcast:
  def __init__(self, ups: list[tuple[UOp, UOp, int]]): self.ups, self.done = ups, False
def _expand(ctx: _Upcast, s: UOp) -> UOp | None:
  if ctx.done: return None
  ctx.done = True
  stores = []
  for combo in itertools.product(*[range(f) for _, _, f in ctx.ups]):
    mapping = {g: outer * f + c if outer.op is Ops.RANGE else UOp.const(dtypes.int32, c) for (g, outer, f), c in zip(ctx.ups, combo)}
    stores.extend(UOp(Ops.SINK, src=s.src).substitute(mapping).src)
  return UOp(Ops.SINK, src=tuple(dict.fromkeys(stores)))
pm_upcast = PatternMatcher([(UPat(Ops.SINK, name="s"), _expand)])

def apply_opts(sink: UOp, granges: list[UOp]) -> tuple[UOp, list[UOp]]:
  ups = choose_upcasts(sink, granges)
  if not ups: return sink, granges
  nid = max(r.arg[0] for r in sink.toposort() if r.op is Ops.RANGE) + 1
  plan, new_granges = [], []
  for g in granges:
    f = next((f for gg, f in ups if gg is g), None)
    if f is None: new_granges.append(g); continue
    outer = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, g.src[0].arg // f),), (nid, "global")) if g.src[0].arg > f else UOp.const(dtypes.int32, 0)
    nid += 1
    plan.append((g, outer, f))
    if outer.op is Ops.RANGE: new_granges.append(outer)
  sink = graph_rewrite(sink, pm_upcast + symbolic, ctx=_Upcast(plan), name=f"opt: upcast {' '.join(str(f) for _, _, f in plan)}")
  return sink, new_granges
