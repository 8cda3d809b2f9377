"""Upcasting (register blocking), decided from the lowered kernel.
A global loop g that some loads don't depend on is split as g = g'*u + c for c in 0..u-1 and the kernel body is
copied u times with c a constant: those loads are then shared by the copies, and the copies' reductions share one
loop (the linearizer merges reductions over the same ranges). This is how a matmul stops being memory bound."""
from __future__ import annotations
import functools, itertools
from typing import Callable
from tinygrad.dtype import dtypes
from tinygrad.helpers import getenv, prod
from tinygrad.uop.ops import UOp, UPat, Ops, PatternMatcher, graph_rewrite, traced, node_rewriter
from tinygrad.uop.symbolic import symbolic
from tinygrad.codegen.lowerer import pm_clean_gates

MAX_UPCAST = 128

def _depends(u: UOp, r: UOp, memo: dict) -> bool:
  return r in memo.setdefault(u, set(x for x in u.toposort() if x.op is Ops.RANGE))

def _factor(size: int, fs: tuple[int, ...], ragged: bool = False) -> int | None:
  """The upcast factor for a dim: all of it when small, else the first of fs that divides it (ragged: that fits twice;
  the last copies past the end then repeat the dim's last index, see _expand)."""
  if not fs: return None
  if ragged: return next((f for f in fs if size >= 2 * f), None)
  if 2 <= size <= max(fs): return size
  return next((f for f in fs if size % f == 0), None)

def _sharing(reduces: list[UOp]) -> Callable[[UOp], frozenset[UOp]]:
  """For the loads the reductions read: which of them a global range doesn't move (what its copies would share)."""
  loads = list(dict.fromkeys(u for r in reduces for u in r.src[0].toposort() if u.op is Ops.LOAD))
  memo: dict = {}
  return lambda g: frozenset(ld for ld in loads if not _depends(ld.src[1], g, memo))

def choose_upcasts(sink: UOp, granges: list[UOp], budget: int = MAX_UPCAST, first: tuple[int, ...] = (16, 8, 4), rest: tuple[int, ...] = (8, 4),
                   ragged: bool = False) -> list[tuple[UOp, int]]:
  """(global range, factor) pairs for register blocking: the innermost global dim, and then the dim that lets the
  copies share the loads the first choice does not (in a matmul: n shares A's loads, then m shares B's; in a conv:
  x shares the weights, then the output channel shares the input). ragged: the first factor need not divide its dim."""
  if getenv("NOOPT", 0) or not granges: return []
  reduces = [u for u in sink.toposort() if u.op is Ops.REDUCE]
  if not reduces or prod(r.src[0].arg for r in reduces[0].src[1:]) < 8: return []
  shared = _sharing(reduces)
  out: list[tuple[UOp, int]] = []
  last = granges[-1]
  if shared(last) and (f := _factor(last.src[0].arg, first, ragged)) is not None: out.append((last, f))
  done = shared(out[0][0]) if out else set()
  budget //= (out[0][1] if out else 1)
  cands = [g for g in reversed(granges) if g is not last and shared(g)]
  cands.sort(key=lambda g: -len(shared(g) - done))  # stable: among equals the inner dim wins
  for g in cands:
    if (f := _factor(g.src[0].arg, tuple(x for x in rest if x <= budget))) is not None and f <= budget:
      out.append((g, f)); break
  return out

def window_upcasts(sink: UOp, granges: list[UOp], budget: int = 18) -> list[tuple[UOp, int]] | None:
  """A convolution weight gradient's window as copies, for lanes along its reduction: the innermost output dim (kx)
  and each other short dim that shares the same loads (ky: the output gradient's load moves with neither), all of
  them, then the dim sharing the other loads (an output channel: the input's) by 2, at most `budget` copies. Each
  output-gradient vector then feeds 9 FMAs, not 3: the digits' conv2 weight gradient read its packed scratch array
  (128 KB, from L2) 4 vectors per 12 FMAs; hand-written as 2 x 3 x 3 accumulators it ran 1.69 -> 0.74 ms on a Zen 4.
  None where the kernel has no such dims."""
  if getenv("NOOPT", 0) or len(granges) < 3: return None
  if not (reduces := [u for u in sink.toposort() if u.op is Ops.REDUCE]): return None
  shared = _sharing(reduces)
  last = granges[-1]
  if not (base := shared(last)) or not 2 <= last.src[0].arg <= 5: return None
  window = [g for g in reversed(granges[:-1]) if 2 <= g.src[0].arg <= 5 and shared(g) == base]
  if not window: return None
  ups, copies = [(last, last.src[0].arg)], last.src[0].arg
  for g in window:
    if copies * g.src[0].arg * 2 > budget: break
    ups.append((g, g.src[0].arg)); copies *= g.src[0].arg
  if len(ups) < 2: return None
  other = next((g for g in reversed(granges[:-1]) if g not in dict(ups) and g.src[0].arg % 2 == 0 and shared(g) - base), None)
  return ups + [(other, 2)] if other is not None else None

def _copy_index(g: UOp, outer: UOp, f: int, c: int) -> UOp:
  """Copy c of g upcast by f: outer * f + c; where f doesn't divide g (a 6-row tile of 1024 rows), the copies that
  can pass the end read and write g's last index instead: they compute the last row again and store the same values
  there (only for kernels that store without reading their output, see opts)."""
  if outer.op is not Ops.RANGE: return UOp.const(dtypes.int32, c)
  idx, last = outer * f + c, g.src[0].arg - 1
  if (outer.src[0].arg - 1) * f + c <= last: return idx
  return UOp(Ops.WHERE, dtypes.int32, (idx < last, idx, UOp.const(dtypes.int32, last)))

def _copies(s: UOp, ups: list[tuple[UOp, UOp, int]]) -> UOp:
  """SINK s with its stores copied once per combination of the upcast ranges' copies, in itertools.product order:
  what a substitute per combination would give. One dim at a time, the last first (so the stores keep that order),
  and each copy rebuilds only the nodes that depend on that dim: a matmul tile's A index math is built once per row
  copy and B's once per column copy, not once per combination."""
  stores = list(s.src)
  for g, outer, f in reversed(ups):
    moved, dep = [], {g}  # the nodes that depend on g, sources first
    for u in UOp(Ops.SINK, src=tuple(stores)).toposort():
      if u not in dep and u.op is not Ops.SINK and any(x in dep for x in u.src): dep.add(u); moved.append(u)
    copies = []
    for c in range(f):
      memo = {g: _copy_index(g, outer, f, c)}
      for u in moved: memo[u] = UOp(u.op, u.dtype, tuple(memo.get(x, x) for x in u.src), u.arg)
      copies.extend(memo.get(x, x) for x in stores)
    stores = list(dict.fromkeys(copies))
  return UOp(Ops.SINK, src=tuple(stores))

class _Upcast:
  def __init__(self, ups: list[tuple[UOp, UOp, int]]): self.ups, self.done = ups, False
def _expand(ctx: _Upcast, s: UOp) -> UOp | None:
  if ctx.done: return None
  ctx.done = True
  return _copies(s, ctx.ups)
pm_upcast = PatternMatcher([(UPat(Ops.SINK, name="s"), _expand)])
pm_upcast_simplify = pm_upcast + symbolic + pm_clean_gates
pm_copy_simplify = symbolic + pm_clean_gates  # what pm_upcast_simplify does to every node but the SINK

def outer_ranges(granges: list[UOp], ups: list[tuple[UOp, int]], nid: int) -> tuple[list[tuple[UOp, UOp, int]], list[UOp], int]:
  """For each upcast global range g by f: g = outer * f + c. Returns the plan (g, outer, f), the new global ranges, next id."""
  plan, new_granges = [], []
  for g in granges:
    f = next((f for gg, f in ups if gg is g), None)
    if f is None: new_granges.append(g); continue
    outer = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, -(-g.src[0].arg // f)),), (nid, "global")) if g.src[0].arg > f else UOp.const(dtypes.int32, 0)
    nid += 1
    plan.append((g, outer, f))
    if outer.op is Ops.RANGE: new_granges.append(outer)
  return plan, new_granges, nid

def upcast(sink: UOp, plan: list[tuple[UOp, UOp, int]], what: str) -> UOp:
  """The kernel with its body copied per plan, simplified. Traced: one rewrite (the copies are its SINK's match, the
  simplification its other matches). Untraced (a plan the search tries): the same result in three steps, simplify,
  copy, simplify, with a table without ctx, so each step starts from what the kernel's earlier plans already
  simplified (rewrite_memo): the first step is the same for every plan, the copies' math mostly shared by the tiles."""
  if traced():
    return graph_rewrite(sink, pm_upcast_simplify, ctx=_Upcast(plan), name=f"opt: upcast {' '.join(str(f) for _, _, f in plan)}{what}")
  # pm_upcast matches only the root SINK, after its sources are simplified, and first: so simplifying the whole graph,
  # copying, then simplifying the copies is the same rewrite
  simple = graph_rewrite(sink, pm_copy_simplify)
  if (out := _copies_simplified(simple, plan, node_rewriter(pm_copy_simplify))) is not None: return out
  return graph_rewrite(_copies(simple, plan), pm_copy_simplify)

def _copies_simplified(s: UOp, ups: list[tuple[UOp, UOp, int]], rw) -> UOp | None:
  """rw(_copies(s, ups)) for s a fixed point of rw's table, each copy simplified as it is made: a node's copies are
  one per combination of the copy indices of the upcast dims it depends on (product order), each built from its
  sources' simplified copies and simplified at once (graph_rewrite rebuilds a raw copy from its sources' rewrites, so
  it is the same node, without the raw copy). _copies drops a store's copy equal to an earlier one by raw node: a
  store's copies are raw-equal only for the same combination of the dims it depends on (every copy index differs
  from every other), so that is the key, unless two different stores' copies simplify to one node (they might then
  have been one raw node too): None then, for the caller to build the raw copies."""
  if not ups: return rw(UOp(Ops.SINK, src=s.src))
  fs = [f for _, _, f in ups]
  bit = {g: 1 << i for i, (g, _, _) in enumerate(ups)}
  projs: dict[tuple[int, int], list[int]] = {}
  def proj(m: int, ms: int) -> list[int]:  # for each copy of a node on dims m (product order), its source's copy on dims ms
    if (p := projs.get((m, ms))) is None:
      dims = [i for i in range(len(ups)) if m >> i & 1]
      p = projs[m, ms] = [functools.reduce(lambda a, ic: a * fs[ic[0]] + ic[1], ((i, c) for i, c in zip(dims, cs) if ms >> i & 1), 0)
                          for cs in itertools.product(*(range(fs[i]) for i in dims))]
    return p
  mask: dict[UOp, int] = {}
  copies: dict[UOp, list[UOp]] = {}
  for u in s.toposort():
    if u is s: continue
    if (b := bit.get(u)) is not None:
      g, outer, f = ups[b.bit_length() - 1]
      mask[u], copies[u] = b, [rw(_copy_index(g, outer, f, c)) for c in range(f)]
      continue
    m = 0
    for x in u.src: m |= mask[x]
    mask[u] = m
    if not m: continue
    srcs = [(x, None) if not mask[x] else (copies[x], proj(m, mask[x])) for x in u.src]
    copies[u] = [rw(UOp(u.op, u.dtype, tuple(x if p is None else x[p[k]] for x, p in srcs), u.arg)) for k in range(len(proj(m, m)))]
  full = (1 << len(ups)) - 1
  kept: dict[tuple[UOp, int], UOp] = {}
  for k in range(prod(fs)):
    for st in s.src:
      key = (st, proj(full, m)[k] if (m := mask[st]) else -1)
      if key not in kept: kept[key] = copies[st][key[1]] if m else st
  owner: dict[UOp, UOp] = {}
  for (st, _), v in kept.items():
    if owner.setdefault(v, st) is not st: return None
  return rw(UOp(Ops.SINK, src=tuple(kept.values())))
