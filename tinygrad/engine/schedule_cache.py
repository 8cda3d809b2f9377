"""A repeated schedule comes from a cache: the same lazy graph over other buffers (the next step of a training loop
without TinyJit, the next batch of an evaluation) is scheduled once. The key is the graph with its buffers replaced
by numbered placeholders; a hit gives the same kernels again with this call's buffers, fresh buffers for what the
schedule creates, and fresh aliases for in-place assigns. The template keeps no buffer, so it keeps no memory alive.
SCHEDULE_CACHE=0 turns it off. Under VIZ a graph's schedule appears in the rewrite explorer the first time it is made;
a repeat is a "(cached)" span on the timeline."""
from __future__ import annotations
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable
from tinygrad.helpers import getenv
from tinygrad.uop.ops import UOp, Ops
from tinygrad.engine.schedule import ScheduleItem, create_schedule, new_buffer, view_of, alias_buffer

CACHE_SIZE = 64  # distinct graphs kept (a training step, an eval step, a few one-off realizes)
ENABLED = bool(getenv("SCHEDULE_CACHE", 1))
Ref = tuple[str, int]  # ("leaf", i): the graph's i-th buffer; ("made", j): the j-th buffer the schedule creates

@dataclass(frozen=True)
class _Item:
  kind: str
  params_ast: UOp | None      # kernels: the kernel with numbered parameters (holds no buffer)
  bufs: tuple[Ref, ...]       # kernels: the parameters' buffers; copies: the source
  outputs: tuple[Ref, ...]
  overwrites: Ref | None
  copy_to: UOp | None         # copies: the DEVICE

@dataclass(frozen=True)
class _Template:
  made: tuple[tuple[Any, ...], ...]  # ("new", device, size, dtype) or ("alias", leaf index) per buffer the schedule creates
  items: tuple[_Item, ...]
  # per target: the buffer it becomes a view of and the view's shape; for a multi-device one ("multi", axis, those per device)
  becomes: tuple[tuple[Any, ...], ...]

_cache: OrderedDict[UOp, _Template] = OrderedDict()
stats = {"hits": 0, "misses": 0}

def _base(u: UOp) -> UOp:
  while u.op is Ops.RESHAPE: u = u.src[0]
  return u

def _template(items: list[ScheduleItem], becomes: dict[UOp, UOp], leaves: list[UOp], targets: list[UOp]) -> _Template | None:
  """The schedule with every buffer as a reference, or None when something in it is not a plain buffer."""
  ref: dict[UOp, Ref] = {b: ("leaf", i) for i, b in enumerate(leaves)}
  made: list[tuple[Any, ...]] = []
  out: list[_Item] = []
  for it in items:
    for o in it.outputs:
      if o in ref: continue
      if it.overwrites is not None:
        r = ref.get(it.overwrites, ("made", -1))
        if r[0] == "made" and r[1] >= 0 and made[r[1]][0] == "alias": r = ("leaf", made[r[1]][1])  # a chain's next write (t += 1; t *= 2)
        if r[0] != "leaf": return None
        made.append(("alias", r[1]))
      else: made.append(("new", o.src[0].arg, o.arg[1], o.dtype))
      ref[o] = ("made", len(made) - 1)
    srcs = it.bufs if it.kind == "kernel" else [_base(it.ast.src[0])]
    if srcs is None or any(b not in ref for b in srcs): return None
    out.append(_Item(it.kind, it.params_ast if it.kind == "kernel" else None, tuple(ref[b] for b in srcs), tuple(ref[o] for o in it.outputs),
                     ref[it.overwrites] if it.overwrites is not None else None, it.ast.src[1] if it.kind == "copy" else None))
  views: list = []
  for t in targets:
    v = becomes[t]
    pieces = []
    for s in (v.src if v.op is Ops.MULTI else (v,)):  # a multi-device target: a view per device, and its axis
      if (b := _base(s)).op is not Ops.BUFFER or b not in ref: return None
      pieces.append((ref[b], s.shape))
    views.append(("multi", v.arg, tuple(pieces)) if v.op is Ops.MULTI else pieces[0])
  return _Template(tuple(made), tuple(out), tuple(views))

def _instantiate(tpl: _Template, leaves: list[UOp], targets: list[UOp]) -> tuple[list[ScheduleItem], dict[UOp, UOp]]:
  made = [new_buffer(m[1], m[2], m[3]) if m[0] == "new" else alias_buffer(leaves[m[1]]) for m in tpl.made]
  def get(r: Ref) -> UOp: return leaves[r[1]] if r[0] == "leaf" else made[r[1]]
  items = []
  for it in tpl.items:
    outs = tuple(get(r) for r in it.outputs)
    if it.kind == "kernel":  # no buffer-level ast to give: the parameter form is what runs
      items.append(ScheduleItem("kernel", it.params_ast, outs, get(it.overwrites) if it.overwrites else None, it.params_ast, [get(r) for r in it.bufs]))
    else:
      src = get(it.bufs[0])
      items.append(ScheduleItem("copy", UOp(Ops.COPY, src.dtype, (src, it.copy_to)), outs))
  def view(b: tuple) -> UOp:
    if b[0] != "multi": return view_of(get(b[0]), b[1])
    srcs = tuple(view_of(get(r), shape) for r, shape in b[2])
    return UOp(Ops.MULTI, srcs[0].dtype, srcs, b[1])
  return items, {t: view(b) for t, b in zip(targets, tpl.becomes)}

def lookup(targets: list[UOp], topo: list[UOp] | None = None) -> tuple[UOp | None, list[UOp], tuple[list[ScheduleItem], dict[UOp, UOp]] | None]:
  """(key, the graph's buffers, the schedule if this graph was scheduled before, else None). topo: a list the targets'
  SINK's toposort is appended to (create_schedule reads it on a miss)."""
  if not ENABLED: return None, [], None
  sink = UOp(Ops.SINK, src=tuple(targets))
  # the key: each BUFFER a numbered placeholder, the buffers numbered in walk order (one walk finds them and builds it)
  walk = sink.toposort()
  if topo is not None: topo.extend(walk)
  leaves = [u for u in walk if u.op is Ops.BUFFER]
  key = sink.substitute({b: UOp(Ops.BUFFER, b.dtype, b.src, ("slot", i, b.arg[1])) for i, b in enumerate(leaves)}, walk)
  if (tpl := _cache.get(key)) is None:
    stats["misses"] += 1
    return key, leaves, None
  _cache.move_to_end(key)
  stats["hits"] += 1
  return key, leaves, _instantiate(tpl, leaves, targets)

def store(key: UOp | None, leaves: list[UOp], targets: list[UOp], items: list[ScheduleItem], becomes: dict[UOp, UOp]) -> None:
  if key is None or (tpl := _template(items, becomes, leaves, targets)) is None: return
  _cache[key] = tpl
  if len(_cache) > CACHE_SIZE: _cache.popitem(last=False)

Schedule = tuple[list[ScheduleItem], dict[UOp, UOp]]

def cached_schedule(targets: list[UOp], make: Callable[..., Schedule] = create_schedule) -> tuple[list[ScheduleItem], dict[UOp, UOp], bool]:
  """make(targets, topo) (create_schedule), served from the cache when this graph (up to which buffers it reads) was
  scheduled before; the last value says whether it was. topo: the targets' SINK's toposort, the lookup's walk (None
  with the cache off)."""
  topo: list[UOp] = []
  key, leaves, hit = lookup(targets, topo)
  if hit is not None: return *hit, True
  items, becomes = make(targets, topo or None)
  store(key, leaves, targets, items, becomes)
  return items, becomes, False
