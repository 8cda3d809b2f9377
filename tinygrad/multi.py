"""Multi-device tensors. A sharded or replicated tensor's graph holds MULTI nodes: one UOp per device, arg = the axis
it is split along (None: every device holds the whole value). Ops on them are written once, on the logical tensor;
`pm_multi` lowers that graph to one graph per device before scheduling: an op on MULTIs becomes a MULTI of the op
on each device's piece, and an op across the sharded axis (a reduction over it) combines each device's partial
result with copies between devices (an all-reduce). Where an op would mix items of different shards (a pad or shrink
of the sharded axis, a reshape that moves items between shards) the pieces are gathered first: every device then
holds the whole value and the result is replicated."""
from __future__ import annotations
from tinygrad.helpers import prod
from tinygrad.dtype import dtypes
from tinygrad.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, graph_rewrite

def multi(srcs: list[UOp] | tuple[UOp, ...], axis: int | None) -> UOp: return UOp(Ops.MULTI, srcs[0].dtype, tuple(srcs), axis)

def _device(d: str) -> UOp: return UOp(Ops.DEVICE, arg=d)
def _copy(x: UOp, d: str) -> UOp: return x if x.device == d else UOp(Ops.COPY, x.dtype, (x, _device(d)))

class ShardError(ValueError, RuntimeError):
  """A shape that doesn't split into equal shards: a ValueError, and the RuntimeError tinygrad raises."""

def check_divides(shape: tuple[int, ...], axis: int, n: int) -> None:
  if shape[axis] % n != 0:
    raise ShardError(f"cannot shard axis {axis} of shape {shape} over {n} devices: {shape[axis]} does not divide by {n} (shards must be of equal size)")

def shard_piece(x: UOp, axis: int, i: int, n: int) -> UOp:
  """Device i's part of a whole value x split in n along axis."""
  sz = x.shape[axis] // n
  return UOp(Ops.SHRINK, x.dtype, (x,), tuple((i * sz, (i + 1) * sz) if a == axis else (0, s) for a, s in enumerate(x.shape)))

def _cat(pieces: list[UOp], axis: int) -> UOp:
  """The pieces joined along axis: each padded with zeros to the whole length, then summed (tinygrad's cat)."""
  total, off, out = sum(p.shape[axis] for p in pieces), 0, None
  for p in pieces:
    padded = UOp(Ops.PAD, p.dtype, (p,), tuple((off, total - off - p.shape[axis]) if a == axis else (0, 0) for a in range(len(p.shape))))
    out = padded if out is None else UOp(Ops.OR if p.dtype == dtypes.bool else Ops.ADD, p.dtype, (out, padded))
    off += p.shape[axis]
  return out  # type: ignore[return-value]

def gather_to(m: UOp, d: str) -> UOp:
  """The whole value of MULTI m on device d."""
  if m.arg is None: return next((s for s in m.src if s.device == d), None) or _copy(m.src[0], d)
  return _cat([_copy(s, d) for s in m.src], m.arg)

def to_axis(m: UOp, axis: int | None) -> UOp:
  """MULTI m split along axis instead (None: replicated): a shrink of what each device holds, or a gather first."""
  if m.arg == axis: return m
  full = m if m.arg is None else multi([gather_to(m, s.device) for s in m.src], None)
  if axis is None: return full
  check_divides(full.shape, axis, len(m.src))
  return multi([shard_piece(s, axis, i, len(m.src)) for i, s in enumerate(full.src)], axis)

def _same_devices(root: UOp, ms: list[UOp]) -> None:
  if len({m.device for m in ms}) > 1:
    raise ValueError(f"{root.op.name} of tensors on different devices: {' and '.join(str(m.device) for m in ms)}; move them with .to() or .shard() first")

# ----- the rules

def leaf_multi(x: UOp, d: UOp) -> UOp | None:
  """A constant or arange made on a device tuple: one on each device."""
  if not isinstance(d.arg, tuple): return None
  return multi([x.replace(src=(_device(di),)) for di in d.arg], None)

def copy_multi(c: UOp, x: UOp, d: UOp) -> UOp | None:
  if x.op is Ops.MULTI:
    if isinstance(d.arg, str): return gather_to(x, d.arg)
    return x if x.device == d.arg else multi([gather_to(x, di) for di in d.arg], None)
  if isinstance(d.arg, tuple): return multi([_copy(x, di) for di in d.arg], None)  # broadcast: a copy on every device
  return None

def alu_multi(x: UOp) -> UOp | None:
  if not any(s.op is Ops.MULTI for s in x.src): return None
  if not all(s.op is Ops.MULTI for s in x.src):
    single = next(s for s in x.src if s.op is not Ops.MULTI)
    raise ValueError(f"{x.op.name} of a tensor on {single.device} with a multi-device tensor on {next(s for s in x.src if s.op is Ops.MULTI).device}: "
                     "move it with .to(devices) or .shard(devices) first")
  _same_devices(x, list(x.src))
  axis = next((s.arg for s in x.src if s.arg is not None), None)
  srcs = [to_axis(s, axis) for s in x.src]
  return multi([UOp(x.op, x.dtype, tuple(s.src[i] for s in srcs), x.arg) for i in range(len(srcs[0].src))], axis)

def per_device(x: UOp, m: UOp) -> UOp:
  """An op that does the same on each device's piece (contiguous, detach)."""
  return multi([UOp(x.op, x.dtype, (s,) + x.src[1:], x.arg) for s in m.src], m.arg)

def reduce_multi(r: UOp, m: UOp) -> UOp:
  op, axes = r.arg
  partial = [UOp(Ops.REDUCE_AXIS, r.dtype, (s,), r.arg) for s in m.src]
  if m.arg is None or m.arg not in axes: return multi(partial, m.arg)
  # across the sharded axis: each device sums (maxes, ...) every device's partial, in the same order everywhere, so
  # the copies agree to the bit
  def combine(d: str) -> UOp:
    out = None
    for p in partial: out = _copy(p, d) if out is None else UOp(op, r.dtype, (out, _copy(p, d)))
    return out  # type: ignore[return-value]
  return multi([combine(p.device) for p in partial], None)

def _local(shape: tuple[int, ...], axis: int | None, n: int) -> tuple[int, ...]:
  return tuple(s // n if a == axis else s for a, s in enumerate(shape))

def reshape_multi(x: UOp, m: UOp) -> UOp:
  n, ax, new = len(m.src), m.arg, tuple(x.arg)
  if ax is not None:
    # the sharded axis survives when the dims before it stay whole and it still divides into n pieces
    before, acc = prod(m.shape[:ax]), [1]
    for s in new: acc.append(acc[-1] * s)
    nax = len(acc) - 1 - acc[::-1].index(before) if before in acc else None
    if nax is None or nax == len(new) or new[nax] % n: return reshape_multi(x, to_axis(m, None))
    ax = nax
  return multi([UOp(Ops.RESHAPE, x.dtype, (s,), _local(new, ax, n)) for s in m.src], ax)

def expand_multi(x: UOp, m: UOp) -> UOp:
  return multi([UOp(Ops.EXPAND, x.dtype, (s,), _local(tuple(x.arg), m.arg, len(m.src))) for s in m.src], m.arg)

def permute_multi(x: UOp, m: UOp) -> UOp:
  return multi([UOp(Ops.PERMUTE, x.dtype, (s,), x.arg) for s in m.src], None if m.arg is None else tuple(x.arg).index(m.arg))

def pad_multi(x: UOp, m: UOp) -> UOp:
  if m.arg is not None and tuple(x.arg[m.arg]) != (0, 0): m = to_axis(m, None)
  return multi([UOp(Ops.PAD, x.dtype, (s,), x.arg) for s in m.src], m.arg)

def shrink_multi(x: UOp, m: UOp) -> UOp:
  ax = m.arg
  if ax is not None and tuple(x.arg[ax]) != (0, m.shape[ax]): m, ax = to_axis(m, None), None
  arg = tuple((0, m.src[0].shape[a]) if a == ax else be for a, be in enumerate(x.arg))
  return multi([UOp(Ops.SHRINK, x.dtype, (s,), arg) for s in m.src], ax)

def flip_multi(x: UOp, m: UOp) -> UOp:
  if m.arg is not None and x.arg[m.arg]: m = to_axis(m, None)
  return multi([UOp(Ops.FLIP, x.dtype, (s,), x.arg) for s in m.src], m.arg)

def assign_multi(a: UOp, t: UOp, v: UOp) -> UOp:
  _same_devices(a, [t, v])
  v = to_axis(v, t.arg)
  return multi([UOp(Ops.ASSIGN, a.dtype, (ts, vs)) for ts, vs in zip(t.src, v.src)], t.arg)

def mselect_multi(s: UOp, m: UOp) -> UOp: return to_axis(m, s.arg[1]).src[s.arg[0]]

def unsupported(x: UOp) -> UOp | None:
  if any(s.op is Ops.MULTI for s in x.src): raise NotImplementedError(f"{x.op.name} of a multi-device tensor is not supported")
  return None

M = UPat(Ops.MULTI, name="m")
pm_multi = PatternMatcher([
  (UPat((Ops.CONST, Ops.IOTA), src=(UPat(Ops.DEVICE, name="d"),), name="x"), leaf_multi),
  (UPat(Ops.COPY, src=(UPat.var("x"), UPat(Ops.DEVICE, name="d")), name="c"), copy_multi),
  (UPat(GroupOp.Elementwise, name="x"), alu_multi),
  (UPat(Ops.REDUCE_AXIS, src=(M,), name="r"), reduce_multi),
  (UPat(Ops.RESHAPE, src=(M,), name="x"), reshape_multi),
  (UPat(Ops.EXPAND, src=(M,), name="x"), expand_multi),
  (UPat(Ops.PERMUTE, src=(M,), name="x"), permute_multi),
  (UPat(Ops.PAD, src=(M,), name="x"), pad_multi),
  (UPat(Ops.SHRINK, src=(M,), name="x"), shrink_multi),
  (UPat(Ops.FLIP, src=(M,), name="x"), flip_multi),
  (UPat((Ops.CONTIGUOUS, Ops.DETACH), src=(M,), name="x"), per_device),
  (UPat(Ops.ASSIGN, src=(UPat(Ops.MULTI, name="t"), UPat(Ops.MULTI, name="v")), name="a"), assign_multi),
  (UPat(Ops.MSELECT, src=(M,), name="s"), mselect_multi),
  (UPat(GroupOp.All - {Ops.SINK, Ops.MULTI}, name="x"), unsupported),
])

def allreduce(x: UOp, op: Ops, device) -> UOp:
  """x's pieces combined elementwise with op on every device (naive: each device copies in every piece, in device
  order, so all devices get the same bits); split as x is."""
  if op not in (Ops.ADD, Ops.MUL, Ops.MAX): raise ValueError(f"allreduce: op must be Ops.ADD, Ops.MUL or Ops.MAX, got {op}")
  if not isinstance(x.device, tuple): raise ValueError(f"allreduce of a value on one device ({x.device}): shard it first")
  if tuple(device) != x.device: raise ValueError(f"allreduce over {tuple(device)}, but the value is on {x.device}")
  m = lower_multi(UOp(Ops.SINK, src=(x,))).src[0]
  def combine(d: str) -> UOp:
    out = None
    for p in m.src: out = _copy(p, d) if out is None else UOp(op, p.dtype, (out, _copy(p, d)))
    return out  # type: ignore[return-value]
  return multi([combine(p.device) for p in m.src], m.arg)

def shard_axis(x: UOp) -> int | None:
  """The axis a multi-device value is split along (None: each device holds a copy), read off its lowered graph."""
  return lower_multi(UOp(Ops.SINK, src=(x,))).src[0].arg

def reshard(x: UOp, axis: int | None) -> UOp:
  """Multi-device value x split along axis instead: each device takes its piece (MSELECT) of the whole."""
  if axis is not None: check_divides(x.shape, axis, len(x.device))
  return multi([UOp(Ops.MSELECT, x.dtype, (x,), (i, axis)) for i in range(len(x.device))], axis)

def is_multi_node(u: UOp) -> bool: return u.op is Ops.MULTI or u.op is Ops.MSELECT or (u.op is Ops.DEVICE and isinstance(u.arg, tuple))
def has_multi(sink: UOp) -> bool: return any(is_multi_node(u) for u in sink.toposort())

def lower_multi(sink: UOp) -> UOp:
  """The graph with every multi-device value a MULTI of single-device graphs (only at the roots)."""
  return graph_rewrite(sink, pm_multi, name="multi: one graph per device")
