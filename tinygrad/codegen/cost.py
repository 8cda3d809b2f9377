"""The cost model that picks among a kernel's optimization plans."""
from __future__ import annotations
from tinygrad.dtype import dtypes
from tinygrad.helpers import prod
from tinygrad.uop.ops import UOp, Ops, is_intlike
from tinygrad.uop.symbolic import _terms

class Walk:
  """One pass over a built plan for its costs (loop_cost, machine_cost: every plan of a searched kernel is costed):
  its toposort, the longest reduction's ranges and REDUCEs, and for each node, as bits (one per RANGE), the ranges it
  changes with as the linearizer places it (scope: a REDUCE closes its own ranges, a packed array's AFTER its packing
  loops) and every range it depends on (deps). Bits, not a set per node: most of the model's time was those sets."""
  def __init__(self, sink: UOp):
    self.topo = topo = sink.toposort()
    bits: dict[UOp, int] = {}
    scope: dict[UOp, int] = {}
    deps: dict[UOp, int] = {}
    weight: dict[UOp, float] = {}  # what each node counts in loop_cost (see there), worked out in this one pass
    groups: dict[tuple[UOp, ...], list[UOp]] = {}
    packs = 0
    RANGE, REDUCE, AFTER, VECTORIZE, STORE, free = Ops.RANGE, Ops.REDUCE, Ops.AFTER, Ops.VECTORIZE, Ops.STORE, _FREE
    for u in topo:
      src, op = u.src, u.op
      if op is RANGE:
        b = bits[u] = 1 << len(bits)
        if u.arg[1] == "pack": packs |= b
        scope[u] = deps[u] = b
        weight[u] = 0
        continue
      if len(src) == 1: sc, dp = scope[src[0]], deps[src[0]]
      else:
        sc = dp = 0
        for x in src: sc, dp = sc | scope[x], dp | deps[x]
      if op is REDUCE:
        groups.setdefault(src[1:], []).append(u)
        sc = scope[src[0]]
        for r in src[1:]: sc &= ~bits.get(r, 0)
      elif op is AFTER: sc &= ~packs  # a packed array: its loop closes before it
      scope[u], deps[u] = sc, dp
      weight[u] = 0 if op in free else len(src) if op is VECTORIZE else 0.25 if is_intlike(u.dtype) else 1
      if op is STORE and u.arg is not None: weight[u] = 2.25 * u.src[2].dtype.count  # a strided store's loop: per lane the store, the lane and its index, as scattered
    self.bits, self.scope, self.deps, self.weight, self.packs = bits, scope, deps, weight, packs
    self.rngs, self.reduces = max(groups.items(), key=lambda kv: prod(r.src[0].arg for r in kv[0])) if groups else ((), [])
    self.rng_bits = sum(bits.get(r, 0) for r in set(self.rngs))

  def moving(self, u: UOp) -> bool:
    """Whether u depends on a range of the longest reduction (cost.moves_with of those ranges)."""
    return bool(self.deps[u] & self.rng_bits)

_FREE = (Ops.CONST, Ops.RANGE, Ops.DEFINE_GLOBAL, Ops.SINK)  # nodes loop_cost counts as no instruction

def loop_cost(sink: UOp, walk: Walk | None = None) -> float:
  """Estimated instructions per accumulated lane of the longest reduction: its loop body runs trips times, the rest
  (index math, stores, lane sums) once per output tile. A load or float op counts 1 whatever its width, a gathered
  vector 1 more per lane, integer index math a quarter (the C compiler folds most of it into addressing). walk: the
  plan's Walk, where the caller made it already."""
  wk = Walk(sink) if walk is None else walk
  if not wk.reduces: return 0.0
  scope, weight, rs, packs, reduces = wk.scope, wk.weight, wk.rng_bits, wk.packs, wk.reduces
  trips = max(1, prod(r.src[0].arg for r in wk.rngs))
  inside = sum(weight[n] for n, sc in scope.items() if sc & rs) + len(reduces)  # + the accumulate of each reduction
  outside = sum(weight[n] for n, sc in scope.items() if not sc & rs and not sc & packs)
  return (inside * trips + outside + _pack_cost(wk)) / (sum(u.dtype.count for u in reduces) * trips)

def _pack_cost(wk: Walk) -> float:
  """A packing loop's ops (codegen/pack.py) per output tile: its body runs its ranges' trips once per iteration of the
  loops it sits in, shared by the tiles of the global loops it doesn't (the linearizer places it right inside the
  loops it depends on). Counted once, as other code outside the reduction is, a gather packed per panel looked free:
  the MLP's second Linear layer (r_128_10_128, its inputs packed per 16 rows) picked that and ran 1.2x slower."""
  total = 0.0
  if not wk.packs: return total  # no packing loop (most plans)
  sizes = [(b, r.src[0].arg) for r, b in wk.bits.items()]
  glob = [(b, n) for (b, n), r in zip(sizes, wk.bits) if r.arg[1] == "global"]
  for n in wk.topo:
    if n.op is Ops.AFTER or not (pk := wk.scope[n] & wk.packs): continue
    sc = wk.scope[n]
    total += wk.weight[n] * prod(size for b, size in sizes if b & pk) / prod(size for b, size in glob if not b & sc)
  return total

# reduce steps per k block: a block of B (512 x a 16-column tile, 32 KiB) stays in L1/L2 while every row tile reads it.
# 2048 matmul, wide tile, one core (three interleaved rounds): 128: 722-764 ms, 256: 694-713, 512: 676-682; two cores:
# 327-332, 305-335, 283-294 ms
K_BLOCK = 512
L3_BYTES = 16 << 20

def k_blockable(sink: UOp) -> bool:
  """A plain matmul's shape (two global loops, one reduce loop a multiple of K_BLOCK and longer, each output the sum
  itself: no bias or ReLU after it, which a block's partial sum must not get) whose operands don't fit L3 together
  (2048 x 2048: 32 MiB); see opts._k_blocks."""
  if not all(st.op is Ops.STORE and st.arg is None and st.src[2].op is Ops.REDUCE and st.src[2].arg is Ops.ADD for st in sink.src): return False
  topo = sink.toposort()
  rngs = {r for u in topo if u.op is Ops.REDUCE for r in u.src[1:]}
  if len(rngs) != 1 or len([u for u in topo if u.op is Ops.RANGE and u.arg[1] == "global"]) != 2: return False
  if (K := next(iter(rngs)).src[0].arg) % K_BLOCK or K <= K_BLOCK: return False
  bufs = {u.src[0] for u in topo if u.op is Ops.LOAD and u.src[0].op is Ops.DEFINE_GLOBAL}
  return sum(b.arg[1] * b.dtype.itemsize for b in bufs) > L3_BYTES

SLP_OPS = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.MAX}  # float ops GCC's SLP pass packs into vector instructions

def slp_lanes(sink: UOp, ups: list[tuple[UOp, int]], granges: list[UOp], lanes: int) -> int:
  """Lanes of the vectors that GCC's SLP pass (on at -O2 since GCC 12) packs a scalar plan's copies into: a plain
  matmul's shape (two global dims, both upcast, one reduce loop), the innermost global dim upcast by a multiple of
  lanes, and every load and store that moves with it walks it contiguously (unit stride, no gate), so each `lanes`
  neighbouring copies are one vector op. loop_cost counts those copies one op per lane; divided by this it counts
  them as the vector code that runs. 1 otherwise: timed, the scalar plans of convolutions (4 global dims) and of a
  matmul whose rows are not upcast (10 x 128 outputs) ran 1.7-2.1x slower than their vector plans, GCC vectorizing
  them less or not at all."""
  if lanes < 4 or len(granges) != 2 or len(ups) != 2 or ups[0][0] is not (inner := granges[-1]) or ups[0][1] % lanes: return 1
  if len({r for u in sink.toposort() if u.op is Ops.REDUCE for r in u.src[1:]}) != 1: return 1
  # a matmul too big for L3 is k-blocked by its vector plans (opts._k_blocks); its scalar plan can't be: blocked, GCC's
  # SLP pass no longer packs its copies (a 1024 matmul 10x slower). Counted as scalar, the blocked vector tile wins
  if k_blockable(sink): return 1
  moving = moves_with(topo := sink.toposort(), (inner,))
  for u in topo:
    if u.op in (Ops.LOAD, Ops.STORE) and u.src[1] in moving:
      if u.op is Ops.LOAD and len(u.src) > 2: return 1
      ts = _terms(u.src[1])
      if inner not in ts or any(t is not inner and t in moving for t in ts): return 1
    elif u.op is Ops.REDUCE and (u.arg not in (Ops.ADD, Ops.MAX) or u.dtype != dtypes.float32): return 1
    elif u.dtype == dtypes.float32 and u.op not in SLP_OPS | {Ops.LOAD, Ops.REDUCE, Ops.CONST, Ops.DEFINE_GLOBAL}: return 1
  return lanes

def slp_broadcasts(sink: UOp, ups: list[tuple[UOp, int]], granges: list[UOp], slp: int) -> float:
  """What dividing a scalar plan's loop_cost by slp_lanes leaves out, per accumulated lane: a load the reduction moves
  but the innermost global dim doesn't (a matmul's A[i, k]) is shared by the inner dim's copies in the scalar code (1
  per inner upcast), and stays one op per vector after GCC packs them: a broadcast, which the division counted as
  1/slp of one. An 8 x 16 tile per step of k: 8 broadcasts and 16 / slp vector loads of B for 128 / slp vector FMAs.
  With AVX2 (slp 8) that made little difference; with AVX-512 (slp 16: one vector a row) the scalar tile looked
  cheaper than the wide tile (8 rows x 2 vectors), which ran 1.1-1.4x faster (the MLP's 128x784x128 on a Zen 4 core:
  109-118 vs 126-163 us). Counted only where a row of the tile is one vector (slp is the inner upcast): with two a row
  (AVX2) the packed scalar tile is the wide tile in GCC's own order, which was timed faster than our wide tile (see
  opts.plan_cost), and the count as it was picks it."""
  if slp <= 1 or ups[0][1] != slp: return 0.0
  inner = granges[-1]
  topo = sink.toposort()
  rngs = {r for u in topo if u.op is Ops.REDUCE for r in u.src[1:]}
  in_loop, moving = moves_with(topo, tuple(rngs)), moves_with(topo, (inner,))
  shared = sum(1 for u in topo if u.op is Ops.LOAD and u.src[1] in in_loop and u.src[1] not in moving)
  return shared / ups[0][1] * (1 - 1 / slp)

# Two costs loop_cost leaves out, both read in the assembly and timed on a Zen 2 core (docs/performance.md):
# - a load that each step of the reduction moves by a page or more (a matmul's B read in place: 4 KiB per step of k)
#   misses L1 (every step the same L1 set, and the prefetcher stops at page boundaries): PAGE_STRIDE_COST more ops
#   each. Packed into a contiguous panel (codegen/pack.py), a 6 x 16 tile ran 47 -> 24 ms at 1024
# - more vector values live in the loop than the machine has vector registers: each one over is spilled to the
#   stack and read back every step (SPILL_COST ops)
#   Only for a buffer bigger than a Zen 2 core's 512 KiB L2 (PAGE_BUFFER_BYTES): a smaller one's lines stay in L2;
#   counted for all, the GPT's r_128_32_32_16 picked another plan, 3% slower; from 1 MiB, the CNN's conv3 weight
#   gradient r_64_32_3_3_128_4_4 did, 37% slower
PAGE_FLOATS, PAGE_STRIDE_COST, SPILL_COST, PAGE_BUFFER_BYTES = 1024, 4, 2, 512 << 10
# a vector loaded from a scratch array bigger than L1 (32 KiB on Zen 2 and Zen 4): L2_LOAD_COST more ops. The digits'
# conv2 weight gradient read its packed output gradient (128 KB) 4 vectors per 12 FMAs with a 4 x 3 tile; a 2 x 3 x 3
# window tile reads 2 per 18 and ran 2x faster (Zen 4), which the loads per lane alone did not tell
LINE_BYTES, L1_BYTES, L2_LOAD_COST = 64, 32 << 10, 2

def moves_with(topo: list[UOp], rngs) -> set[UOp]:
  """The nodes of topo (sources before users) that depend on any of the ranges rngs."""
  out: set[UOp] = set()
  for u in topo:
    if u in rngs or any(s in out for s in u.src): out.add(u)
  return out

def _body_loads(wk: Walk) -> list[UOp]:
  """The loads the longest reduction's loop body runs (those its ranges move)."""
  body = {r.src[0] for r in wk.reduces}  # one reverse walk: the nodes the reductions' bodies read
  for u in reversed(wk.topo):
    if u in body: body.update(u.src)
  return [x for x in wk.topo if x in body and x.op is Ops.LOAD and wk.moving(x.src[1])]

def machine_cost(sink: UOp, lanes: int, slp: int = 1, walk: Walk | None = None) -> float:
  """The two costs above per accumulated lane, for a vector plan or a scalar plan GCC packs into vectors of slp lanes
  (0 for other scalar plans: their registers are not vectors). lanes: the machine's vector width in floats (8: AVX2's
  16 registers; 16: AVX-512's 32). walk: the plan's Walk, where the caller made it already."""
  wk = Walk(sink) if walk is None else walk
  rngs, reduces = wk.rngs, wk.reduces
  if not reduces: return 0.0
  vec = reduces[0].dtype.count > 1
  if not vec and slp == 1: return 0.0
  loads = _body_loads(wk)
  n = slp if not vec else 1  # scalar copies per vector GCC makes
  def page(ld: UOp) -> bool:
    if ld.src[0].op is Ops.DEFINE_GLOBAL and ld.src[0].arg[1] * ld.src[0].dtype.itemsize <= PAGE_BUFFER_BYTES: return False
    return any(t.op is Ops.MUL and t.src[0] in rngs and t.src[1].op is Ops.CONST and abs(t.src[1].arg) >= PAGE_FLOATS for t in _terms(ld.src[1]))
  # vector loads at one index but for a constant (a convolution window's shifted rows, 0..22 floats apart) share their
  # lines: the page cost once per line they span, not per load
  strided, rows = 0.0, {}
  for ld in loads:
    if not (vec or ld.dtype.count == 1) or not page(ld): continue
    if ld.dtype.count == 1: strided += PAGE_STRIDE_COST; continue
    ts = _terms(ld.src[1])
    rows.setdefault((ld.src[0], ld.dtype.count, frozenset(t for t in ts if t.op is not Ops.CONST)), []).append(sum(t.arg for t in ts if t.op is Ops.CONST))
  strided += PAGE_STRIDE_COST * sum(-(-(max(offs) - min(offs) + width) * 4 // LINE_BYTES) for (_, width, _), offs in rows.items())
  # vector loads from a packed scratch array bigger than L1 (codegen/pack.py) come from L2 every step
  strided += L2_LOAD_COST * sum(1 for ld in loads if vec and ld.dtype.count > 1 and ld.src[0].op is Ops.AFTER and ld.src[0].src[0].op is Ops.DEFINE_LOCAL
                               and ld.src[0].src[0].arg[1] * 4 > L1_BYTES)
  # live vectors: the accumulators, the vector loads the copies share (B's), one broadcast of A in flight; in an SLP
  # plan n scalar copies make one vector
  live = (len(reduces) + sum(1 for ld in loads if ld.dtype.count == 1)) / n + 1 if not vec else len(reduces) + sum(1 for ld in loads if ld.dtype.count > 1) + 1
  spill = max(0.0, live - (32 if lanes >= 16 else 16)) * SPILL_COST
  return (strided / n + spill) / sum(u.dtype.count for u in reduces)
