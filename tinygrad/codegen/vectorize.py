"""Vector lanes: a range of the kernel becomes the lanes of one vector value (GCC vector types on the CPU). Loads
and stores at consecutive addresses become vector loads and stores; the others are gathered or scattered lane by lane
(a store whose lanes are a constant stride apart: one store that the renderer writes as a loop over the lanes; a load
whose lanes repeat a few consecutive floats: one small vector load and a shuffle)."""
from __future__ import annotations
import functools, operator
from collections import Counter
from tinygrad.dtype import dtypes
from tinygrad.uop.ops import UOp, Ops, graph_rewrite, untraced_rewrites, is_intlike, node_rewriter
from tinygrad.uop.symbolic import symbolic, _terms

VEC_ALU = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.FDIV, Ops.MAX, Ops.WHERE}
VEC_CMP = {Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ}  # on float vectors: a lane mask (all bits set where true) for WHERE

def _canon(u: UOp) -> tuple:
  """A sum as (its non-constant terms, in any order, and its constant)."""
  ts = _terms(u)
  return tuple(sorted(Counter(t for t in ts if t.op is not Ops.CONST).items(), key=lambda kv: id(kv[0]))), sum(t.arg for t in ts if t.op is Ops.CONST)

def _lane(u: UOp, V: UOp, k: int) -> UOp: return u.substitute({V: UOp.const(dtypes.int32, k)})

_INT_ALU = {Ops.ADD: operator.add, Ops.SUB: operator.sub, Ops.MUL: operator.mul, Ops.MAX: max, Ops.CMPLT: operator.lt,
            Ops.CMPNE: operator.ne, Ops.CMPEQ: operator.eq, Ops.AND: operator.and_, Ops.OR: operator.or_}

def _value(u: UOp, at: dict[UOp, int]) -> int | None:
  """u's value with every range at 0 (variables at their least) but those in `at`; None where that is not plain
  integer math: a load, a negative division (C truncates, other engines floor), a value past 32 bits."""
  vals: dict[UOp, int] = dict(at)
  for x in u.toposort():
    if x in vals: continue
    if x.op is Ops.CONST: v = x.arg
    elif x.op is Ops.RANGE: v = 0
    elif x.op is Ops.DEFINE_VAR: v = x.arg[1]
    elif x.op in (Ops.IDIV, Ops.MOD):
      a, b = vals[x.src[0]], vals[x.src[1]]
      if a < 0 or b <= 0: return None
      v = a // b if x.op is Ops.IDIV else a % b
    elif x.op in _INT_ALU: v = _INT_ALU[x.op](*(vals[s] for s in x.src))
    elif x.op is Ops.NEG: v = -vals[x.src[0]]
    elif x.op is Ops.WHERE: v = vals[x.src[1]] if vals[x.src[0]] else vals[x.src[2]]
    elif x.op is Ops.CAST and x.dtype in dtypes.ints and x.src[0].dtype == dtypes.bool: v = int(vals[x.src[0]])
    else: return None
    if not isinstance(v, (int, bool)) or abs(v) >= 1 << 31: return None
    vals[x] = v
  return vals[u]

def _lanes_step_by_one(idx: UOp, V: UOp, width: int) -> bool:
  """False when lanes 1, width/2 or width-1 of idx, at one point of the other ranges, are not lane 0's value plus the
  lane: then no simplification can show they are (it keeps the value), and _base's test by rewriting would fail. A
  matmul's row lanes, (G * 8 + V) * 64, fail here at once. True where that can't be told by value (a load in the index)."""
  if (b := _value(idx, {V: 0})) is None: return True
  return all((v := _value(idx, {V: k})) is None or v == b + k for k in (1, width // 2, width - 1))

@functools.lru_cache(maxsize=1 << 16)
def _base(idx: UOp, V: UOp, width: int) -> UOp | None:
  """idx at lane 0 when lane k of V reads idx at lane 0 plus k (one contiguous vector), else None. Cached: UOps are
  hash-consed, so the plans of a kernel that share a load's index (its tall, square and wide tiles) test it once."""
  # the usual cases, read off the sum's terms: V once as a plain term (contiguous), or V times a constant (strided)
  ts = _terms(idx)
  with_v = [t for t in ts if t is V or V in t.toposort()]
  if len(with_v) == 1 and (t := with_v[0]) is V:
    return functools.reduce(lambda a, b: a + b, others) if (others := [x for x in ts if x is not V]) else UOp.const(dtypes.int32, 0)
  if len(with_v) == 1 and t.op is Ops.MUL and t.src[0] is V and t.src[1].op is Ops.CONST: return None
  if not _lanes_step_by_one(idx, V, width): return None
  return _lanes_at_offsets(idx, V, [(k, k) for k in (1, width // 2, width - 1)])  # otherwise (divisions, mods) after simplification

def _lanes_at_offsets(idx: UOp, V: UOp, offsets: list[tuple[int, int]]) -> UOp | None:
  """idx at lane 0 when, for each (lane, offset), that lane's index simplified is lane 0's plus the offset (same terms,
  constant moved by it), else None. Untraced: a test, no trace step."""
  with untraced_rewrites():
    b_terms, b_const = _canon(base := graph_rewrite(_lane(idx, V, 0), symbolic))
    if any(_canon(graph_rewrite(_lane(idx, V, k), symbolic)) != (b_terms, b_const + o) for k, o in offsets): return None
  return base

@functools.lru_cache(maxsize=1 << 16)
def _halves(idx: UOp, V: UOp, width: int) -> tuple[UOp, UOp] | None:
  """Each half's index at its first lane when the lanes of each half of V read consecutive addresses (two rows of an
  8-wide image in 16 lanes: a convolution's input, 10 floats from one padded row to the next), else None. Only for
  16 lanes: two 8-float loads make the vector (AVX-512: a load and an insert). Tested as _base tests a vector, on the
  index with V = h * width/2 + a half's lane, simplified; by value first (most loads fail there)."""
  if width != 16: return None
  c = width // 2
  for h in (0, 1):
    if (b := _value(idx, {V: h * c})) is not None and any((v := _value(idx, {V: h * c + k})) is not None and v != b + k for k in (1, c - 1)): return None
  L = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, c),), (V.arg[0], "half"))
  with untraced_rewrites():
    bases = tuple(_base(graph_rewrite(idx.substitute({V: L + h * c}), symbolic), L, c) for h in (0, 1))
  return None if None in bases or any(L in b.toposort() for b in bases) else bases  # type: ignore[return-value]

@functools.lru_cache(maxsize=1 << 16)
def _repeats(idx: UOp, V: UOp, width: int) -> tuple[UOp, int, tuple[int, ...]] | None:
  """(lane 0's index, m, each lane's offset from it) when the lanes read m consecutive addresses (4 or 8, fewer than
  the lanes), each by one lane or more, lane 0 the first (a max-pool's pooled value beside its window's lanes:
  {a, a, b, b, c, c, d, d}): one m-float load whose lanes a shuffle repeats (GCC: one vpermd), where a gather built the
  repeated vector through the stack. Tested by value first, then exactly: each lane's index simplified is lane 0's
  plus its offset. The digits' max-pool gradients E_128_32_4_2_4_2n1 and E_128_32_8_8n2 2.3x and 3.2x in their step."""
  if (b := _value(idx, {V: 0})) is None: return None
  offs = [0]
  for k in range(1, width):  # most gathers fail at lane 1 (a stride of 8 or more)
    if (v := _value(idx, {V: k})) is None or not 0 <= v - b < min(8, width // 2): return None
    offs.append(v - b)
  m = max(offs) + 1
  # not 2: a 2-float vector's lanes GCC repeats through scalars (the digits' E_128_64_2_2_2_2n1 ran 0.84x in its step)
  if m not in (4, 8) or m >= width or sorted(set(offs)) != list(range(m)): return None
  return None if (base := _lanes_at_offsets(idx, V, [(k, o) for k, o in enumerate(offs) if k])) is None else (base, m, tuple(offs))

def _coefficient(u: UOp, V: UOp) -> int | None:
  """c when u is (u with V = 0) + V * c exactly (sums, differences, products by constants), else None."""
  if u is V: return 1
  if V not in u.toposort(): return 0
  if u.op in (Ops.ADD, Ops.SUB) and None not in (cs := [_coefficient(s, V) for s in u.src]): return cs[0] + cs[1] if u.op is Ops.ADD else cs[0] - cs[1]
  if u.op is Ops.NEG and (c := _coefficient(u.src[0], V)) is not None: return -c
  if u.op is Ops.MUL:
    for a, b in (u.src, u.src[::-1]):
      if b.op is Ops.CONST and (c := _coefficient(a, V)) is not None: return c * b.arg
  return None

def _stride(idx: UOp, V: UOp) -> tuple[UOp, int] | None:
  """(idx at lane 0, c) when lane k of V reads idx at lane 0 plus k * c for a constant c != 0 (a convolution's output
  channels, 16 floats apart in NCHW), else None. Such a scatter is stored by a loop over the lanes (STORE's arg is c;
  the renderer writes the loop): a statement per lane for each of 8 vectors, with its index, made GCC's time on the
  digits CNN's r_128_64_4_4_32_3_3 twice as long (170 -> 85 ms), the stores the same at run time."""
  if not (c := _coefficient(idx, V)): return None
  return _lane(idx, V, 0), c

def vectorize(sink: UOp, V: UOp, width: int, reduce_range: UOp | None = None, presimplify: bool = False) -> UOp | None:
  """The kernel with every value that depends on the vector range V as one vector of `width` lanes: loads and stores
  at base + V become single vector loads and stores; loads in two consecutive halves two half loads (_halves); loads
of 4 or 8 consecutive floats with repeats one load whose lanes a shuffle repeats (_repeats); other
  loads (strided, or gated per lane) are gathered and other stores scattered lane by lane, or by a loop over the lanes
  where they are a constant stride apart (_stride). reduce_range: V is the lane of that reduce range (split by
  split_reduce), so each sum over it ends with a sum (or max) of its lanes. None when some node can't be a vector (then the caller copies
  the body per lane instead). Only float arithmetic, comparisons and selects (a ReLU), and sum/product/max reductions
  are vectorized. presimplify: each new node (the vector code, a lane's copy of a gathered or scattered index, a lane
  mask) is simplified (symbolic) as it is made, from simplified sources, so the caller's symbolic rewrite of the result
  finds a fixed point, nothing to rebuild: the same result (each node is what that rewrite makes of it), not the same
  steps, so only for a plan the trace does not show."""
  rw = node_rewriter(symbolic) if presimplify else None
  def simp(u: UOp) -> UOp: return u if rw is None else rw(u)
  topo = sink.toposort()
  dep: dict[UOp, bool] = {}
  users: dict[UOp, list[UOp]] = {}
  for u in topo:  # (users kept only of the nodes that depend on V: the only ones asked below; one pass per plan)
    d = False
    for s in u.src:
      if dep[s]: d = True; users.setdefault(s, []).append(u)
    dep[u] = u is V or (d and not (u.op is Ops.REDUCE and reduce_range in u.src[1:]))
  new: dict[UOp, UOp] = {}
  scattered: dict[UOp, list[UOp]] = {}
  lane_memo: list[dict[UOp, UOp]] = [{V: UOp.const(dtypes.int32, k)} for k in range(width)]
  def lane(x: UOp, k: int) -> UOp:  # x with V = k; rebuilds only what depends on V, shared across the kernel's loads
    if not dep[x]: return x
    # presimplify: simplified as it is made, from its sources' simplified lanes: what simp gave the raw lane (node_rewriter)
    if (y := lane_memo[k].get(x)) is None: y = lane_memo[k][x] = simp(UOp(x.op, x.dtype, tuple([lane(s, k) for s in x.src]), x.arg))
    return y
  for u in topo:
    if u.op is Ops.REDUCE and reduce_range in u.src[1:]:
      if u.arg not in (Ops.ADD, Ops.MAX) or u.dtype != dtypes.float32 or not dep[u.src[0]]: return None
      acc = simp(UOp(Ops.REDUCE, u.dtype.vec(width), (new[u.src[0]], *u.src[1:]), u.arg))
      lanes = [simp(UOp(Ops.GEP, u.dtype, (acc,), k)) for k in range(width)]
      while len(lanes) > 1: lanes = [simp(UOp(u.arg, u.dtype, (lanes[i], lanes[i + 1]))) for i in range(0, len(lanes), 2)]  # a tree: short dependency chain
      new[u] = lanes[0]; continue
    if u.op is Ops.SINK: new[u] = simp(UOp(Ops.SINK, u.dtype, tuple(x for s in u.src for x in (scattered[s] if s in scattered else [new[s]])), u.arg)); continue
    if not dep[u]: new[u] = u if (ns := tuple([new[s] for s in u.src])) == u.src else simp(u.replace(src=ns)); continue  # == : identity of each
    if u is V: continue
    if u.op in VEC_CMP and u.src[0].dtype == dtypes.float32:
      new[u] = simp(UOp(u.op, dtypes.bool.vec(width), tuple(new[s] for s in u.src))); continue
    if is_intlike(u.dtype):  # index arithmetic and gates: may only feed addresses and selects
      if not all(u in c.src[1:] if c.op is Ops.LOAD else c.src[1] is u if c.op is Ops.STORE else c.src[0] is u if c.op is Ops.WHERE
                 else is_intlike(c.dtype) for c in users.get(u, [])): return None
      if u.dtype == dtypes.bool and any(c.op is Ops.WHERE for c in users.get(u, [])):  # a gate per lane, as a lane mask
        new[u] = simp(UOp(Ops.VECTORIZE, dtypes.bool.vec(width), tuple(lane(u, k) for k in range(width))))
      continue
    if u.op is Ops.LOAD:
      if (len(u.src) == 2 or not dep[u.src[2]]) and (base := _base(u.src[1], V, width)) is not None:
        new[u] = simp(UOp(Ops.LOAD, u.dtype.vec(width), (u.src[0], simp(base), *[new[s] for s in u.src[2:]])))
      elif (len(u.src) == 2 or not dep[u.src[2]]) and (halves := _halves(u.src[1], V, width)) is not None:  # two half-vector loads
        new[u] = simp(UOp(Ops.VECTORIZE, u.dtype.vec(width), tuple(simp(UOp(Ops.LOAD, u.dtype.vec(width // 2), (u.src[0], simp(b), *[new[s] for s in u.src[2:]]))) for b in halves)))
      elif u.dtype == dtypes.float32 and (len(u.src) == 2 or not dep[u.src[2]]) and (rep := _repeats(u.src[1], V, width)) is not None:
        base, m, offs = rep  # m consecutive floats, repeated across the lanes by a shuffle
        part = simp(UOp(Ops.LOAD, u.dtype.vec(m), (u.src[0], simp(base), *[new[s] for s in u.src[2:]])))
        def shuffle(ks: tuple[int, ...]) -> UOp: return simp(UOp(Ops.VECTORIZE, u.dtype.vec(len(ks)), tuple(simp(UOp(Ops.GEP, u.dtype, (part,), k)) for k in ks)))
        # 16 lanes as two 8-lane shuffles joined (tg_join16): GCC widened a 4-float vector to 16 lanes through the stack
        # (4 stores, then a 64-byte load they can't forward to); two 8-lane ones and the join stay in registers
        new[u] = simp(UOp(Ops.VECTORIZE, u.dtype.vec(16), (shuffle(offs[:8]), shuffle(offs[8:])))) if width == 16 else shuffle(offs)
      else: new[u] = simp(UOp(Ops.VECTORIZE, u.dtype.vec(width), tuple(lane(u, k) for k in range(width))))  # one scalar load per lane
    elif u.op is Ops.STORE:
      if not dep[u.src[2]]: return None
      if dep[u.src[1]] and (base := _base(u.src[1], V, width)) is not None: new[u] = simp(UOp(Ops.STORE, dtypes.void, (u.src[0], simp(base), new[u.src[2]])))
      elif dep[u.src[1]] and len(u.src) == 3 and (st := _stride(u.src[1], V)) is not None:  # one store loop: lane k at base + k * stride
        new[u] = simp(UOp(Ops.STORE, dtypes.void, (u.src[0], simp(st[0]), new[u.src[2]]), st[1]))
      elif dep[u.src[1]]:  # one scalar store per lane
        scattered[u] = [simp(UOp(Ops.STORE, dtypes.void, (u.src[0], simp(lane(u.src[1], k)), simp(UOp(Ops.GEP, u.src[2].dtype, (new[u.src[2]],), k))))) for k in range(width)]
      else: return None
    elif u.op in VEC_ALU and u.dtype == dtypes.float32:
      new[u] = simp(UOp(u.op, u.dtype.vec(width), tuple(new[s] for s in u.src), u.arg))
    elif u.op is Ops.CAST and u.dtype == dtypes.float32 and u.src[0].dtype == dtypes.bool and u.src[0] in new:  # a mask as 1.0 or 0.0
      new[u] = simp(UOp(Ops.WHERE, u.dtype.vec(width), (new[u.src[0]], UOp.const(dtypes.float32, 1.0), UOp.const(dtypes.float32, 0.0))))
    elif u.op is Ops.REDUCE and u.arg in (Ops.ADD, Ops.MUL, Ops.MAX) and u.dtype == dtypes.float32 and reduce_range is None:
      new[u] = simp(UOp(Ops.REDUCE, u.dtype.vec(width), tuple(new[s] for s in u.src), u.arg))
    else: return None
  return new[sink]

def split_reduce(sink: UOp, R: UOp, width: int, nid: int) -> tuple[UOp, UOp, UOp]:
  """The kernel with reduce range R split as R' * width + V, V the vector lane: every REDUCE over R now runs over R'."""
  Rp = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, R.src[0].arg // width),), (nid, "reduce"))
  V = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, width),), (nid + 1, "vector"))
  mapping = {u: UOp(Ops.REDUCE, u.dtype, (u.src[0].substitute({R: Rp * width + V}), *[Rp if r is R else r for r in u.src[1:]]), u.arg)
             for u in sink.toposort() if u.op is Ops.REDUCE and R in u.src[1:]}
  return sink.substitute(mapping), Rp, V
