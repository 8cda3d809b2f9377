"""From the lazy tensor graph to a list of kernels and copies, each step a named graph_rewrite so a tracer sees it.
Elementwise ops fuse into their consumer; a reduction ends its kernel unless only elementwise ops follow it."""
from __future__ import annotations
import itertools
from dataclasses import dataclass
from tinygrad.dtype import dtypes
from tinygrad.helpers import prod
from tinygrad.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, graph_rewrite

_buffer_num = itertools.count()
def new_buffer(device: str, size: int, dtype) -> UOp:
  return UOp(Ops.BUFFER, dtype, (UOp(Ops.DEVICE, arg=device),), (next(_buffer_num), size))

def is_contiguous_view(u: UOp) -> bool:
  """A BUFFER, or reshapes of a whole BUFFER: nothing to compute."""
  while u.op is Ops.RESHAPE: u = u.src[0]
  return u.op is Ops.BUFFER

def view_of(buf: UOp, shape: tuple[int, ...]) -> UOp: return buf if buf.shape == shape else UOp(Ops.RESHAPE, buf.dtype, (buf,), shape)

@dataclass
class ScheduleItem:
  kind: str           # "kernel" or "copy"
  ast: UOp            # kernel: SINK(STORE(out BUFFER, value)); copy: the COPY with its source a BUFFER
  outputs: tuple[UOp, ...]

# movement ops that do nothing, and DETACH, go before anything is decided
pm_early = PatternMatcher([
  (UPat(Ops.DETACH, src=(UPat.var("x"),)), lambda x: x),
  (UPat(Ops.RESHAPE, src=(UPat(Ops.RESHAPE, src=(UPat.var("x"),)),), name="r"), lambda r, x: x.replace() if x.shape == r.shape else UOp(Ops.RESHAPE, x.dtype, (x,), r.arg)),
  (UPat(GroupOp.Movement - {Ops.FLIP, Ops.PAD, Ops.SHRINK, Ops.PERMUTE}, name="m", src=(UPat.var("x"),)), lambda m, x: x if m.shape == x.shape else None),
  (UPat(Ops.PERMUTE, name="m", src=(UPat.var("x"),)), lambda m, x: x if m.arg == tuple(range(len(m.arg))) else None),
  (UPat(Ops.PAD, name="m", src=(UPat.var("x"),)), lambda m, x: x if all(b == 0 and a == 0 for b, a in m.arg) else None),
  (UPat(Ops.SHRINK, name="m", src=(UPat.var("x"),)), lambda m, x: x if m.shape == x.shape else None),
  (UPat(Ops.FLIP, name="m", src=(UPat.var("x"),)), lambda m, x: x if not any(m.arg) else None),
])

def find_realize(sink: UOp) -> set[UOp]:
  """The nodes that get their own buffer: the targets, copies' sources, and reductions that can't fuse forward."""
  topo = sink.toposort()
  children: dict[UOp, list[UOp]] = {}
  for u in topo:
    for s in u.src: children.setdefault(s, []).append(u)
  realize = {t for t in sink.src if not is_contiguous_view(t) and t.op is not Ops.CONTIGUOUS}
  realize |= {u.src[0] for u in topo if u.op is Ops.COPY and not is_contiguous_view(u.src[0]) and u.src[0].op is not Ops.CONTIGUOUS}
  def fuses_forward(r: UOp) -> bool:
    roots, stack, seen = set(), [r], {r}
    while stack:
      u = stack.pop()
      if u in realize or u.op is Ops.CONTIGUOUS or u in sink.src: roots.add(u); continue
      for c in children.get(u, []):
        if c.op is Ops.SINK: roots.add(u); continue
        if c.op not in GroupOp.Elementwise and c.op not in (Ops.RESHAPE, Ops.CONTIGUOUS): return False
        if c not in seen: seen.add(c); stack.append(c)
    return len(roots) <= 1
  realize |= {u for u in topo if u.op is Ops.REDUCE_AXIS and u not in realize and not fuses_forward(u)}
  return realize

class _Marker:
  def __init__(self, realize: set[UOp]): self.realize, self.done = realize, set()
def _mark(ctx: _Marker, x: UOp) -> UOp | None:
  if x not in ctx.realize or x in ctx.done: return None
  ctx.done.add(x)
  return UOp(Ops.CONTIGUOUS, x.dtype, (x,))
pm_mark = PatternMatcher([(UPat(GroupOp.All - {Ops.SINK, Ops.CONTIGUOUS, Ops.DEVICE}, name="x"), _mark)])

def _kernel(ctx: list[ScheduleItem], c: UOp, x: UOp) -> UOp:
  if is_contiguous_view(x): return x
  out = new_buffer(x.device, prod(x.shape), x.dtype)
  if out.arg[1] > 0: ctx.append(ScheduleItem("kernel", UOp(Ops.SINK, src=(UOp(Ops.STORE, src=(out, x)),)), (out,)))
  return view_of(out, x.shape)
def _copy(ctx: list[ScheduleItem], c: UOp, x: UOp, d: UOp) -> UOp:
  base = x
  while base.op is Ops.RESHAPE: base = base.src[0]
  out = new_buffer(d.arg, base.arg[1], base.dtype)
  ctx.append(ScheduleItem("copy", UOp(Ops.COPY, base.dtype, (base, d)), (out,)))
  return view_of(out, c.shape)
pm_kernels = PatternMatcher([
  (UPat(Ops.CONTIGUOUS, name="c", src=(UPat.var("x"),)), _kernel),
  (UPat(Ops.COPY, name="c", src=(UPat.var("x"), UPat(Ops.DEVICE, name="d"))), _copy),
])

def create_schedule(targets: list[UOp]) -> tuple[list[ScheduleItem], dict[UOp, UOp]]:
  """Returns the kernels and copies in the order to run them, and what each target becomes (a view of a buffer)."""
  sink = UOp(Ops.SINK, src=tuple(targets))
  sink = graph_rewrite(sink, pm_early, name="schedule: remove no-op movement")
  sink = graph_rewrite(sink, pm_mark, ctx=_Marker(find_realize(sink)), bottom_up=True, name="schedule: mark realize points")
  items: list[ScheduleItem] = []
  sink = graph_rewrite(sink, pm_kernels, ctx=items, name="schedule: split into kernels")
  return items, dict(zip(targets, sink.src))

def _to_param(ctx: dict[UOp, UOp], b: UOp) -> UOp | None: return ctx.get(b)
pm_params = PatternMatcher([(UPat(Ops.BUFFER, name="b"), _to_param)])

def kernel_params(item: ScheduleItem) -> tuple[UOp, list[UOp]]:
  """The kernel with its buffers turned into numbered parameters (so equal kernels share one program), and the buffers."""
  bufs = list(item.outputs) + [u for u in item.ast.toposort() if u.op is Ops.BUFFER and u not in item.outputs]
  params = {b: UOp(Ops.DEFINE_GLOBAL, b.dtype, (), (i, b.arg[1])) for i, b in enumerate(bufs)}
  return graph_rewrite(item.ast, pm_params, ctx=params, name="kernel: buffers to params"), bufs
