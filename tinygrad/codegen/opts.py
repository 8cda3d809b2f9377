"""Kernel optimizations, decided from the lowered kernel: upcasting (register blocking).
A global loop g that some loads don't depend on is split as g = g'*u + c for c in 0..u-1 and the kernel body is
copied u times with c a constant: those loads are then shared by the copies, and the copies' reductions share one
loop (the linearizer merges reductions over the same ranges). This is how a matmul stops being memory bound."""
from __future__ import annotations
import itertools
from collections import Counter
from tinygrad.dtype import dtypes
from tinygrad.helpers import getenv, prod
from tinygrad.uop.ops import UOp, UPat, Ops, PatternMatcher, graph_rewrite
from tinygrad.uop.symbolic import symbolic, _terms

MAX_UPCAST = 128

def _depends(u: UOp, r: UOp, memo: dict) -> bool:
  return r in memo.setdefault(u, set(x for x in u.toposort() if x.op is Ops.RANGE))

def _factor(size: int, fs: tuple[int, ...]) -> int | None:
  """The upcast factor for a dim: all of it when small, else the first of fs that divides it."""
  if 2 <= size <= max(fs): return size
  return next((f for f in fs if size % f == 0), None)

def choose_upcasts(sink: UOp, granges: list[UOp]) -> list[tuple[UOp, int]]:
  """(global range, factor) pairs for register blocking: the innermost global dim, and then the dim that lets the
  copies share the loads the first choice does not (in a matmul: n shares A's loads, then m shares B's; in a conv:
  x shares the weights, then the output channel shares the input)."""
  if getenv("NOOPT", 0) or not granges: return []
  topo = sink.toposort()
  reduces = [u for u in topo if u.op is Ops.REDUCE]
  if not reduces or prod(r.src[0].arg for r in reduces[0].src[1:]) < 8: return []
  loads = list(dict.fromkeys(u for r in reduces for u in r.src[0].toposort() if u.op is Ops.LOAD))
  memo: dict = {}
  def shared(g: UOp) -> set[UOp]: return {ld for ld in loads if not _depends(ld.src[1], g, memo)}
  out: list[tuple[UOp, int]] = []
  last = granges[-1]
  if shared(last) and (f := _factor(last.src[0].arg, (16, 8, 4))) is not None: out.append((last, f))
  done = shared(out[0][0]) if out else set()
  budget = MAX_UPCAST // (out[0][1] if out else 1)
  cands = [g for g in reversed(granges) if g is not last and shared(g)]
  cands.sort(key=lambda g: -len(shared(g) - done))  # stable: among equals the inner dim wins
  for g in cands:
    if (f := _factor(g.src[0].arg, tuple(x for x in (8, 4) if x <= budget))) is not None and f <= budget:
      out.append((g, f)); break
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

VEC_ALU = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.FDIV}

def vectorize(sink: UOp, V: UOp, width: int) -> UOp | None:
  """The kernel with every value that depends on the vector range V as one vector of `width` lanes: loads and stores
  at base + V become single vector loads and stores. None when some node can't be a vector (then the caller copies
  the body per lane instead). Only float arithmetic and sum/product reductions are vectorized."""
  topo = sink.toposort()
  dep: dict[UOp, bool] = {}
  users: dict[UOp, list[UOp]] = {}
  for u in topo:
    dep[u] = u is V or any(dep[s] for s in u.src)
    for s in u.src: users.setdefault(s, []).append(u)
  def canon(u: UOp) -> tuple:  # a sum as (its non-constant terms, in any order, and its constant)
    ts = _terms(u)
    return tuple(sorted(Counter(t for t in ts if t.op is not Ops.CONST).items(), key=lambda kv: id(kv[0]))), sum(t.arg for t in ts if t.op is Ops.CONST)
  def base_of(idx: UOp) -> UOp | None:
    base = graph_rewrite(idx.substitute({V: UOp.const(dtypes.int32, 0)}), symbolic, name="opt: vector base")
    b_terms, b_const = canon(base)
    for k in (1, width // 2, width - 1):  # affine in V with coefficient 1: lane k reads base + k
      if canon(graph_rewrite(idx.substitute({V: UOp.const(dtypes.int32, k)}), symbolic)) != (b_terms, b_const + k): return None
    return base
  new: dict[UOp, UOp] = {}
  for u in topo:
    if not dep[u]: new[u] = u.replace(src=tuple(new[s] for s in u.src)) if u.src else u; continue
    if u is V: continue
    if u.dtype in dtypes.ints or u.dtype == dtypes.bool:  # index arithmetic: may only feed load/store addresses
      if any(not (c.op in (Ops.LOAD, Ops.STORE) and c.src[1] is u) and not (c.dtype in dtypes.ints) for c in users.get(u, [])): return None
      continue
    if u.op is Ops.LOAD:
      if len(u.src) == 3 and dep[u.src[2]]: return None
      if (base := base_of(u.src[1])) is None: return None
      new[u] = UOp(Ops.LOAD, u.dtype.vec(width), (u.src[0], base, *[new[s] for s in u.src[2:]]))
    elif u.op is Ops.STORE:
      if not dep[u.src[1]] or not dep[u.src[2]] or (base := base_of(u.src[1])) is None: return None
      new[u] = UOp(Ops.STORE, dtypes.void, (u.src[0], base, new[u.src[2]]))
    elif u.op in VEC_ALU and u.dtype == dtypes.float32:
      new[u] = UOp(u.op, u.dtype.vec(width), tuple(new[s] for s in u.src), u.arg)
    elif u.op is Ops.REDUCE and u.arg in (Ops.ADD, Ops.MUL) and u.dtype == dtypes.float32:
      new[u] = UOp(Ops.REDUCE, u.dtype.vec(width), tuple(new[s] for s in u.src), u.arg)
    elif u.op is Ops.SINK: new[u] = UOp(Ops.SINK, u.dtype, tuple(new[s] for s in u.src), u.arg)
    else: return None
  return new[sink]

def apply_opts(sink: UOp, granges: list[UOp], vector: bool = False) -> tuple[UOp, list[UOp]]:
  """vector: the device's renderer has vector types (the CPU's C has, via GCC vector extensions)."""
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
  from tinygrad.codegen.lowerer import pm_clean_gates
  V = None
  inner = next((p for p in plan if p[0] is granges[-1]), None)
  if vector and inner is not None and inner[2] in (8, 16) and not getenv("NOVEC", 0):
    # the innermost dim's lanes become one vector: its copies are not made, V stands for the lane
    g, outer, f = inner
    V = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, f),), (nid, "vector"))
    rest = [p for p in plan if p is not inner]
    vsink = sink.substitute({g: outer * f + V if outer.op is Ops.RANGE else V})
    vsink = graph_rewrite(vsink, pm_upcast + symbolic + pm_clean_gates, ctx=_Upcast(rest), name=f"opt: upcast {' '.join(str(f) for _, _, f in rest)} vector {f}")
    if (vec := vectorize(vsink, V, f)) is not None: return graph_rewrite(vec, symbolic, name="opt: vectorized"), new_granges
  sink = graph_rewrite(sink, pm_upcast + symbolic + pm_clean_gates, ctx=_Upcast(plan), name=f"opt: upcast {' '.join(str(f) for _, _, f in plan)}")
  return sink, new_granges
