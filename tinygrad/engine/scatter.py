"""Scheduling an in-place scatter: ASSIGN(target, dest, vals), what `t[idx] = v` with tensor indices makes of a realized
t (tensor_ops_index._scatter_in_place), writes vals[j] at flat place dest[j] of t's buffer, in order, and leaves the
other places as they are. One kernel, SINK(STORE(t's buffer, dest, vals)) (codegen/scatter.py), so the cost is the
values written, not the places. Like an assign it overwrites the buffer: every other reader of the old value runs first
(ScheduleItem.overwrites), and dest or vals that read the target itself are computed into a buffer of their own first
(numpy takes the right side before it writes)."""
from __future__ import annotations
from tinygrad.uop.ops import UOp, Ops

FUSE_MAX = 4096  # up to this many values the places are computed inside the store loop (one kernel)

def scatter_assign(ctx: list, a: UOp, t: UOp, d: UOp, v: UOp) -> UOp:
  from tinygrad.engine.schedule import ScheduleItem, alias_buffer, view_of, _kernel, is_contiguous_view
  if (target := t.base).op is not Ops.BUFFER: raise RuntimeError(f"scatter target must be a realized tensor, got {target.op}")
  d, v = (_kernel(ctx, a, x) if target in x.toposort() else x for x in (d, v))
  # many places computed by index math (a gather of the places' arange): in a kernel of their own, which the optimizer
  # may vectorize and thread, rather than inside the one-thread store loop (numpy's 360k-value example: 11 -> 3 ms)
  if d.shape[0] >= FUSE_MAX and not is_contiguous_view(d): d = _kernel(ctx, a, d)
  new = alias_buffer(target)
  ctx.append(ScheduleItem("kernel", UOp(Ops.SINK, src=(UOp(Ops.STORE, src=(new, d, v)),)), (new,), target))
  return view_of(new, a.shape)
