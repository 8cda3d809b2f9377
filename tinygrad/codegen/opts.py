"""Kernel optimizations, decided from the lowered kernel: upcasting (register blocking).
A global loop g that some loads don't depend on is split as g = g'*u + c for c in 0..u-1 and the kernel body is
copied u times with c a constant: those loads are then shared by the copies, and the copies' reductions share one
loop (the linearizer merges reductions over the same ranges). This is how a matmul stops being memory bound."""
from __future__ import annotations
import functools, hashlib, itertools, os, pathlib
from collections import Counter
from typing import Callable
from tinygrad import tracing
from tinygrad.dtype import dtypes
from tinygrad.helpers import getenv, prod
from tinygrad.uop.ops import UOp, UPat, Ops, PatternMatcher, graph_rewrite, untraced_rewrites
from tinygrad.uop.symbolic import symbolic, _terms
from tinygrad.codegen.lowerer import pm_clean_gates

MAX_UPCAST = 128

def _depends(u: UOp, r: UOp, memo: dict) -> bool:
  return r in memo.setdefault(u, set(x for x in u.toposort() if x.op is Ops.RANGE))

def _factor(size: int, fs: tuple[int, ...]) -> int | None:
  """The upcast factor for a dim: all of it when small, else the first of fs that divides it."""
  if not fs: return None
  if 2 <= size <= max(fs): return size
  return next((f for f in fs if size % f == 0), None)

def choose_upcasts(sink: UOp, granges: list[UOp], budget: int = MAX_UPCAST, first: tuple[int, ...] = (16, 8, 4), rest: tuple[int, ...] = (8, 4)) -> list[tuple[UOp, int]]:
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
  if shared(last) and (f := _factor(last.src[0].arg, first)) is not None: out.append((last, f))
  done = shared(out[0][0]) if out else set()
  budget //= (out[0][1] if out else 1)
  cands = [g for g in reversed(granges) if g is not last and shared(g)]
  cands.sort(key=lambda g: -len(shared(g) - done))  # stable: among equals the inner dim wins
  for g in cands:
    if (f := _factor(g.src[0].arg, tuple(x for x in rest if x <= budget))) is not None and f <= budget:
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
pm_upcast_simplify = pm_upcast + symbolic + pm_clean_gates

VEC_ALU = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.FDIV}

def _canon(u: UOp) -> tuple:
  """A sum as (its non-constant terms, in any order, and its constant)."""
  ts = _terms(u)
  return tuple(sorted(Counter(t for t in ts if t.op is not Ops.CONST).items(), key=lambda kv: id(kv[0]))), sum(t.arg for t in ts if t.op is Ops.CONST)

def _lane(u: UOp, V: UOp, k: int) -> UOp: return u.substitute({V: UOp.const(dtypes.int32, k)})

def _base(idx: UOp, V: UOp, width: int) -> UOp | None:
  """idx at lane 0 when lane k of V reads idx at lane 0 plus k (one contiguous vector), else None."""
  # the usual cases, read off the sum's terms: V once as a plain term (contiguous), or V times a constant (strided)
  ts = _terms(idx)
  with_v = [t for t in ts if t is V or V in t.toposort()]
  if len(with_v) == 1 and (t := with_v[0]) is V:
    return functools.reduce(lambda a, b: a + b, others) if (others := [x for x in ts if x is not V]) else UOp.const(dtypes.int32, 0)
  if len(with_v) == 1 and t.op is Ops.MUL and t.src[0] is V and t.src[1].op is Ops.CONST: return None
  with untraced_rewrites():  # otherwise (divisions, mods) compare lanes after simplification  # a test, not a step of the kernel's rewrite
    def at(k: int) -> UOp: return graph_rewrite(_lane(idx, V, k), symbolic)
    b_terms, b_const = _canon(base := at(0))
    for k in (1, width // 2, width - 1):
      if _canon(at(k)) != (b_terms, b_const + k): return None
  return base

def vectorize(sink: UOp, V: UOp, width: int, reduce_range: UOp | None = None) -> UOp | None:
  """The kernel with every value that depends on the vector range V as one vector of `width` lanes: loads and stores
  at base + V become single vector loads and stores; other loads (strided, or gated per lane) are gathered and other
  stores scattered lane by lane. reduce_range: V is the lane of that reduce range (split by split_reduce), so each
  sum over it ends with a sum of its lanes. None when some node can't be a vector (then the caller copies the body
  per lane instead). Only float arithmetic and sum/product reductions are vectorized."""
  topo = sink.toposort()
  dep: dict[UOp, bool] = {}
  users: dict[UOp, list[UOp]] = {}
  for u in topo:
    dep[u] = u is V or (any(dep[s] for s in u.src) and not (u.op is Ops.REDUCE and reduce_range in u.src[1:]))
    for s in u.src: users.setdefault(s, []).append(u)
  new: dict[UOp, UOp] = {}
  scattered: dict[UOp, list[UOp]] = {}
  lane_memo: list[dict[UOp, UOp]] = [{V: UOp.const(dtypes.int32, k)} for k in range(width)]
  def lane(x: UOp, k: int) -> UOp:  # x with V = k; rebuilds only what depends on V, shared across the kernel's loads
    if not dep[x]: return x
    if (y := lane_memo[k].get(x)) is None: y = lane_memo[k][x] = UOp(x.op, x.dtype, tuple(lane(s, k) for s in x.src), x.arg)
    return y
  for u in topo:
    if u.op is Ops.REDUCE and reduce_range in u.src[1:]:
      if u.arg is not Ops.ADD or u.dtype != dtypes.float32 or not dep[u.src[0]]: return None
      acc = UOp(Ops.REDUCE, u.dtype.vec(width), (new[u.src[0]], *u.src[1:]), u.arg)
      lanes = [UOp(Ops.GEP, u.dtype, (acc,), k) for k in range(width)]
      while len(lanes) > 1: lanes = [lanes[i] + lanes[i + 1] for i in range(0, len(lanes), 2)]  # a tree: short dependency chain
      new[u] = lanes[0]; continue
    if u.op is Ops.SINK: new[u] = UOp(Ops.SINK, u.dtype, tuple(x for s in u.src for x in (scattered[s] if s in scattered else [new[s]])), u.arg); continue
    if not dep[u]: new[u] = u.replace(src=tuple(new[s] for s in u.src)) if u.src else u; continue
    if u is V: continue
    if u.dtype in dtypes.ints or u.dtype == dtypes.bool:  # index arithmetic and gates: may only feed load/store addresses
      if not all(u in c.src[1:] if c.op is Ops.LOAD else c.src[1] is u if c.op is Ops.STORE else c.dtype in dtypes.ints or c.dtype == dtypes.bool
                 for c in users.get(u, [])): return None
      continue
    if u.op is Ops.LOAD:
      if (len(u.src) == 2 or not dep[u.src[2]]) and (base := _base(u.src[1], V, width)) is not None:
        new[u] = UOp(Ops.LOAD, u.dtype.vec(width), (u.src[0], base, *[new[s] for s in u.src[2:]]))
      else: new[u] = UOp(Ops.VECTORIZE, u.dtype.vec(width), tuple(lane(u, k) for k in range(width)))  # one scalar load per lane
    elif u.op is Ops.STORE:
      if not dep[u.src[2]]: return None
      if dep[u.src[1]] and (base := _base(u.src[1], V, width)) is not None: new[u] = UOp(Ops.STORE, dtypes.void, (u.src[0], base, new[u.src[2]]))
      elif dep[u.src[1]]:  # one scalar store per lane
        scattered[u] = [UOp(Ops.STORE, dtypes.void, (u.src[0], lane(u.src[1], k), UOp(Ops.GEP, u.src[2].dtype, (new[u.src[2]],), k))) for k in range(width)]
      else: return None
    elif u.op in VEC_ALU and u.dtype == dtypes.float32:
      new[u] = UOp(u.op, u.dtype.vec(width), tuple(new[s] for s in u.src), u.arg)
    elif u.op is Ops.REDUCE and u.arg in (Ops.ADD, Ops.MUL) and u.dtype == dtypes.float32 and reduce_range is None:
      new[u] = UOp(Ops.REDUCE, u.dtype.vec(width), tuple(new[s] for s in u.src), u.arg)
    else: return None
  return new[sink]

def split_reduce(sink: UOp, R: UOp, width: int, nid: int) -> tuple[UOp, UOp, UOp]:
  """The kernel with reduce range R split as R' * width + V, V the vector lane: every REDUCE over R now runs over R'."""
  Rp = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, R.src[0].arg // width),), (nid, "reduce"))
  V = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, width),), (nid + 1, "vector"))
  mapping = {u: UOp(Ops.REDUCE, u.dtype, (u.src[0].substitute({R: Rp * width + V}), *[Rp if r is R else r for r in u.src[1:]]), u.arg)
             for u in sink.toposort() if u.op is Ops.REDUCE and R in u.src[1:]}
  return sink.substitute(mapping), Rp, V

def _outer_ranges(granges: list[UOp], ups: list[tuple[UOp, int]], nid: int) -> tuple[list[tuple[UOp, UOp, int]], list[UOp], int]:
  """For each upcast global range g by f: g = outer * f + c. Returns the plan (g, outer, f), the new global ranges, next id."""
  plan, new_granges = [], []
  for g in granges:
    f = next((f for gg, f in ups if gg is g), None)
    if f is None: new_granges.append(g); continue
    outer = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, g.src[0].arg // f),), (nid, "global")) if g.src[0].arg > f else UOp.const(dtypes.int32, 0)
    nid += 1
    plan.append((g, outer, f))
    if outer.op is Ops.RANGE: new_granges.append(outer)
  return plan, new_granges, nid

def _upcast(sink: UOp, plan: list[tuple[UOp, UOp, int]], what: str) -> UOp:
  return graph_rewrite(sink, pm_upcast_simplify, ctx=_Upcast(plan), name=f"opt: upcast {' '.join(str(f) for _, _, f in plan)}{what}")

# copies per vector plan: as many as fit (a tall tile: one dim upcast by up to 16) or a square 4x4 tile, which shares
# each load among more copies when two dims share loads
TILES = {"tall": (MAX_UPCAST // 8, (16, 8, 4), (8, 4)), "square": (16, (4,), (4,))}

def _output_tile(sink: UOp, granges: list[UOp], g: UOp, tile: str) -> list[tuple[UOp, int]]:
  """The upcasts beside lanes along g."""
  budget, first, more = TILES[tile]
  return choose_upcasts(sink, [r for r in granges if r is not g], budget=min(budget, MAX_UPCAST // (16 if g.src[0].arg % 16 == 0 else 8)), first=first, rest=more)

def _vector_over_output(sink: UOp, granges: list[UOp], g: UOp, nid: int, tile: str = "tall") -> tuple[UOp, list[UOp]] | None:
  """Lanes along output dim g (a matmul's columns; a convolution's x): partial results stay separate per lane; the
  other dims are upcast as copies, each copy a vector."""
  width = next((w for w in (16, 8) if g.src[0].arg % w == 0), None)
  if width is None: return None
  plan, _, nid = _outer_ranges([r for r in granges if r is not g], _output_tile(sink, granges, g, tile), nid)
  (_, outer, _), = _outer_ranges([g], [(g, width)], nid)[0]
  V = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, width),), (nid + 1, "vector"))
  vsink = _upcast(sink.substitute({g: outer * width + V if outer.op is Ops.RANGE else V}), plan, f" vector {width}")
  if (vec := vectorize(vsink, V, width)) is None: return None
  new_granges = []
  for r in granges:  # the outer ranges, in the order of the ranges they came from
    p = next((p for p in plan + [(g, outer, width)] if p[0] is r), None)
    if p is None: new_granges.append(r)
    elif p[1].op is Ops.RANGE: new_granges.append(p[1])
  return graph_rewrite(vec, symbolic, name="opt: vectorized"), new_granges

def _vector_over_pair(sink: UOp, granges: list[UOp], k: int, nid: int) -> tuple[UOp, list[UOp]] | None:
  """Lanes along output dims k and k+1 merged into one (index math splits it again where needed)."""
  a, b = granges[k], granges[k + 1]
  G = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, a.src[0].arg * b.src[0].arg),), (nid, "global"))
  merged = graph_rewrite(sink.substitute({a: G // b.src[0].arg, b: G % b.src[0].arg}), symbolic, name="opt: merge output dims")
  return _vector_over_output(merged, granges[:k] + [G] + granges[k + 2:], G, nid + 1)

def _vector_over_reduce(sink: UOp, granges: list[UOp], nid: int) -> tuple[UOp, list[UOp]] | None:
  """Lanes along the innermost reduce dim (a matmul with both operands contiguous along k): one vector accumulator per
  output, its lanes summed after the loop. Fewer copies than the output-lane plan: each copy holds a whole vector."""
  reduces = [u for u in sink.toposort() if u.op is Ops.REDUCE]
  if not reduces or len({u.src[1:] for u in reduces}) != 1: return None
  R = reduces[0].src[-1]
  width = next((w for w in (16, 8, 4) if R.src[0].arg % w == 0), None)
  if width is None: return None
  ups = choose_upcasts(sink, granges, budget=16, first=(4, 2), rest=(4, 2))  # 16 vector accumulators: half the registers
  plan, new_granges, nid = _outer_ranges(granges, ups, nid)
  ssink, Rp, V = split_reduce(sink, R, width, nid)
  if (vec := vectorize(_upcast(ssink, plan, f" reduce vector {width}"), V, width, Rp)) is None: return None
  return graph_rewrite(vec, symbolic, name="opt: vectorized"), new_granges

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

def _divmods(u: UOp) -> int: return sum(1 for x in u.toposort() if x.op in (Ops.IDIV, Ops.MOD))

def merge_reduce_loops(sink: UOp) -> UOp:
  """Adjacent loops of a reduction that every load walks contiguously (a sum over a row-major image's y and x)
  become one longer loop: fewer loop overheads and a loop long enough for vector lanes. A merge is kept only when
  symbolic math folds the split index back (no new divisions)."""
  nid = max((r.arg[0] for r in sink.toposort() if r.op is Ops.RANGE), default=-1) + 1
  changed = True
  while changed:
    changed = False
    for u in sink.toposort():
      if u.op is not Ops.REDUCE or len(u.src) < 3: continue
      for k in range(1, len(u.src) - 1):
        Ra, Rb = u.src[k], u.src[k + 1]
        if Ra.src[0].arg < 2 or Rb.src[0].arg < 2: continue
        R = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, Ra.src[0].arg * Rb.src[0].arg),), (nid, "reduce"))
        with untraced_rewrites(): body = graph_rewrite(u.src[0].substitute({Ra: R // Rb.src[0].arg, Rb: R % Rb.src[0].arg}), symbolic)
        if _divmods(body) > _divmods(u.src[0]): continue
        sink = sink.substitute({u: UOp(Ops.REDUCE, u.dtype, (body, *u.src[1:k], R, *u.src[k + 2:]), u.arg)})
        nid, changed = nid + 1, True
        break
      if changed: break
  return sink

Plan = Callable[[], "tuple[UOp, list[UOp]] | None"]

def candidate_plans(sink: UOp, granges: list[UOp], vector: bool, max_upcast: int = MAX_UPCAST) -> list[tuple[str, Plan]]:
  """(name, build) for every way to optimize the kernel: scalar copies per upcast, lanes along each output dim that
  vectors fit, lanes along the reduction. A build returns (kernel, global ranges), or None where the plan can't apply."""
  nid = max((r.arg[0] for r in sink.toposort() if r.op is Ops.RANGE), default=-1) + 1
  if not any(u.op is Ops.REDUCE for u in sink.toposort()): return []  # elementwise: the C compiler vectorizes these itself
  ups = choose_upcasts(sink, granges, budget=max_upcast, first=tuple(f for f in (16, 8, 4) if f <= max_upcast), rest=tuple(f for f in (8, 4) if f <= max_upcast))
  def scalar() -> tuple[UOp, list[UOp]]:
    plan, new_granges, _ = _outer_ranges(granges, ups, nid)
    return _upcast(sink, plan, ""), new_granges
  out: list[tuple[str, Plan]] = [("scalar", scalar)]
  if vector and not getenv("NOVEC", 0):
    for g in granges:
      if g.src[0].arg % 8 or not g.src[0].arg: continue
      tiles = {tile: _output_tile(sink, granges, g, tile) for tile in TILES}
      out += [(f"lanes along output dim {granges.index(g)}, {tile} tile", functools.partial(_vector_over_output, sink, granges, g, nid, tile))
              for tile, ups in tiles.items() if tile == "tall" or ups != tiles["tall"]]  # a square tile that is the tall one is built once
    # two dims too short for vectors alone (a 4x4 image) may fit one as a pair
    out += [(f"lanes along output dims {k} and {k + 1}", functools.partial(_vector_over_pair, sink, granges, k, nid)) for k in range(len(granges) - 1)
            if 2 <= granges[k + 1].src[0].arg < 8 and granges[k].src[0].arg >= 2 and granges[k].src[0].arg * granges[k + 1].src[0].arg % 8 == 0]
    out.append(("lanes along the reduction", functools.partial(_vector_over_reduce, sink, granges, nid)))
  return out

class _RewriteLog:
  """Stands in for the tracer while a plan is tried: keeps the plan's rewrites, to hand to the tracer if it wins."""
  capture_rewrites = True
  def __init__(self): self.calls: list[tuple[str, tuple]] = []
  def rewrite_begin(self, *a) -> None: self.calls.append(("rewrite_begin", a))
  def rewrite_match(self, *a) -> None: self.calls.append(("rewrite_match", a))
  def rewrite_end(self, *a) -> None: self.calls.append(("rewrite_end", a))
  def replay(self, t) -> None:
    for fn, a in self.calls: getattr(t, fn)(*a)

def _try(plan: Plan, t) -> tuple[tuple[UOp, list[UOp]] | None, _RewriteLog | None]:
  if t is None or not t.capture_rewrites:
    with untraced_rewrites(): return plan(), None
  tracing.tracer = log = _RewriteLog()  # type: ignore[assignment]
  try: return plan(), log
  finally: tracing.tracer = t

# the plan each kernel chose, on disk, so a script run again builds only that one (like tinygrad's BEAM cache);
# bump PLAN_VERSION when plans or the cost model change
PLAN_VERSION = "1"
def _plan_dir() -> pathlib.Path: return pathlib.Path(os.environ.get("TINYVIZ_CACHE", pathlib.Path.home() / ".cache" / "tinyviz")) / "plans"

def _plan_key(sink: UOp, vector: bool, max_upcast: int) -> str:
  """A name for the kernel that is the same in every process: its nodes in order, each with its sources' positions."""
  pos: dict[UOp, int] = {}
  lines = [f"{PLAN_VERSION} {vector} {max_upcast}"]
  for u in sink.toposort():
    pos[u] = len(pos)
    lines.append(f"{u.op.name} {u.dtype.name} {u.arg!r} {[pos[s] for s in u.src]}")
  return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32]

def _remembered(key: str) -> str | None:
  try: return (_plan_dir() / key).read_text()
  except OSError: return None

def _remember(key: str, name: str) -> None:
  try:
    d = _plan_dir()
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f"{key}.{os.getpid()}.tmp"
    tmp.write_text(name)
    os.replace(tmp, d / key)  # atomic: another process reads the whole name or nothing
  except OSError: pass  # a read-only cache only costs the search next time

stats = {"searched": 0, "remembered": 0}

def apply_opts(sink: UOp, granges: list[UOp], vector: bool = False, max_upcast: int = MAX_UPCAST) -> tuple[UOp, list[UOp]]:
  """vector: the device's renderer has vector types (the CPU's C has, via GCC vector extensions). max_upcast: copies
  per loop iteration (a GPU thread wants few accumulators: its registers are shared by many threads). Of the candidate
  plans the one whose inner loop costs least per accumulated lane (loop_cost) wins; the choice is kept on disk, so the
  next process builds only the winner. Under VIZ each plan's rewrites are kept aside and only the winner's reach the
  trace, so it shows how the kernel that runs was made."""
  if not getenv("NOOPT", 0): sink = merge_reduce_loops(sink)
  plans = candidate_plans(sink, granges, vector, max_upcast)
  if not plans: return sink, granges
  if len(plans) == 1: return plans[0][1]()  # type: ignore[return-value]
  key = _plan_key(sink, vector, max_upcast)
  if (name := _remembered(key)) is not None and (plan := dict(plans).get(name)) is not None and (res := plan()) is not None:
    stats["remembered"] += 1
    return res
  stats["searched"] += 1
  t = tracing.tracer
  built = []
  for name, plan in plans:
    res, log = _try(plan, t)
    if res is not None: built.append((name, res, log))
  name, res, log = min(built, key=lambda nrl: loop_cost(nrl[1][0]))
  if log is not None: log.replay(t)
  _remember(key, name)
  return res  # type: ignore[return-value]
