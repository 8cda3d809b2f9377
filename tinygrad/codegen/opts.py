"""Kernel optimizations, decided from the lowered kernel: each candidate plan (scalar upcasting, vector lanes along an
output dim, a pair of dims or the reduction) is built and the cheapest by the cost model wins (see docs/engine.md)."""
from __future__ import annotations
import functools, time
from typing import Callable
from tinygrad import tracing
from tinygrad.dtype import dtypes
from tinygrad.helpers import getenv, prod
from tinygrad.uop.ops import UOp, UPat, Ops, PatternMatcher, graph_rewrite, graph_step, untraced_rewrites, track_context, traced
from tinygrad.uop.symbolic import symbolic, _terms
from tinygrad.codegen.upcast import MAX_UPCAST, choose_upcasts, outer_ranges, upcast, window_upcasts
from tinygrad.codegen.vectorize import vectorize, split_reduce
from tinygrad.codegen.cost import Walk, loop_cost, machine_cost, slp_lanes, slp_broadcasts, k_blockable, K_BLOCK
from tinygrad.codegen import plan_cache
from tinygrad.codegen.long_reduce import latency_upcasts, long_reduce_plans
from tinygrad.codegen.pack import MAX_PACK_BYTES, MIN_PACK_STRIDE, panel_loads, pack_panel, reduce_panel_loads, pack_reduce, gathered_loads

# copies per vector plan: (budget, first factors, later factors, vectors along the lanes' dim). As many as fit (a tall
# tile: one dim upcast by up to 16), a square 4x4 tile, which shares each load among more copies when two dims share
# loads, or a wide tile: two adjacent vectors along the lanes' dim, so each copy of the other dims (a matmul's row)
# shares its load with both (8x2 vectors, 16 accumulators: half of AVX-512's 32 registers). Not 4x4 vectors: each
# vector load of a matmul's B then serves 4 rows, not 8, and B streams from L2/L3 twice as often (1024 matmul 27% slower).
# The 6-row tile: 6 rows x 2 vectors, 12 accumulators + 2 B vectors + a broadcast of A fit AVX2's 16 registers (8 x 2
# needs 19: GCC spills); 6 rarely divides the rows, so the last tile repeats the last row (ragged), and B's panel is
# packed (codegen/pack.py): only for a big plain matmul (_packable). Fifth field: ragged
# The 2x4 tile: 2 copies of the innermost other dim x 4 of the next, 8 accumulators + the copies' 2 vectors and a
# broadcast: no spill on AVX2, where the square tile's 16 accumulators + 4 vectors + a broadcast spill 5 accumulators
# every step (the digits CNN's 3x3 convolutions on 8-wide rows, one Zen 2 core: forward 2540-2594 -> 1993-2016 us).
# Only with lanes along the innermost output dim (a row) of a reduction over several ranges (a convolution's channels
# and window): the small GPT's r_32_16_4_8_32, one reduce loop of 32, picked it too and ran 5% slower
TILES = {"tall": (MAX_UPCAST // 8, (16, 8, 4), (8, 4), 1, False), "square": (16, (4,), (4,), 1, False), "2x4": (8, (2,), (4,), 1, False),
         "wide": (8, (8, 4), (4,), 2, False), "6-row": (6, (6,), (), 2, True), "narrow": (6, (6, 5, 4), (), 2, False),
         "window": (9, (3,), (3,), 2, False), "rows": (8, (4,), (2,), 2, False)}

def _widths(lanes: int) -> tuple[int, ...]:
  """Vector widths (floats) to try, widest first, none wider than the machine's registers (lanes)."""
  return tuple(w for w in (16, 8) if w <= lanes) or (lanes,)

def _width(g: UOp, lanes: int) -> int | None: return next((w for w in _widths(lanes) if g.src[0].arg % w == 0), None)

def _output_tile(sink: UOp, granges: list[UOp], g: UOp, tile: str, lanes: int) -> list[tuple[UOp, int]]:
  """The upcasts of the other dims beside lanes along g."""
  budget, first, more, _, ragged = TILES[tile]
  cap = budget if tile == "window" else MAX_UPCAST // (_width(g, lanes) or 8)  # the window's 9 copies x 2 vectors: 18 of AVX-512's 32 registers
  return choose_upcasts(sink, [r for r in granges if r is not g], budget=min(budget, cap), first=first, rest=more, ragged=ragged)

def _vector_over_output(sink: UOp, granges: list[UOp], g: UOp, nid: int, tile: str = "tall", lanes: int = 16, packed: bool = False) -> tuple[UOp, list[UOp]] | None:
  """Lanes along output dim g (a matmul's columns; a convolution's x): partial results stay separate per lane; the
  other dims are upcast as copies, each copy a vector, and so is g's vector index for a wide tile. packed: the vectors
  gathered lane by lane that only the reduction and g's loop move are packed (_pack_gathers)."""
  vectors = TILES[tile][3]
  if (width := _width(g, lanes)) is None or g.src[0].arg % (width * vectors): return None
  # g = G * width + V: V the lane; G, the vector's index, is a global range like the others
  G = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, g.src[0].arg // width),), (nid, "global")) if g.src[0].arg > width else UOp.const(dtypes.int32, 0)
  V = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, width),), (nid + 1, "vector"))
  ups = _output_tile(sink, granges, g, tile, lanes) + ([(G, vectors)] if vectors > 1 else [])
  plan, new_granges, _ = outer_ranges([G if r is g else r for r in granges if r is not g or G.op is Ops.RANGE], ups, nid + 2)
  # packed: the vector copies innermost, so each broadcast of the other operand meets all the tile's vectors at once
  # (outer, 8 broadcasts stayed live across the 2 vectors' 16 FMAs: GCC spilled, the digits conv2 forward 1.7x slower)
  if packed: plan = [p for p in plan if p[0] is not G] + [p for p in plan if p[0] is G]
  split = graph_step(sink, split_range, g, G * width + V, name=f"opt: split output dim for {width} lanes")
  vsink = upcast(split, plan, f" vector {width}")
  if (vec := graph_step(vsink, vectorize, V, width, presimplify=not traced(), name=f"opt: {width} lanes as vectors")) is None: return None
  out = graph_rewrite(vec, symbolic, name="opt: vectorized")
  if packed: return _pack_gathers(out, new_granges)
  if TILES[tile][4]: return _pack(out, new_granges, width * vectors, _next_range_id(out))
  if k_blockable(out): return _k_blocks(out, new_granges)
  return out, _panel_outer(out, new_granges)

def _packable(sink: UOp, granges: list[UOp], g: UOp, lanes: int) -> bool:
  """Where the 6-row tile is offered: a plain matmul (two global dims, lanes along the inner one, one reduce loop)
  whose every store is the sum itself (a repeated last row then stores the same value twice, and nothing reads the
  output), B bigger than L2 (its panels go outermost, see _panel_outer) with rows MIN_PACK_STRIDE floats or more
  apart, and a panel small enough for the scratch array."""
  if len(granges) != 2 or g is not granges[-1] or not all(st.op is Ops.STORE and st.src[2].op is Ops.REDUCE for st in sink.src): return False
  if len(rngs := {r for u in sink.toposort() if u.op is Ops.REDUCE for r in u.src[1:]}) != 1: return False
  R = next(iter(rngs))
  def strided(ld: UOp) -> bool: return any(t.op is Ops.MUL and t.src[0] is R and t.src[1].op is Ops.CONST and t.src[1].arg >= MIN_PACK_STRIDE for t in _terms(ld.src[1]))
  return _panel_outer(sink, granges) != granges and R.src[0].arg * lanes * TILES['6-row'][3] * 4 <= MAX_PACK_BYTES and \
    any(strided(ld) for ld in sink.toposort() if ld.op is Ops.LOAD and granges[0] not in ld.src[1].toposort())

def _pack(sink: UOp, granges: list[UOp], width: int, nid: int) -> tuple[UOp, list[UOp]] | None:
  """The vector tile with B's column panel packed (codegen/pack.py); its panel loop outermost. None where B's loads
  don't have the panel's form."""
  order = _panel_outer(sink, granges)
  if order == granges: return None
  panel, rows = order[0], order[1:]
  R = next(u for u in sink.toposort() if u.op is Ops.REDUCE).src[-1]
  if (loads := panel_loads(sink, R, rows, panel)) is None: return None
  packed = graph_step(sink, pack_panel, R, loads, width, nid, name=f"opt: pack B's panel ({R.src[0].arg} x {width})")
  return graph_rewrite(packed, symbolic, name="opt: packed"), order

L2_BYTES = 1 << 20

def _panel_outer(sink: UOp, granges: list[UOp]) -> list[UOp]:
  """Loop order: the innermost global loop (a matmul's column tiles) outermost when some operand the other global loops
  don't move (B: each column panel is read by every row tile) is bigger than L2. Then one k x tile-width panel of B
  stays in L2 while every row tile reads it, instead of all of B streaming from L3 or memory once per row tile
  (2048 matmul ~1.6x faster on an AVX2 Zen 2). Only the order of the loops changes, not what they compute."""
  # only a plain matmul's shape (two global loops, one reduce loop): a conv weight gradient's padded input is big too,
  # but it ran slower with its inner loop outermost (19 -> 25 ms on one core)
  if len(granges) != 2 or len({r for u in sink.toposort() if u.op is Ops.REDUCE for r in u.src[1:]}) != 1: return granges
  inner, others = granges[-1], set(granges[:-1])
  loads = [u for u in sink.toposort() if u.op is Ops.LOAD and u.src[0].op is Ops.DEFINE_GLOBAL]
  def moves(u: UOp) -> bool: return bool(others & set(u.src[1].toposort()))
  if any(not moves(ld) and inner in ld.src[1].toposort() and ld.src[0].arg[1] * ld.src[0].dtype.itemsize > L2_BYTES for ld in loads):
    return [inner] + granges[:-1]
  return granges

def _k_blocks(sink: UOp, granges: list[UOp]) -> tuple[UOp, list[UOp]]:
  """k-blocking for a plain matmul whose operands don't fit L3 (k_blockable): the reduction over k becomes K_BLOCK
  steps at a time, in a loop over k blocks between the column panel loop (outermost, split over threads) and the row
  loop, each block's partial sums added to the output's (read back from it after the first block). Then the block of
  B a row tile reads is in L1 and the block of A the panel's row tiles read in L2, not all of k's rows 8 KiB apart
  (in blocks of 128, a 2048 matmul's wide vector tile 1141-1172 -> 712-791 ms on one Zen 2 core; at 1024, whose operands fit L3, it
  was slower: 46 -> 55 ms, so it is not done there)."""
  R = next(u for u in sink.toposort() if u.op is Ops.REDUCE).src[-1]
  K = R.src[0].arg
  nid = _next_range_id(sink)
  KB = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, K // K_BLOCK),), (nid, "global"))
  Rp = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, K_BLOCK),), (nid + 1, "reduce"))
  blocked = graph_step(sink, block_reduce, R, KB, Rp, name=f"opt: k blocks of {K_BLOCK}")
  return graph_rewrite(blocked, symbolic + pm_distribute, name="opt: k blocked"), [granges[-1], KB, granges[0]]

# (KB * 128 + k) * 2048 -> KB * 262144 + k * 2048: B's index in the loop is k * 2048 plus what the loop doesn't change,
# as before blocking (the C compiler, int math wrapping under -fwrapv, can't reassociate the product itself)
pm_distribute = PatternMatcher([((UPat.var("x") + UPat.var("y")) * UPat.cvar("c"), lambda x, y, c: x * c + y * c if x.dtype in dtypes.ints else None)])

def block_reduce(sink: UOp, R: UOp, KB: UOp, Rp: UOp) -> UOp:
  """Reduce range R becomes KB * len(Rp) + Rp, KB a loop of its own; each store adds what its output held before,
  0 in the first block: a select, not a gated load, whose branch would keep GCC from packing the stores' 16 copies
  (and the loop feeding them) into vectors."""
  mapping: dict[UOp, UOp] = {u: UOp(Ops.REDUCE, u.dtype, (u.src[0].substitute({R: KB * Rp.src[0].arg + Rp}), *[Rp if r is R else r for r in u.src[1:]]), u.arg)
                             for u in sink.toposort() if u.op is Ops.REDUCE and R in u.src[1:]}
  for st in sink.src:
    if st.op is not Ops.STORE: continue
    buf, idx, val = st.src[:3]
    v = val.substitute(mapping)
    mapping[st] = UOp(Ops.STORE, st.dtype, (buf, idx, UOp(Ops.WHERE, v.dtype, (UOp.const(dtypes.int32, 0) < KB, v + UOp(Ops.LOAD, v.dtype, (buf, idx)), v)), *st.src[3:]), st.arg)
  return sink.substitute(mapping)

def _vector_over_pair(sink: UOp, granges: list[UOp], k: int, nid: int, lanes: int = 16, tile: str = "tall") -> tuple[UOp, list[UOp]] | None:
  """Lanes along output dims k and k+1 merged into one (index math splits it again where needed)."""
  a, b = granges[k], granges[k + 1]
  G = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, a.src[0].arg * b.src[0].arg),), (nid, "global"))
  one = graph_step(sink, merge_ranges, a, b, G, name="opt: one range for two output dims")
  merged = graph_rewrite(one, symbolic, name="opt: merge output dims")
  return _vector_over_output(merged, granges[:k] + [G] + granges[k + 2:], G, nid + 1, tile, lanes=lanes)

def _vector_over_reduce(sink: UOp, granges: list[UOp], nid: int, lanes: int = 16, ups: list[tuple[UOp, int]] | None = None) -> tuple[UOp, list[UOp]] | None:
  """Lanes along the innermost reduce dim (a matmul with both operands contiguous along k): one vector accumulator per
  output, its lanes summed after the loop. Fewer copies than the output-lane plan: each copy holds a whole vector.
  ups: the copies where the caller chose them (a convolution window's, upcast.window_upcasts)."""
  reduces = [u for u in sink.toposort() if u.op is Ops.REDUCE]
  if not reduces or len({u.src[1:] for u in reduces}) != 1: return None
  R = reduces[0].src[-1]
  width = next((w for w in (16, 8, 4) if w <= lanes and R.src[0].arg % w == 0), None)
  if width is None: return None
  if ups is None:
    ups = choose_upcasts(sink, granges, budget=16, first=(4, 5, 2), rest=(4, 2))  # 16 vector accumulators: half the registers
    ups = ups or latency_upcasts(sink, granges)  # a long sum whose copies share no load: copies for the add latency
  plan, new_granges, nid = outer_ranges(granges, ups, nid)
  ssink, Rp, V = graph_step(sink, split_reduce, R, width, nid, name=f"opt: split the reduction for {width} lanes")
  vsink = upcast(ssink, plan, f" reduce vector {width}")
  if (vec := graph_step(vsink, vectorize, V, width, Rp, presimplify=not traced(), name=f"opt: {width} reduce lanes as vectors")) is None: return None
  out = graph_rewrite(vec, symbolic, name="opt: vectorized")
  return _pack_reduce(out, new_granges) or (out, new_granges)

def merge_reduce_rows(sink: UOp, Ry: UOp, Rx: UOp, R: UOp) -> UOp:
  """Each reduction's two innermost ranges (a convolution's y and x) as one range R: y = R // len(x), x = R % len(x)."""
  nx = Rx.src[0].arg
  return sink.substitute({u: UOp(Ops.REDUCE, u.dtype, (u.src[0].substitute({Ry: R // nx, Rx: R % nx}), *u.src[1:-2], R), u.arg)
                          for u in sink.toposort() if u.op is Ops.REDUCE})

def _rows_mergeable(sink: UOp, lanes: int) -> tuple[UOp, UOp] | None:
  """(y, x): the reduction's two innermost ranges where x is half a vector (8 of AVX-512's 16 lanes) and y even, every
  reduction over the same ranges; else None."""
  if lanes < 16 or len(rngs := {u.src[1:] for u in sink.toposort() if u.op is Ops.REDUCE}) != 1 or len(rs := next(iter(rngs))) < 2: return None
  Ry, Rx = rs[-2], rs[-1]
  return (Ry, Rx) if Rx.src[0].arg == lanes // 2 and Ry.src[0].arg % 2 == 0 else None

def _vector_over_reduce_rows(sink: UOp, granges: list[UOp], nid: int, lanes: int, ups: list[tuple[UOp, int]], Ry: UOp, Rx: UOp) -> tuple[UOp, list[UOp]] | None:
  """Lanes along the reduction with two of its 8-wide rows in one 16-lane vector (AVX-512): a convolution weight
  gradient's window tile, whose lanes along x alone fill half of each FMA. The rows' y and x become one range first;
  the padded input's vector is then two 8-float loads joined (vectorize._halves), the output gradient's one load.
  Ry, Rx: the rows' ranges (_rows_mergeable)."""
  R = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, Ry.src[0].arg * Rx.src[0].arg),), (nid, "reduce"))
  one = graph_step(sink, merge_reduce_rows, Ry, Rx, R, name="opt: one range for the reduction's rows")
  return _vector_over_reduce(graph_rewrite(one, symbolic, name="opt: merge the reduction's rows"), granges, nid + 1, lanes, ups)

def _pack_reduce(sink: UOp, granges: list[UOp]) -> tuple[UOp, list[UOp]] | None:
  """Lanes along the reduction with loads that the inner global loops don't move and a reduce range moves a page or
  more per step (a weight gradient's output gradient): those loads packed once per outermost global loop iteration
  (codegen/pack.py). The digits CNN's 32 x 32 x 3 x 3 weight gradient: 4.5 -> 3.4 ms on one Zen 2 core, hand-packed."""
  if len(granges) < 2 or prod(r.src[0].arg for r in granges[1:]) < 4: return None
  rngs = next(u for u in sink.toposort() if u.op is Ops.REDUCE).src[1:]
  if (loads := reduce_panel_loads(sink, rngs, granges[1:])) is None: return None
  if prod(r.src[0].arg for r in rngs) * len(loads) * loads[0].dtype.itemsize > MAX_PACK_BYTES: return None
  packed = graph_step(sink, pack_reduce, rngs, loads, _next_range_id(sink), name=f"opt: pack {len(loads)} strided loads of the reduction")
  return graph_rewrite(packed, symbolic, name="opt: packed"), granges

def _pack_gathers(sink: UOp, granges: list[UOp]) -> tuple[UOp, list[UOp]] | None:
  """Lanes along an output dim that an operand is strided along (a convolution's output channel: its weights 288 floats
  apart per lane): each step of the reduction gathered that operand lane by lane (8 loads and 7 inserts for one
  vector). Here those vectors are packed once per iteration of the loop they move with (the panel: the lanes' vector
  index), which goes outermost, into a scratch array that the reduction then reads as whole vectors
  (codegen/pack.py). None where there are no such vectors or the panel is too big."""
  reduces = [u for u in sink.toposort() if u.op is Ops.REDUCE]
  if not reduces or not granges: return None
  rngs = max({u.src[1:] for u in reduces}, key=lambda rs: prod(r.src[0].arg for r in rs))
  for k, panel in enumerate(granges):
    rows = granges[:k] + granges[k + 1:]
    if (loads := gathered_loads(sink, rows, rngs)) is None: continue
    if prod(r.src[0].arg for r in rngs) * sum(ld.dtype.count for ld in loads) * 4 > MAX_PACK_BYTES or len({ld.dtype for ld in loads}) != 1: return None
    packed = graph_step(sink, pack_reduce, rngs, loads, _next_range_id(sink), name=f"opt: pack {len(loads)} gathered loads of the reduction")
    # the panel loop stays where it is when 16 or more row tiles inside it share each packing (beautiful_mnist's 5x5
    # forward: 80 per image, the batch loop stays outermost, split over the threads); else it goes outermost, packing
    # once per panel (the digits CNN's 4x4 images: one tile per image, a packing per image cost as much as the tile)
    inner = prod(r.src[0].arg for r in granges[k + 1:])
    return graph_rewrite(packed, symbolic, name="opt: packed"), granges if inner >= 16 else [panel] + rows
  return None

def split_range(sink: UOp, r: UOp, expr: UOp) -> UOp:
  """Range r becomes expr of new ranges (g = G * width + V: the vector's index and its lane)."""
  return sink.substitute({r: expr})

def merge_ranges(sink: UOp, a: UOp, b: UOp, G: UOp) -> UOp:
  """Ranges a and b become one, G, that index math splits again (a = G // len(b), b = G % len(b))."""
  return sink.substitute({a: G // b.src[0].arg, b: G % b.src[0].arg})

def _next_range_id(sink: UOp) -> int: return max((r.arg[0] for r in sink.toposort() if r.op is Ops.RANGE), default=-1) + 1

def _divmods(u: UOp) -> int: return sum(1 for x in u.toposort() if x.op in (Ops.IDIV, Ops.MOD))

def merge_reduce_loops(sink: UOp) -> UOp:
  """Adjacent loops of a reduction that every load walks contiguously (a sum over a row-major image's y and x)
  become one longer loop: fewer loop overheads and a loop long enough for vector lanes. A merge is kept only when
  symbolic math folds the split index back (no new divisions)."""
  nid = _next_range_id(sink)
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

PRUNE = True  # skip, before building them, vector plans whose every load and store would be gathered (see _strided_only)
MIN_PRUNED_STRIDE = 64  # floats: each lane of a gather a cache line (or more) from the next

def _strided_only(sink: UOp, r: UOp) -> bool:
  """A cheap estimate before a plan is built: every load and store that moves with range r moves by a constant stride
  of at least MIN_PRUNED_STRIDE (a matmul's rows), so lanes along r would gather every load and scatter every store a
  cache line apart. Shorter strides stay (a 4x4 image's channels, stride 16, gather well enough to win sometimes),
  and any other form (r alone, inside a division) counts as maybe contiguous: the plan is built. Building the plans
  is most of a first run's codegen (vectorize tests each load's lanes by rewriting)."""
  for u in sink.toposort():
    if u.op not in (Ops.LOAD, Ops.STORE) or r not in (idx := u.src[1]).toposort(): continue
    for t in _terms(idx):
      if t is r: return False
      if r in t.toposort() and not (t.op is Ops.MUL and t.src[0] is r and t.src[1].op is Ops.CONST and abs(t.src[1].arg) >= MIN_PRUNED_STRIDE): return False
  return True

# "window": a weight gradient's whole 3 x 3 window as copies x 2 vectors, 18 accumulators, each packed vector feeding 9
# FMAs (the digits' conv3 weight gradient 1.27x alone); "rows": a 4-wide row and 2 rows x 2 vectors, 16 accumulators
# (the digits' conv3 input gradient 1.07-1.2x, its forward the same)
PACKED_TILES = ("wide", "narrow", "window", "rows")  # "narrow": 4-6 copies x 2 vectors, 8-12 accumulators
PACKED_ONLY = ("narrow", "window", "rows")
AVX512_TILES = ("window", "rows")  # 16-18 accumulators: AVX-512's 32 registers, not AVX2's 16
MIN_PACKED_TRIPS = 64

def _gathers_along(sink: UOp, granges: list[UOp], g: UOp, lanes: int) -> bool:
  """Whether lanes along g would gather a float operand that the reduction moves and no other output dim does (a
  convolution's weights along its output channel): the case _pack_gathers packs. Tested before building. Not for a
  short reduction or few other outputs (under MIN_PACKED_TRIPS each), where the packing and the scattered stores are
  shared by too little work: a Linear layer's r_128_10_256 (10 outputs a row) and r_128_64_2_2_10 (a sum of 10)
  picked a packed plan by the model and ran 1.06x and 1.2x slower than their picks before."""
  others = set(granges) - {g}
  rngs = {r for u in sink.toposort() if u.op is Ops.REDUCE for r in u.src[1:]}
  if prod(r.src[0].arg for r in rngs) < MIN_PACKED_TRIPS or prod(r.src[0].arg for r in others) < MIN_PACKED_TRIPS: return False
  if prod(r.src[0].arg for r in rngs) * 2 * min(_widths(lanes)) * 4 > MAX_PACK_BYTES: return False  # 2 vectors a step: see _pack_gathers
  for u in sink.toposort():
    if u.op is not Ops.LOAD or u.dtype != dtypes.float32 or len(u.src) > 2: continue
    deps = set(u.src[1].toposort())
    if g not in deps or others & deps or not rngs & deps: continue
    if any(t.op is Ops.MUL and t.src[0] is g and t.src[1].op is Ops.CONST and abs(t.src[1].arg) >= 2 for t in _terms(u.src[1])): return True
  return False

def lanes_of(vector: bool | int) -> int:
  """The widest vector in floats: True is 16 (AVX-512), an int the device's own width (8 with AVX2), False none."""
  return 16 if vector is True else int(vector)

def _scalar_upcasts(sink: UOp, granges: list[UOp], max_upcast: int) -> list[tuple[UOp, int]]:
  return choose_upcasts(sink, granges, budget=max_upcast, first=tuple(f for f in (16, 8, 4) if f <= max_upcast), rest=tuple(f for f in (8, 4) if f <= max_upcast))

def plan_cost(name: str, kernel: UOp, sink: UOp, granges: list[UOp], vector: bool | int, max_upcast: int) -> float:
  """loop_cost of a built plan; the scalar plan's divided by the lanes GCC's SLP pass packs its copies into (slp_lanes):
  a matmul's 8 x 16 scalar tile runs as 8 x 2 vectors of 8, and faster than our own 8 x 2 vector tile (1024 matmul:
  40-48 vs 50-55 ms on one Zen 2 core; the MLP's 128x784x128: 0.43 vs 0.50 ms), whose source loads all 8 broadcasts of
  A first, so GCC spills 8 of its 16 accumulators where SLP's row-by-row order spills 3."""
  lanes, walk = lanes_of(vector), Walk(kernel)  # one walk of the plan for both costs
  if name != "scalar": return loop_cost(kernel, walk) + machine_cost(kernel, lanes, walk=walk)
  slp = slp_lanes(sink, ups := _scalar_upcasts(sink, granges, max_upcast), granges, lanes)
  return loop_cost(kernel, walk) / slp + slp_broadcasts(sink, ups, granges, slp) + machine_cost(kernel, lanes, slp, walk)

def _scalar_floor(sink: UOp, granges: list[UOp], vector: bool | int, max_upcast: int) -> float | None:
  """Less than or equal to the scalar plan's plan_cost, known before it is built: 1 / slp_lanes. Its loop_cost counts
  one accumulate per reduction inside the loop (each REDUCE scalar: one lane) and nothing below zero, so it is 1 or
  more, and machine_cost is never below zero. Only where a store's value is a REDUCE itself: no rule of the copies'
  tables (pm_copy_simplify) rewrites a STORE or a REDUCE, so the built plan keeps a reduction (with none loop_cost
  would be 0). None where that can't be told."""
  if not any(st.op is Ops.STORE and st.src[2].op is Ops.REDUCE for st in sink.src): return None
  if any(u.op is Ops.REDUCE and u.dtype.count != 1 for u in sink.toposort()): return None
  return 1.0 / slp_lanes(sink, _scalar_upcasts(sink, granges, max_upcast), granges, lanes_of(vector))

def short_inner(granges: list[UOp], lanes: int) -> bool:
  """A big elementwise kernel (64k elements or more) whose innermost loop is shorter than a vector (a 4 x 4 image, a
  max-pool's 2 x 2 windows): GCC vectorizes only the innermost loop (the digits CNN's max-pool E_128_32_4_2_4_2: 240 ->
  95 us in its step with lanes along its innermost dims merged)."""
  return lanes >= 4 and bool(granges) and granges[-1].src[0].arg < min(_widths(lanes)) and prod(r.src[0].arg for r in granges) >= 1 << 16

def divided_inner(sink: UOp, granges: list[UOp], lanes: int) -> bool:
  """A big elementwise kernel (64k elements or more) with a float load whose index divides the innermost output dim (a
  max-pool's gradient reading its pooled value at x // 2): GCC leaves such a loop scalar; with lanes along that dim the
  load is a few floats whose lanes a shuffle repeats (vectorize._repeats)."""
  if lanes < 4 or not granges or prod(r.src[0].arg for r in granges) < 1 << 16: return False
  inner = granges[-1]
  return any(u.op is Ops.LOAD and u.dtype == dtypes.float32 and any(x.op is Ops.IDIV and inner in x.src[0].toposort() for x in u.src[1].toposort())
             for u in sink.toposort())

FLOAT_ALU = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.FDIV, Ops.MAX, Ops.WHERE}

def branchy_select(sink: UOp) -> bool:
  """A float select with an arm that is float arithmetic the condition doesn't compute too (a ReLU mask applied to
  batchnorm's gradient: `x > 0 ? (a - m) * s + b : 0`). GCC (-O2, -ftrapping-math) may not compute such an arm when
  the condition is false, so the select stays a branch and the loop scalar: the digits CNN's `E_128_32_8_8n5` ran
  1.39 ms on its step's data (half the lanes masked, mispredicted) against 0.34 ms on data whose branch never changes."""
  for u in sink.toposort():
    if u.op is Ops.WHERE and u.dtype == dtypes.float32:
      cond = None
      for arm in u.src[1:]:
        if arm.op in FLOAT_ALU and arm.dtype == dtypes.float32 and arm not in (cond := cond or set(u.src[0].toposort())): return True
  return False

def _elementwise_plan(sink: UOp, granges: list[UOp], nid: int, lanes: int, widest: bool = False) -> tuple[str, Plan] | None:
  """Lanes along the innermost output dim, or the innermost dims merged into one where it is too short (a 4 x 4 image,
  a max-pool's 2 x 2 windows), every store a whole vector; a vector select computes both arms and blends them by the
  mask, no branch. widest: as many lanes as the machine's widest vector (see candidate_plans). The kernel as it was
  where that can't be built."""
  if lanes < 4 or not granges: return None
  w = (max if widest else min)(_widths(lanes))
  k = len(granges) - 1
  while k > 0 and prod(r.src[0].arg for r in granges[k:]) < w: k -= 1
  if prod(r.src[0].arg for r in granges[k:]) % w: return None
  def build() -> tuple[UOp, list[UOp]]:
    s, gs, n = sink, granges, nid
    while len(gs) > k + 1:  # merge the two innermost, symbolic folds each merged index back where it is contiguous
      G = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, gs[-2].src[0].arg * gs[-1].src[0].arg),), (n, "global"))
      s = graph_rewrite(graph_step(s, merge_ranges, gs[-2], gs[-1], G, name="opt: one range for two output dims"), symbolic, name="opt: merge output dims")
      gs, n = gs[:-2] + [G], n + 1
    res = _vector_over_output(s, gs, gs[-1], n, "tall", lanes)
    # every store a whole vector, and no vector of loads repeated across lanes ({a, a, b, b, ...}: GCC builds it through
    # the stack, 4 stores then a load that can't be forwarded from them; a max-pool gradient's E_128_64_4_4n2 ran 149 ->
    # 327 us. 8 different loads gathered, E_128_64_2_2_2_2, ran 112 -> 20 us)
    ok = res is not None and all(st.op is not Ops.STORE or (st.src[2].dtype.count > 1 and st.arg is None) for st in res[0].src) and \
      not any(u.op is Ops.VECTORIZE and u.src[0].op is Ops.LOAD and len(set(u.src)) < len(u.src) for u in res[0].toposort())
    return res if ok else (sink, granges)  # type: ignore[return-value]
  last = len(granges) - 1
  return (f"lanes along output dim {k}" if k == last else f"lanes along output dims {k} {'and' if k + 1 == last else 'to'} {last}", build)

def gated_load(sink: UOp) -> bool:
  """A load under a gate (a convolution's zero padding: `0 < y & y < 5 & 0 < x & x < 5 ? in[...] : 0`): GCC won't
  speculate the load, so the loop stays a branch per element and scalar (the digits CNN's `E_128_64_6_6` 280 us).
  Floats only: the random draws' gated loads of their key (uint) are one-time kernels of long arithmetic per element."""
  return any(u.op is Ops.LOAD and len(u.src) == 3 and u.dtype == dtypes.float32 for u in sink.toposort())

# a copy's gate that the upcast made a constant: the load always happens (true) or is the zero it would give (false)
fold_gates = PatternMatcher([
  (UPat(Ops.LOAD, src=(UPat.var("b"), UPat.var("i"), UPat.const(dtypes.bool, True)), name="x"), lambda x, b, i: UOp(Ops.LOAD, x.dtype, (b, i))),
  (UPat(Ops.LOAD, src=(UPat.var("b"), UPat.var("i"), UPat.const(dtypes.bool, False)), name="x"), lambda x, b, i: UOp.const(x.dtype, 0)),
])

def _row_plan(sink: UOp, granges: list[UOp], nid: int) -> tuple[str, Plan]:
  """The innermost output dim as scalar copies (a padded row, 6 or 10 long): each copy's test of x is a constant, so
  the edges store zeros and the inside loads under the row's gate only, one test of y per row that GCC's branch
  predictor follows; the pad kernels of the digits CNN step 0.42-0.61x the time in the step (one thread). Lanes along
  merged dims were tried: a division and a modulo per lane, 3.2-3.3x slower."""
  def build() -> tuple[UOp, list[UOp]]:
    plan, new_granges, _ = outer_ranges(granges, [(granges[-1], granges[-1].src[0].arg)], nid)
    out = graph_rewrite(upcast(sink, plan, ""), symbolic, name="opt: a padded row as copies")
    return graph_rewrite(out, fold_gates, name="opt: constant gates folded"), new_granges
  return (f"output dim {len(granges) - 1} as copies", build)

def _row_inside_plan(sink: UOp, granges: list[UOp], nid: int, lanes: int) -> tuple[str, Plan] | None:
  """A padded row whose inside is a vector (10 = 1 + 8 + 1, 6 = 1 + 4 + 1): the two edges scalar copies (zeros), the
  inside one vector load under the row's gate (one branch a row) and one vector store; the digits CNN's pad kernels
  0.22-0.55x the time in the step. The row as copies (_row_plan) where a gate of the inside still tests x (not a
  1-wide padding) or it can't be vectorized."""
  g = granges[-1]
  W, w = g.src[0].arg, g.src[0].arg - 2
  if w not in (4, 8, 16) or w > lanes: return None
  copies = _row_plan(sink, granges, nid)[1]
  def build() -> tuple[UOp, list[UOp]]:
    V = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, w),), (nid, "vector"))
    edges = [st for k in (0, W - 1) for st in graph_rewrite(sink.substitute({g: UOp.const(dtypes.int32, k)}), symbolic, name="opt: a row's edge").src]
    inside = graph_rewrite(sink.substitute({g: V + 1}), symbolic, name="opt: a row's inside")
    if any(u.op is Ops.LOAD and len(u.src) == 3 and V in u.src[2].toposort() for u in inside.toposort()): return copies()
    if (vec := graph_step(inside, vectorize, V, w, presimplify=not traced(), name=f"opt: {w} lanes as vectors")) is None: return copies()
    out = graph_rewrite(UOp(Ops.SINK, sink.dtype, tuple(edges) + vec.src, sink.arg), symbolic, name="opt: vectorized")
    return graph_rewrite(out, fold_gates, name="opt: constant gates folded"), granges[:-1]
  return (f"output dim {len(granges) - 1}'s inside as a vector", build)

def candidate_plans(sink: UOp, granges: list[UOp], vector: bool | int, max_upcast: int = MAX_UPCAST, prune: bool = False) -> list[tuple[str, Plan]]:
  """(name, build) for every way to optimize the kernel: scalar copies per upcast, lanes along each output dim that
  vectors fit, lanes along the reduction. A build returns (kernel, global ranges), or None where the plan can't apply.
  vector: see lanes_of; wider vectors than the machine's registers are split by the C compiler into slow code. prune:
  leave out the vector plans along a dim that no load or store walks contiguously (_strided_only)."""
  nid = _next_range_id(sink)
  if not any(u.op is Ops.REDUCE for u in sink.toposort()):  # elementwise: the C compiler vectorizes these itself, but not
    # a select it keeps as a branch (branchy_select), nor well a loop shorter than a vector (short_inner)
    lanes = lanes_of(vector)
    divided, short = divided_inner(sink, granges, lanes), short_inner(granges, lanes)
    # the widest lanes for a 2x2 window of a 2x2 pooled map (E_128_64_2_2_2_2n1): 8 lanes repeat only 2 pooled values,
    # which stay gathered; 16 read 4 (17 vs 128 us alone). Not wider elsewhere: the 8x8 max-pool gradients ran the same
    # with 16 lanes as with 8
    widest = short and len(granges) >= 2 and granges[-1].src[0].arg == granges[-2].src[0].arg == 2
    plan = _elementwise_plan(sink, granges, nid, lanes, widest) if (branchy_select(sink) or short or divided) and not getenv("NOVEC", 0) else None
    if plan is None and granges and gated_load(sink) and 2 <= granges[-1].src[0].arg <= 16: plan = (None if getenv("NOVEC", 0) else _row_inside_plan(sink, granges, nid, lanes)) or _row_plan(sink, granges, nid)  # nor a padded row
    return [] if plan is None else [plan]
  ups = _scalar_upcasts(sink, granges, max_upcast)
  def scalar() -> tuple[UOp, list[UOp]]:
    plan, new_granges, _ = outer_ranges(granges, ups, nid)
    return upcast(sink, plan, ""), new_granges
  out: list[tuple[str, Plan]] = [("scalar", scalar)]
  if (lanes := lanes_of(vector)) >= 4 and not getenv("NOVEC", 0):
    window = len({r for u in sink.toposort() if u.op is Ops.REDUCE for r in u.src[1:]}) > 1  # the 2x4 tile's case (TILES)
    for g in granges:
      if _width(g, lanes) is None or not g.src[0].arg: continue
      # the strided operand packed (_pack_gathers) only where the innermost output dim can't be vector lanes: where it can
      # (a conv's 8- or 24-wide rows), those beat the packed plans (digits conv2 forward 2.8 vs 3.2 ms, one core)
      gather = g is not granges[-1] and _width(granges[-1], lanes) is None and _gathers_along(sink, granges, g, lanes)
      if prune and _strided_only(sink, g) and not gather: continue
      tiles = {tile: _output_tile(sink, granges, g, tile, lanes) for tile in TILES if tile not in PACKED_ONLY and (not TILES[tile][4] or _packable(sink, granges, g, lanes))
               and (tile != "2x4" or window and g is granges[-1])}
      if not (prune and _strided_only(sink, g)):
        out += [(f"lanes along output dim {granges.index(g)}, {tile} tile", functools.partial(_vector_over_output, sink, granges, g, nid, tile, lanes))
                for tile, tile_ups in tiles.items() if tile != "square" or tile_ups != tiles["tall"]  # a square tile that is the tall one is built once
                if tile != "2x4" or tile_ups not in (tiles["tall"], tiles["square"])]
      if gather:
        packed = {tile: _output_tile(sink, granges, g, tile, lanes) for tile in PACKED_TILES if tile not in AVX512_TILES or lanes >= 16}
        # the window tile only as a weight gradient's whole kx and ky (a 6x6 forward's x and y by 3 each ran 0.9x)
        if "window" in packed and (len(packed["window"]) < 2 or any(f != r.src[0].arg for r, f in packed["window"])): del packed["window"]
        out += [(f"lanes along output dim {granges.index(g)}, {tile} tile, packed", functools.partial(_vector_over_output, sink, granges, g, nid, tile, lanes, True))
                for tile, tile_ups in packed.items() if tile == PACKED_TILES[0] or tile_ups != packed[PACKED_TILES[0]]]  # the same tile built once
    # two dims too short for vectors alone (a 4x4 image) may fit one as a pair
    w = min(_widths(lanes))
    out += [(f"lanes along output dims {k} and {k + 1}", functools.partial(_vector_over_pair, sink, granges, k, nid, lanes)) for k in range(len(granges) - 1)
            if 2 <= granges[k + 1].src[0].arg < w and granges[k].src[0].arg >= 2 and granges[k].src[0].arg * granges[k + 1].src[0].arg % w == 0]
    # with AVX-512, two 8-wide rows (a convolution's 8x8 image) as 16 lanes: each vector of the input two 8-float loads
    # (vectorize._halves), each FMA 16 lanes where lanes along x use 8; the wide tile (2 vectors x 8 output channels)
    # keeps 8 weight pointers where the tall one's 16 ran out of registers (the digits' conv2 forward 577 -> 301 us alone,
    # the tall tile 490: never picked, so not built)
    out += [(f"lanes along output dims {k} and {k + 1}, wide tile", functools.partial(_vector_over_pair, sink, granges, k, nid, lanes, "wide"))
            for k in range(len(granges) - 1)
            if lanes >= 16 and granges[k + 1].src[0].arg == lanes // 2 and granges[k].src[0].arg >= 4 and granges[k].src[0].arg % 4 == 0]
    reduces = [u for u in sink.toposort() if u.op is Ops.REDUCE]
    if not (prune and _strided_only(sink, reduces[0].src[-1])):
      out.append(("lanes along the reduction", functools.partial(_vector_over_reduce, sink, granges, nid, lanes)))
      if lanes >= 16 and (window := window_upcasts(sink, granges)) is not None:  # 18 accumulators: AVX-512's 32 registers, not AVX2's 16
        out.append(("lanes along the reduction, window tile", functools.partial(_vector_over_reduce, sink, granges, nid, lanes, window)))
        if (yx := _rows_mergeable(sink, lanes)) is not None:
          out.append(("lanes along the reduction, window tile, two rows", functools.partial(_vector_over_reduce_rows, sink, granges, nid, lanes, window, *yx)))
  return out

class _RewriteLog:
  """Stands in for the tracer while a plan is tried: keeps the plan's rewrites, to hand to the tracer if it wins."""
  capture_rewrites = True
  def __init__(self): self.calls: list[tuple[str, tuple]] = []
  def rewrite_begin(self, *a) -> None: self.calls.append(("rewrite_begin", a + (time.perf_counter_ns(),)))  # the times it really ran
  def rewrite_match(self, *a) -> None: self.calls.append(("rewrite_match", a))
  def rewrite_end(self, *a) -> None: self.calls.append(("rewrite_end", a + (time.perf_counter_ns(),)))
  def replay(self, t) -> None:
    for fn, a in self.calls: getattr(t, fn)(*a)

def _try(plan: Plan, t) -> tuple[tuple[UOp, list[UOp]] | None, _RewriteLog | None]:
  if t is None or not t.capture_rewrites:
    with untraced_rewrites(): return plan(), None
  tracing.tracer = log = _RewriteLog()  # type: ignore[assignment]
  try: return plan(), log
  finally: tracing.tracer = t

stats = {"searched": 0, "remembered": 0}

def apply_opts(sink: UOp, granges: list[UOp], vector: bool | int = False, max_upcast: int = MAX_UPCAST,
               tried: list[dict] | None = None) -> tuple[UOp, list[UOp]]:
  """vector: the device's renderer has vector types (the CPU's C has, via GCC vector extensions), as lanes_of. max_upcast: copies
  per loop iteration (a GPU thread wants few accumulators: its registers are shared by many threads). Of the candidate
  plans the one whose inner loop costs least per accumulated lane (loop_cost) wins; the choice is kept on disk, so the
  next process builds only the winner. Under VIZ each plan's rewrites are kept aside and only the winner's reach the
  trace, so it shows how the kernel that runs was made."""
  if getenv("NOOPT", 0): return sink, granges  # as lowered: no loop merging, upcasts or vector lanes (docs/engine.md)
  sink = graph_step(sink, merge_reduce_loops, name="opt: merge reduce loops")
  plans = long_reduce_plans(sink, granges, candidate_plans(sink, granges, vector, max_upcast, prune=PRUNE))
  if not plans: return sink, granges
  # tried (for the trace's plans panel): each plan's name, estimated cost and whether it was chosen
  note = tried.append if tried is not None else (lambda _: None)
  if len(plans) == 1:
    note({"name": plans[0][0], "cost": None, "chosen": True, "why": "the only plan"})
    return plans[0][1]()  # type: ignore[return-value]
  key = plan_cache.plan_key(sink, lanes_of(vector), max_upcast)
  t = tracing.tracer
  all_plans = getattr(t, "capture_plans", False)  # VIZ_PLANS=1: every plan is built, so the losers' rewrites can be shown
  if not all_plans and (name := plan_cache.remembered(key)) is not None and (plan := dict(plans).get(name)) is not None and (res := plan()) is not None:
    stats["remembered"] += 1
    note({"name": name, "cost": None, "chosen": True, "why": f"remembered from an earlier search ({len(plans)} plans)"})
    return res
  stats["searched"] += 1
  # untraced, the scalar plan is built last, and not at all where another plan costs less than it can (_scalar_floor):
  # then it can't be the pick. Traced, every plan is built, in order, as the trace shows them
  floor = _scalar_floor(sink, granges, vector, max_upcast) if t is None and plans[0][0] == "scalar" else None
  made: dict[str, tuple] = {}
  for n, plan in (plans[1:] + plans[:1] if floor is not None else plans):
    if n == "scalar" and floor is not None and any(c is not None and c < floor for _, _, c in made.values()):
      made[n] = (None, None, None)
      continue
    res, log = _try(plan, t)
    made[n] = (res, log, None if res is None else plan_cost(n, res[0], sink, granges, vector, max_upcast))
  tries = [(n, made[n][0], made[n][1]) for n, _ in plans]  # in the order the plans were made: min keeps the first of equals
  built = [(n, res, log, made[n][2]) for n, res, log in tries if res is not None]
  name, res, log, _ = min(built, key=lambda b: b[3])
  costs = {n: c for n, _, _, c in built}
  for n, _, _ in tries:
    if n not in costs: note({"name": n, "cost": None, "chosen": False, "why": f"not built: it costs {floor} or more" if n == "scalar" and floor is not None else "does not apply"})
    else: note({"name": n, "cost": round(costs[n], 3), "chosen": n == name, "why": "cheapest" if n == name else ""})
  if log is not None: log.replay(t)
  if all_plans:  # each losing plan's rewrites in a context of its own inside the kernel's, named by the plan
    for n, _, lg in tries:
      if lg is not None and n != name:
        with track_context("plan", n) as pc: lg.replay(t)
        for d in tried or ():
          if d["name"] == n: d["ctx"] = pc.id  # the plans panel links to it
  plan_cache.remember(key, name)
  return res  # type: ignore[return-value]
