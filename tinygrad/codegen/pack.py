"""Packing a matmul's B panel: the column panel a row tile reads (k rows of W floats, each row 4 KiB or more from the
next in B) is copied once per panel into a contiguous scratch array private to the thread, and the row tiles read it
from there. Read in B, each step of k is a new page and the same L1 set as the last (the hardware prefetcher stops at
page boundaries, and A's rows share those sets): a 6 x 16 tile ran at 45 GFLOPS on one Zen 2 core; packed, 91.
The copy is a loop of its own over a RANGE of kind "pack": STOREs into a DEFINE_LOCAL, read back through AFTER, which
the linearizer places right after the panel's loop opens (codegen/linearize.py)."""
from __future__ import annotations
from tinygrad.dtype import dtypes
from tinygrad.helpers import prod
from tinygrad.uop.ops import UOp, Ops, graph_rewrite, untraced_rewrites
from tinygrad.uop.symbolic import symbolic, _terms

# the scratch array lives on the thread's stack (OpenMP threads get the process's default stack, 8 MiB here) and should
# stay in L2 (512 KiB a core on Zen 2): k x 16 floats up to 4096 rows
MAX_PACK_BYTES = 256 << 10
MIN_PACK_STRIDE = 1024  # floats between B's rows (4 KiB: a page, the L1 set stride) from which packing pays

def _at(u: UOp, r: UOp, v: int | UOp) -> UOp:
  with untraced_rewrites(): return graph_rewrite(u.substitute({r: v if isinstance(v, UOp) else UOp.const(dtypes.int32, v)}), symbolic)

def panel_loads(sink: UOp, R: UOp, rows: list[UOp], panel: UOp) -> list[tuple[UOp, int, int]] | None:
  """B's vector loads as (load, offset in the panel, stride along R), when every load that moves with R but not with
  the rows is a contiguous vector read of R * stride + (the panel's columns), stride at least MIN_PACK_STRIDE; else None."""
  out = []
  for u in sink.toposort():
    if u.op is not Ops.LOAD or u.src[0].op is not Ops.DEFINE_GLOBAL or R not in u.src[1].toposort(): continue
    if any(r in u.src[1].toposort() for r in rows): continue
    if len(u.src) > 2 or u.dtype.count == 1: return None
    with_r = [t for t in _terms(u.src[1]) if R in t.toposort()]
    if len(with_r) != 1 or (t := with_r[0]).op is not Ops.MUL or t.src[0] is not R or t.src[1].op is not Ops.CONST: return None
    if t.src[1].arg < MIN_PACK_STRIDE or (off := _at(_at(u.src[1], R, 0), panel, 0)).op is not Ops.CONST: return None
    out.append((u, off.arg, t.src[1].arg))
  return out or None

def pack_panel(sink: UOp, R: UOp, loads: list[tuple[UOp, int, int]], width: int, nid: int) -> UOp:
  """Each B load at R * stride + c (c the column within the panel) reads P[R * width + c] instead, P filled by a loop
  over a new range K of R's length: P[K * width + c] = B[the same load at R = K]."""
  K = R.src[0].arg
  P = UOp(Ops.DEFINE_LOCAL, dtypes.float32, (), (0, K * width))
  Kp = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, K),), (nid, "pack"))
  stores = tuple(UOp(Ops.STORE, dtypes.void, (P, Kp * width + c, ld.substitute({R: Kp}))) for ld, c, _ in loads)
  packed = UOp(Ops.AFTER, dtypes.float32, (P, *stores))
  return sink.substitute({ld: UOp(Ops.LOAD, ld.dtype, (packed, R * width + c)) for ld, c, _ in loads})

def reduce_panel_loads(sink: UOp, rngs: tuple[UOp, ...], rows: list[UOp]) -> list[UOp] | None:
  """For a plan with lanes along the reduction (a convolution's weight gradient): the vector loads that the inner
  global loops (rows) don't move and that some reduce range moves by a page or more per step (the output gradient,
  8 KiB apart per batch element), each index a sum of reduce ranges times constants and what the outer loop moves;
  None when there are none, or another load moves with those ranges in another way."""
  out = []
  for u in sink.toposort():
    if u.op is not Ops.LOAD or u.src[0].op is not Ops.DEFINE_GLOBAL or not any(r in u.src[1].toposort() for r in rngs): continue
    if any(r in u.src[1].toposort() for r in rows): continue
    if len(u.src) > 2 or u.dtype.count == 1: return None
    strides = []
    for t in _terms(u.src[1]):
      if t in rngs: strides.append(1)
      elif any(r in t.toposort() for r in rngs):
        if t.op is not Ops.MUL or t.src[0] not in rngs or t.src[1].op is not Ops.CONST: return None
        strides.append(t.src[1].arg)
    if max(strides) < MIN_PACK_STRIDE: return None
    out.append(u)
  if not out or len({u.dtype for u in out}) != 1: return None
  return out

def pack_reduce(sink: UOp, rngs: tuple[UOp, ...], loads: list[UOp], nid: int) -> UOp:
  """Each such load (slot k of n, vectors of w lanes) reads P[flat * n * w + k * w] instead, flat the reduce step
  (r0 * len(r1) + r1 ...); P filled by loops over new ranges of the reduce ranges' lengths, inside the outer loop."""
  w, n = loads[0].dtype.count, len(loads)
  Ks = [UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, r.src[0].arg),), (nid + i, "pack")) for i, r in enumerate(rngs)]
  def flat(rs) -> UOp:
    f = UOp.const(dtypes.int32, 0)
    for r, size in zip(rs, [x.src[0].arg for x in rngs]): f = f * size + r
    return f
  P = UOp(Ops.DEFINE_LOCAL, dtypes.float32, (), (0, prod(r.src[0].arg for r in rngs) * n * w))
  stores = tuple(UOp(Ops.STORE, dtypes.void, (P, flat(Ks) * (n * w) + k * w, ld.substitute(dict(zip(rngs, Ks))))) for k, ld in enumerate(loads))
  packed = UOp(Ops.AFTER, dtypes.float32, (P, *stores))
  return sink.substitute({ld: UOp(Ops.LOAD, ld.dtype, (packed, flat(rngs) * (n * w) + k * w)) for k, ld in enumerate(loads)})

def gathered_loads(sink: UOp, rows: list[UOp], rngs: tuple[UOp, ...]) -> list[UOp] | None:
  """For a plan with lanes along an output dim that some operand is strided along (a convolution's weights with lanes
  along the output channel, 288 floats apart): its vectors gathered lane by lane (a VECTORIZE of ungated float loads of
  one buffer) that the reduction moves and the other global loops (rows) don't; None when there are none."""
  out = []
  for u in sink.toposort():
    if u.op is not Ops.VECTORIZE or u.dtype.count == 1 or u.dtype.scalar != dtypes.float32: continue
    if not all(s.op is Ops.LOAD and len(s.src) == 2 and s.src[0] is u.src[0].src[0] for s in u.src) or u.src[0].src[0].op is not Ops.DEFINE_GLOBAL: continue
    deps = {x for s in u.src for x in s.src[1].toposort()}
    if any(r in deps for r in rows) or not any(r in deps for r in rngs): continue
    out.append(u)
  return out or None
