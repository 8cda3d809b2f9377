"""Big reductions with a small output in two kernels (tinygrad's split_reduceop, with thresholds for a CPU): a first
kernel of partial results over a new output dim, one per chunk of the reduction, that the CPU's threads share and
whose copies are independent accumulators (codegen/long_reduce.py), and a second, small kernel that combines the
partials. As one kernel, a sum over 16M floats ran on one core with one vector accumulator, each add waiting for the
one before (docs/performance.md, "Big reductions in two kernels"). The split is fixed by the shapes, so every run sums
in the same order; a float sum's order differs from the one-kernel loop's (allclose, not bit for bit).
SPLIT_REDUCEOP=0 turns it off; REDUCEOP_SPLIT_THRESHOLD (elements reduced into each output) and REDUCEOP_SPLIT_SIZE
(log2 of the most partials in all) as tinygrad names them, with CPU defaults."""
from __future__ import annotations
from tinygrad.dtype import dtypes
from tinygrad.helpers import SPLIT_REDUCEOP, getenv, prod
from tinygrad.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, graph_rewrite
from tinygrad.engine.schedule import MAX_NESTED_REDUCE

SPLIT_THRESHOLD = 1 << 21  # elements per output: below it one loop costs less than a second kernel (~50 us a realize here)
MAX_OUTPUTS = 64           # more outputs than this give the threads and the accumulators work without a split
MAX_PARTS, MIN_PARTS = 256, 8

def _threshold() -> int: return getenv("REDUCEOP_SPLIT_THRESHOLD", SPLIT_THRESHOLD)

VECTOR_OPS = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.FDIV, Ops.MAX, Ops.WHERE, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ}  # codegen/vectorize.py's

REALIZED = (Ops.BUFFER, Ops.CONTIGUOUS, Ops.COPY, Ops.ASSIGN)  # a buffer by the time the first kernel reads it

def _float_vector_input(x: UOp) -> bool:
  """x, what the first kernel reduces, is float32 math the vector plans take (codegen/vectorize.py: float32 ops, loads
  and consts, views of them; a big reduction's result is a kernel of its own). Anything else (an int or bool sum, a cast
  from half) stays one kernel: with a loop over its partials GCC no longer vectorizes its scalar loop (the index,
  under -fwrapv, may wrap: an int32 sum of 16M ran 7 -> 13 ms split)."""
  stack, seen = [x], set()
  while stack:
    if (u := stack.pop()) in seen: continue
    seen.add(u)
    if u.op is Ops.REDUCE_AXIS and prod(u.src[0].shape) // prod(u.shape) > MAX_NESTED_REDUCE: continue
    if u.op in REALIZED or u.op is Ops.CONST: ok = u.dtype == dtypes.float32 or u.op is Ops.CONST
    elif u.op in GroupOp.Movement or u.op is Ops.REDUCE_AXIS: ok = True
    else: ok = u.op in VECTOR_OPS and (u.dtype == dtypes.float32 or u.op in GroupOp.Comparison and u.src[0].dtype == dtypes.float32)
    if not ok: return False
    if u.op not in REALIZED: stack.extend(s for s in u.src if s.op is not Ops.DEVICE)
  return True

def splittable(r: UOp) -> bool:
  """A reduction worth two kernels: on a CPU, a float32 sum or max (_float_vector_input), few outputs, each the
  reduction of REDUCEOP_SPLIT_THRESHOLD elements or more."""
  return _big(r) and _float_vector_input(r.src[0])
def _big(r: UOp) -> bool:
  """splittable's tests of the reduction itself (a float32 sum or max on a CPU, few outputs, many elements each)."""
  if not SPLIT_REDUCEOP or r.arg[0] not in (Ops.ADD, Ops.MAX) or r.dtype != dtypes.float32: return False
  if not isinstance(dev := r.device, str) or not dev.startswith("CPU"): return False
  out = prod(r.shape)
  return 0 < out <= MAX_OUTPUTS and prod(r.src[0].shape) // out >= _threshold()

def _split(ctx: set[UOp], r: UOp) -> UOp | None:
  if r in ctx or not splittable(r): return None
  x, (op, axes) = r.src[0], r.arg
  most = min(MAX_PARTS, 2 ** getenv("REDUCEOP_SPLIT_SIZE", 22) // prod(r.shape))
  # the first reduced dim with a divisor in MIN_PARTS..most, the largest; where one divides, a multiple of 8 whose
  # chunk is one too (the threads and the first kernel's 4 accumulators share the partials evenly, each chunk whole
  # vectors): each partial a contiguous chunk of that dim
  found = [(a, d) for a in axes for d in range(most, MIN_PARTS - 1, -1) if x.shape[a] % d == 0]
  if not found: return None
  first = [f for f in found if f[0] == found[0][0]]
  a, d = next((f for f in first if f[1] % 8 == 0 and x.shape[f[0]] // f[1] % 8 == 0), None) or next((f for f in first if f[1] % 8 == 0), first[0])
  shape = x.shape[:a] + (d, x.shape[a] // d) + x.shape[a + 1:]
  inner = UOp(Ops.REDUCE_AXIS, r.dtype, (UOp(Ops.RESHAPE, x.dtype, (x,), shape),), (op, tuple(b if b < a else b + 1 for b in axes)))
  ctx.add(inner)  # its partials are what the split made: not split again
  parts = UOp(Ops.CONTIGUOUS, r.dtype, (inner,))
  return UOp(Ops.RESHAPE, r.dtype, (UOp(Ops.REDUCE_AXIS, r.dtype, (parts,), (op, (a,))),), r.shape)

pm_split_reduce = PatternMatcher([(UPat(Ops.REDUCE_AXIS, name="r"), _split)])

def split_reductions(sink: UOp, topo: list[UOp] | None = None, before: list[UOp] | None = None) -> UOp:
  """The schedule's graph with each big reduction split (a rewrite only where there is one: other schedules' traces
  are as before). topo: sink's toposort where the caller has it; before: the toposort of a graph sink was made from by
  rewrites that keep each reduction's shape, dtype and device (create_schedule's first ones): no big one there, none here."""
  if before is not None and not any(u.op is Ops.REDUCE_AXIS and _big(u) for u in before): return sink
  if not any(u.op is Ops.REDUCE_AXIS and splittable(u) for u in (topo if topo is not None else sink.toposort())): return sink
  return graph_rewrite(sink, pm_split_reduce, ctx=set(), name="schedule: split big reductions")
