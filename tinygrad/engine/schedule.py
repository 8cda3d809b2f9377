"""From the lazy tensor graph to a list of kernels and copies, each step a named graph_rewrite so a tracer sees it.
Elementwise ops fuse into their consumer; a reduction ends its kernel unless only elementwise ops follow it."""
from __future__ import annotations
import itertools, os, sys
from dataclasses import dataclass
from typing import Literal
from tinygrad.helpers import prod
from tinygrad.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, graph_rewrite, traced
from tinygrad.engine.scatter import scatter_assign

_buffer_num = itertools.count()
FILL = "fill"  # the arg of an ASSIGN that gives a new buffer its first value (Tensor._fill_later)
MAX_NESTED_REDUCE = 8  # the largest reduction that may run inside its reader's loop instead of ending a kernel
def new_buffer(device: str, size: int, dtype) -> UOp:
  return UOp(Ops.BUFFER, dtype, (UOp(Ops.DEVICE, arg=device),), (next(_buffer_num), size))

def alias_buffer(target: UOp) -> UOp:
  """A new BUFFER UOp on target's storage: what an in-place assign writes, so readers of the old value and of the new
  one stay distinct UOps."""
  from tinygrad.device import buffers
  from tinygrad.engine.realize import buffer_for
  new = UOp(Ops.BUFFER, target.dtype, target.src, (next(_buffer_num), target.arg[1]))
  buffers[new] = buffer_for(target)
  return new

def is_contiguous_view(u: UOp) -> bool:
  """A BUFFER, or reshapes of a whole BUFFER (on each device, for a multi-device tensor): nothing to compute."""
  if u.op is Ops.MULTI: return all(is_contiguous_view(s) for s in u.src)
  while u.op is Ops.RESHAPE: u = u.src[0]
  return u.op in (Ops.BUFFER, Ops.PARAM)  # a PARAM: an input of a @function body, a buffer's view once inlined

def view_of(buf: UOp, shape: tuple[int, ...]) -> UOp: return buf if buf.shape == shape else UOp(Ops.RESHAPE, buf.dtype, (buf,), shape)

ItemKind = Literal["kernel", "copy"]

@dataclass
class ScheduleItem:
  kind: ItemKind      # a kernel to compile and run, or a copy between devices
  ast: UOp            # kernel: SINK(STORE(out BUFFER, value)); copy: the COPY with its source a BUFFER
  outputs: tuple[UOp, ...]
  overwrites: UOp | None = None  # for an assign: the BUFFER whose storage the output reuses
  params_ast: UOp | None = None  # the kernel with numbered parameters instead of buffers (see kernel_params)
  bufs: list[UOp] | None = None  # the buffers those parameters stand for

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

_CONST_OPS = GroupOp.Elementwise | GroupOp.Movement | {Ops.CONST, Ops.DEVICE, Ops.DEFINE_VAR, Ops.BIND}
def _own_constants(s: UOp) -> UOp | None:
  """A target computed from constants alone (Tensor.ones(32)) gets its buffer at the sink, not as the node: the node is
  hash-consed, and another reader of the same constant (a pending assign of Tensor.ones(32) into a weight, another
  target's graph) computes it itself instead of copying this target's buffer (tinygrad never realizes a constant)."""
  new = tuple(UOp(Ops.CONTIGUOUS, t.dtype, (t,)) if _is_constant(t) else t for t in s.src)
  return None if all(a is b for a, b in zip(new, s.src)) else s.replace(src=new)
def _is_constant(t: UOp) -> bool:
  seen, stack = {t}, [t]
  while stack:  # stops at the first node that is not a constant's (nearly every target: a buffer, a kernel's output)
    if (u := stack.pop()).op not in _CONST_OPS: return False
    for s in u.src:
      if s not in seen: seen.add(s); stack.append(s)
  return True
pm_own_constants = PatternMatcher([(UPat(Ops.SINK, name="s"), _own_constants)])

def _sums_more_than_it_outputs(r: UOp) -> bool:
  """A reduction that sums at least as many elements as it outputs (a channel's sum over batch and image); False where
  a size is symbolic (a bound variable's)."""
  red, out = [r.src[0].shape[a] for a in r.arg[1]], list(r.shape)
  return all(isinstance(d, int) for d in red + out) and prod(red) >= prod(out)

def find_realize(sink: UOp, topo: list[UOp] | None = None) -> set[UOp]:
  """The nodes that get their own buffer: the targets, copies' sources, and reductions that can't fuse forward.
  topo: sink's toposort, where the caller has it."""
  if topo is None: topo = sink.toposort()
  children: dict[UOp, list[UOp]] = {}
  for u in topo:
    for s in u.src: children.setdefault(s, []).append(u)
  roots = (Ops.CONTIGUOUS, Ops.ASSIGN)  # nodes that already are their own kernel
  realize = {t for t in sink.src if not is_contiguous_view(t) and t.op not in roots}
  realize |= {u.src[0] for u in topo if u.op is Ops.COPY and not is_contiguous_view(u.src[0]) and u.src[0].op not in roots}
  fusable = GroupOp.Elementwise | {Ops.RESHAPE}
  # a reduction's result read through a movement op or by another reduction is materialized right there: at the last
  # elementwise node before that consumer (so a conv's bias and relu fuse into the conv, not into what reads it)
  has_reduce: dict[UOp, bool] = {}
  for u in topo: has_reduce[u] = u.op is Ops.REDUCE_AXIS or (u.op in fusable and any(map(has_reduce.__getitem__, u.src)))
  # ... except a short reduction (a window sum) whose one reader is another reduction, reached through ops that never
  # read an element twice (no EXPAND): it runs inside the reader's loop, nothing computed twice and no buffer between
  # (the two passes that sum a convolution's input gradient back into the image become one kernel)
  nested: set[UOp] = set()
  for u in topo:
    if u.op is not Ops.REDUCE_AXIS or prod(u.src[0].shape[a] for a in u.arg[1]) > MAX_NESTED_REDUCE: continue
    chain, c = [u], u
    while len(kids := children.get(c, [])) == 1 and kids[0].op in (GroupOp.Movement - {Ops.EXPAND}) | GroupOp.Elementwise and kids[0] not in realize:
      chain.append(c := kids[0])
    if len(kids) == 1 and kids[0].op is Ops.REDUCE_AXIS and len(chain) > 1: nested.update(chain)
  # ... and except elementwise math on reductions' results that all have buffers already (`live`: a reduction reached
  # only through nodes not given a buffer), whose one reader is a long reduction to few outputs (a channel's sum over
  # batch and image) reading it directly: the reduction's body, loads of those buffers, nothing computed twice (the
  # batchnorm gradient's (x - mean) * invstd * g was written out only to be summed, as x came from a convolution; the
  # digits CNN's step 1.08x). Not into a reduction with more outputs than it sums (a softmax's gradient over 32 of 512
  # rows): its plans copy the body per output tile, and the small GPT's first run took 0.2 s more to generate and
  # compile them. Decided in order, sources first, so a source's buffer is known
  live: dict[UOp, bool] = {}
  for u in topo:
    live[u] = u.op is Ops.REDUCE_AXIS or (u.op in fusable and any(live[s] and s not in realize for s in u.src))
    kids = children.get(u, [])
    if not live[u] and len(kids) == 1 and (r := kids[0]).op is Ops.REDUCE_AXIS and _sums_more_than_it_outputs(r): continue
    if has_reduce[u] and u not in realize and u not in nested and any(c.op not in fusable and c.op not in (Ops.SINK, Ops.CONTIGUOUS) and
                                                  not (c.op is Ops.ASSIGN and c.src[1] is u) for c in kids):
      realize.add(u)
  def fuses_forward(r: UOp) -> bool:
    found, stack, seen = set(), [r], {r}
    while stack:
      u = stack.pop()
      if u in realize or u.op in roots or u in sink.src: found.add(u); continue
      for c in children.get(u, []):
        if c.op is Ops.SINK: found.add(u); continue
        if c.op is Ops.ASSIGN and c.src[0] is u: return False
        if c.op not in fusable and c.op not in roots and c not in nested and not (c.op is Ops.REDUCE_AXIS and u in nested): return False
        if c not in seen: seen.add(c); stack.append(c)
    return len(found) <= 1
  realize |= {u for u in topo if u.op is Ops.REDUCE_AXIS and u not in realize and not fuses_forward(u)}
  return realize

class _Marker:
  def __init__(self, realize: set[UOp]): self.realize, self.done = realize, set()
def _mark(ctx: _Marker, x: UOp) -> UOp | None:
  if x not in ctx.realize or x in ctx.done: return None
  ctx.done.add(x)
  return UOp(Ops.CONTIGUOUS, x.dtype, (x,))
_MARKED = GroupOp.All - {Ops.SINK, Ops.CONTIGUOUS, Ops.ASSIGN, Ops.DEVICE}
pm_mark = PatternMatcher([(UPat(_MARKED, name="x"), _mark)])

def _like(n: UOp, u: UOp) -> UOp:
  """n, a rebuild of u whose sources have their old shapes and devices, takes u's (what _fill would compute again)."""
  n._shape, n._dev = u.shape, u.device
  return n
def _rebuilt(u: UOp, memo: dict[UOp, UOp]) -> UOp:
  """u on its sources' results in memo (u itself where none changed), with u's shape and device: the untraced walks'
  step, what a rewrite makes of a node before trying its rules."""
  return u if (ns := tuple(map(memo.__getitem__, u.src))) == u.src else _like(UOp(u.op, u.dtype, ns, u.arg), u)

def mark_realize(sink: UOp, realize: set[UOp], topo: list[UOp]) -> tuple[UOp, list[UOp] | None]:
  """sink with each realize point x as CONTIGUOUS(x): pm_mark's bottom-up rewrite, and the new graph's toposort where
  it is known. Untraced, what that rewrite makes, made over topo (sink's toposort, find_realize's walk): each node
  rebuilt on its sources' results, a realize point wrapped (its walk: topo with each wrap after what it wraps). Where a
  rebuilt or wrapped node is a node of the graph already (it holds both f(y) and f(y.contiguous()), or y and
  y.contiguous() with y a realize point), the rewrite's visiting order decides: the rewrite then."""
  if not traced():
    nodes, memo, walk = set(topo), {}, []
    for u in topo:
      nn = _rebuilt(u, memo)
      if u in realize and u.op in _MARKED: walk.append(nn); nn = _like(UOp(Ops.CONTIGUOUS, nn.dtype, (nn,)), u)
      if nn is not u and nn in nodes: break
      memo[u] = nn
      walk.append(nn)
    else: return memo[sink], walk
  return graph_rewrite(sink, pm_mark, ctx=_Marker(realize), bottom_up=True, name="schedule: mark realize points"), None

def remove_noop_movement(sink: UOp, topo: list[UOp] | None) -> UOp:
  """pm_early's rewrite. Untraced, what that rewrite makes, over topo (sink's toposort): each node rebuilt on its
  sources' results with its shape and device, then the table's rules until none matches (each returns a node of the same
  shape and device made of finished nodes; the table has no ctx, so a node reached twice is made the same)."""
  if traced(): return graph_rewrite(sink, pm_early, name="schedule: remove no-op movement")
  memo: dict[UOp, UOp] = {}
  rw = pm_early.rewrite
  for u in topo if topo is not None else sink.toposort():
    nn = _rebuilt(u, memo)
    while (r := rw(nn)) is not None: nn = r
    memo[u] = nn
  return memo[sink]

def split_kernels(sink: UOp, items: list[ScheduleItem], topo: list[UOp] | None) -> UOp:
  """pm_kernels' rewrite (items: the kernels and copies, in the order it makes them). Untraced, what that rewrite
  makes, over topo (sink's toposort): each node rebuilt on its sources' results with its shape and device (each result
  has the shape and device of what it replaces), then the table's rule for it. Every rule returns a node no rule
  matches (a view of a new buffer, or a source); should one not, the rewrite, from the start."""
  if not traced():
    memo: dict[UOp, UOp] = {}
    rw = pm_kernels.rewrite
    for u in topo if topo is not None else sink.toposort():
      nn = _rebuilt(u, memo)
      if (r := rw(nn, items)) is not None:
        if not (r.op is Ops.BUFFER or (r.op is Ops.RESHAPE and r.src[0].op is Ops.BUFFER) or any(r is s for s in nn.src)): break
        nn = r
      memo[u] = nn
    else: return memo[sink]
    items.clear()
  return graph_rewrite(sink, pm_kernels, ctx=items, name="schedule: split into kernels")

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
def _reads_moved(x: UOp, target: UOp) -> bool:
  """Does x read `target` at an index other than the one it writes (through a permute, pad, reduce, ...)?"""
  state: dict[UOp, int] = {}  # 0: doesn't read target, 1: reads it in place, 2: reads it moved
  for u in x.toposort():
    if u is target: state[u] = 1; continue
    st = max((state[s] for s in u.src), default=0)
    state[u] = 2 if st == 1 and (u.op in GroupOp.Movement - {Ops.RESHAPE} or u.op is Ops.REDUCE_AXIS) else st
  return state[x] == 2
def _assign(ctx: list[ScheduleItem], a: UOp, t: UOp, x: UOp) -> UOp:
  target = t.base
  if target.op is not Ops.BUFFER: raise RuntimeError("assign target must be a realized tensor")
  if _reads_moved(x, target): x = _kernel(ctx, a, x)  # compute into a temporary first, so no kernel reads what it overwrites
  new = alias_buffer(target)
  # a fill (Tensor._fill_later: a new buffer's first value) stores the value in its shape, as a realize's kernel does
  if x.shape != target.shape and a.arg != FILL: x = UOp(Ops.RESHAPE, x.dtype, (x,), target.shape)
  ctx.append(ScheduleItem("kernel", UOp(Ops.SINK, src=(UOp(Ops.STORE, src=(new, x)),)), (new,), target))
  return view_of(new, a.shape)
def _assign_view(ctx: list[ScheduleItem], r: UOp, b: UOp) -> UOp | None:
  """A reshape of what an assign in this schedule wrote (a lazily filled weight read by the step that fills it) is
  one reshape of the buffer, as it is read once the weight is a buffer (pm_early): the next step's kernel, not another."""
  if not any(it.overwrites is not None and it.outputs[0] is b for it in reversed(ctx)): return None
  return b if r.shape == b.shape else UOp(Ops.RESHAPE, b.dtype, (b,), r.arg)
pm_kernels = PatternMatcher([
  (UPat(Ops.RESHAPE, name="r", src=(UPat(Ops.RESHAPE, src=(UPat(Ops.BUFFER, name="b"),)),)), _assign_view),
  (UPat(Ops.CONTIGUOUS, name="c", src=(UPat.var("x"),)), _kernel),
  (UPat(Ops.COPY, name="c", src=(UPat.var("x"), UPat(Ops.DEVICE, name="d"))), _copy),
  (UPat(Ops.ASSIGN, name="a", src=(UPat.var("t"), UPat.var("x"))), _assign),
  (UPat(Ops.ASSIGN, name="a", src=(UPat.var("t"), UPat.var("d"), UPat.var("v"))), scatter_assign),  # t[idx] = v in place
])

def _item_deps(items: list[ScheduleItem]) -> tuple[list[set[UOp]], list[set[int]]]:
  """What each item reads, and the items that must run before it: the writers of what it reads, and, for an assign,
  every other reader of the buffer's old value (it must read before the assign overwrites)."""
  # a kernel's buffers are its parameters' (kernel_params walked its graph already)
  reads = [(set(it.bufs) if it.bufs is not None else {u for u in it.ast.toposort() if u.op is Ops.BUFFER}) - set(it.outputs) for it in items]
  writer = {o: i for i, it in enumerate(items) for o in it.outputs}
  deps: list[set[int]] = [{writer[b] for b in rd if b in writer} for rd in reads]
  for j, it in enumerate(items):
    if it.overwrites is not None: deps[j] |= {i for i, rd in enumerate(reads) if i != j and it.overwrites in rd}
  return reads, deps

def _snapshot(items: list[ScheduleItem], reads: list[set[UOp]], deps: list[set[int]], done: set[int]) -> list[ScheduleItem]:
  """Break a cycle of assigns that each read another's old value (`a.assign(b*2); b.assign(a*3)`): the old value of
  one overwritten buffer is copied first, and its other readers read the copy."""
  for j, it in enumerate(items):
    if j in done or (x := it.overwrites) is None: continue
    readers = [i for i in deps[j] - done if x in reads[i]]
    if not readers: continue
    copy = new_buffer(x.src[0].arg, x.arg[1], x.dtype)
    snap = ScheduleItem("kernel", UOp(Ops.SINK, src=(UOp(Ops.STORE, src=(copy, x)),)), (copy,))
    out = list(items)
    for i in readers: out[i] = ScheduleItem(items[i].kind, items[i].ast.substitute({x: copy}), items[i].outputs, items[i].overwrites)
    for i, o in enumerate(out):
      if o.kind == "kernel" and (o is snap or i in readers): o.params_ast, o.bufs = kernel_params(o)
    snap.params_ast, snap.bufs = kernel_params(snap)
    return out + [snap]
  raise RuntimeError("schedule: the kernels depend on each other in a cycle with no assign to break it (please report this graph)")

def order_items(items: list[ScheduleItem]) -> list[ScheduleItem]:
  """Data-flow order, plus: a kernel that reads a buffer's old value runs before the assign that overwrites it."""
  while True:
    reads, deps = _item_deps(items)
    out, done = [], set()
    while len(out) < len(items):
      i = next((i for i in range(len(items)) if i not in done and deps[i] <= done), None)
      if i is None: break
      out.append(items[i]); done.add(i)
    if len(out) == len(items): return out
    items = _snapshot(items, reads, deps, done)

def _inline_call(g: UOp, c: UOp) -> UOp:
  """Output g.arg of call c: its body's output with the body's PARAMs bound to the call's arguments. A precompiled
  call's inputs and outputs are realized, so its kernels are its own (nothing fuses across it)."""
  args = [a if not c.arg.precompile or is_contiguous_view(a) else UOp(Ops.CONTIGUOUS, a.dtype, (a,)) for a in c.src[1:]]
  out = c.src[0].src[g.arg].substitute({p: args[p.arg.slot] for p in c.src[0].toposort() if p.op is Ops.PARAM and p.arg.trace == c.arg.trace})
  return UOp(Ops.CONTIGUOUS, out.dtype, (out,)) if c.arg.precompile and out.op not in (Ops.CONTIGUOUS, Ops.ASSIGN) else out
def _param_outside(p: UOp) -> UOp:
  raise RuntimeError(f"a @function body realized a tensor computed from its input {p.arg!r} (.numpy(), .item(), .realize() inside the "
                     "body): a body only builds its graph; return the tensor and realize it after the call")
pm_inline_calls = PatternMatcher([
  (UPat(Ops.GETTUPLE, src=(UPat(Ops.CALL, name="c"),), name="g"), _inline_call),
  (UPat(Ops.PARAM, name="p"), _param_outside),
])

_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

def call_site() -> tuple[str, int, str]:
  """The first frame outside the engine (file, line, function): the user's line that asked for a realize."""
  f = sys._getframe(1)
  while f is not None and (f.f_code.co_filename.startswith(_ENGINE_DIR) or f.f_code.co_filename.startswith("<frozen")): f = f.f_back
  return (f.f_code.co_filename, f.f_lineno, f.f_code.co_name) if f is not None else ("<unknown>", 0, "")

def schedule_label(targets: list[UOp]) -> tuple[str, str, tuple[str, int]]:
  """A schedule context's name (`train_step · digits.py:41`), detail (the shapes it realizes) and location."""
  file, line, fn = call_site()
  where = f"{os.path.basename(file)}:{line}"
  shapes = ", ".join(str(u.shape) for u in targets[:4]) + (f" … {len(targets)} tensors" if len(targets) > 4 else "")
  return (f"{fn} · {where}" if fn and not fn.startswith("<") else where), shapes, (file, line)

def create_schedule(targets: list[UOp], topo: list[UOp] | None = None) -> tuple[list[ScheduleItem], dict[UOp, UOp]]:
  """Returns the kernels and copies in the order to run them, and what each target becomes (a view of a buffer).
  topo: the targets' SINK's toposort where the caller walked it already (the schedule cache's lookup)."""
  sink = UOp(Ops.SINK, src=tuple(targets))
  from tinygrad.multi import has_multi, lower_multi, is_multi_node
  # one walk of the graph answers what the steps below ask of it while it is unchanged (a rewrite that changes nothing
  # returns the same sink): calls, multi-device values, big reductions, the realize points
  walked = sink
  if topo is None: topo = sink.toposort()
  calls = multi = False
  for u in topo:
    if u.op is Ops.CALL or u.op is Ops.PARAM: calls = True
    elif is_multi_node(u): multi = True
  # @function calls first (bottom up: a call is replaced before its body is visited, nested calls as they appear)
  if calls:
    sink = graph_rewrite(sink, pm_inline_calls, bottom_up=True, name="schedule: inline calls")
    multi, walked, topo = has_multi(sink), None, None  # the bodies' nodes are in the graph now, not in the walk
  if multi:  # multi-device tensors: schedule one graph per device, then put each target's pieces back together
    lowered = lower_multi(sink).src
    flat = list(dict.fromkeys(s for t in lowered for s in (t.src if t.op is Ops.MULTI else (t,))))
    items, becomes = create_schedule(flat)
    return items, {t: UOp(Ops.MULTI, lt.dtype, tuple(becomes[s] for s in lt.src), lt.arg) if lt.op is Ops.MULTI else becomes[lt]
                   for t, lt in zip(targets, lowered)}
  sink = remove_noop_movement(sink, topo if sink is walked else None)
  # its one rule is the SINK's: untraced, the rule itself (the rewrite would rebuild nothing else)
  if traced(): sink = graph_rewrite(sink, pm_own_constants, name="schedule: constants' own buffers")
  else: sink = _own_constants(sink) or sink
  from tinygrad.engine.split_reduce import split_reductions
  # a big reduction with a small output in two kernels; a reduction the walk before the rewrites above found is there
  # still, the same shape, dtype and device (they remove no-op movement and DETACH, wrap constant targets)
  sink = split_reductions(sink, topo if sink is walked else None, before=topo)
  if sink is not walked: topo = sink.toposort()
  sink, topo = mark_realize(sink, find_realize(sink, topo), topo)
  items: list[ScheduleItem] = []
  sink = split_kernels(sink, items, topo)
  for it in items:
    if it.kind == "kernel": it.params_ast, it.bufs = kernel_params(it)
  return order_items(items), dict(zip(targets, sink.src))

def _to_param(ctx: dict[UOp, UOp], b: UOp) -> UOp | None: return ctx.get(b)
pm_params = PatternMatcher([(UPat(Ops.BUFFER, name="b"), _to_param)])

def kernel_params(item: ScheduleItem) -> tuple[UOp, list[UOp]]:
  """The kernel with its buffers turned into numbered parameters (so equal kernels share one program), and the buffers."""
  topo = item.ast.toposort()
  bufs = list(item.outputs) + [u for u in topo if u.op is Ops.BUFFER and u not in item.outputs]
  params = {b: UOp(Ops.DEFINE_GLOBAL, b.dtype, (), (i, b.arg[1])) for i, b in enumerate(bufs)}
  if traced(): return graph_rewrite(item.ast, pm_params, ctx=params, name="kernel: buffers to params"), bufs
  # untraced, the rebuild that rewrite makes (a BUFFER becomes its parameter, which nothing rewrites further), over the
  # walk just made instead of the rewrite's own
  return item.ast.substitute(params, topo), bufs
