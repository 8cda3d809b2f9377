"""TinyJit: the first call runs normally, the second captures every kernel and copy it runs, later calls replay
them on the new inputs' buffers with no Python scheduling."""
from __future__ import annotations
import functools, weakref
from typing import Any, Callable
from tinygrad.tensor import Tensor
from tinygrad.uop.ops import UOp, Ops
from tinygrad.engine import realize as R
from tinygrad.engine.schedule import is_contiguous_view
from tinygrad.device import Buffer
from tinygrad import tracing
from tinygrad.helpers import getenv, perf_ns, DEBUG, GlobalCounters, CAPTURING

class JitError(RuntimeError): pass

def graph_class(dev: Any) -> Any:
  """The graph runner class a device batches a replay's kernels with (tinygrad's name for it), or None: no device here
  has one (as tinygrad 0.14's CPU); a replay runs kernel by kernel (the CPU's as bare calls of the compiled functions)."""
  g = getattr(dev, "graph", None)
  return g.func if isinstance(g, functools.partial) else g

def _input_buffers(t: Tensor) -> list[Buffer]:
  """The buffer behind an input, or one per device for a multi-device tensor."""
  out = []
  for u in (t.uop.src if t.uop.op is Ops.MULTI else (t.uop,)):
    while u.op is Ops.RESHAPE: u = u.src[0]
    out.append(R.buffer_for(u).ensure_allocated())
  return out
def _input_buffer(t: Tensor) -> Buffer: return _input_buffers(t)[0]

def _named_inputs(args: tuple, kwargs: dict) -> tuple[list[int | str], list[Tensor]]:
  """The jit's inputs as tinygrad takes them: tensor arguments by position, tensor keyword arguments sorted by name
  (so the order a call spells them in doesn't matter), then the tensors directly inside list/tuple/dict arguments
  (one level: a model object passed in is not searched for its weights)."""
  named = [(k, t) for k, t in [*enumerate(args), *sorted(kwargs.items())] if isinstance(t, Tensor)]
  names, ts = [k for k, _ in named], [t for _, t in named]
  for x in (*args, *kwargs.values()):
    for t in (x if isinstance(x, (list, tuple)) else x.values() if isinstance(x, dict) else ()):
      if isinstance(t, Tensor) and not any(t is y for y in ts): ts.append(t)
  return names, ts

def _bound_values(args: tuple, kwargs: dict) -> tuple:
  """(name, value) of each bound variable among the arguments (and directly inside list/tuple/dict ones), in order."""
  flat = [*args, *(v for _, v in sorted(kwargs.items()))]
  flat += [y for x in flat for y in (x if isinstance(x, (list, tuple)) else x.values() if isinstance(x, dict) else ())]
  return tuple((u.src[0].arg[0], u.src[1].arg) for u in flat if isinstance(u, UOp) and u.op is Ops.BIND)

def _reads_pending(ts: list[Tensor]) -> bool:
  """Does any of these graphs read a pending assign (which its realize must run, and hand to the tensor holding it), or
  the buffer one writes (`d = t.detach(); t.assign(v)`: realized with the assign, d reads the new value)?"""
  pending: set[UOp] = set()
  for t in Tensor._pending_assigns:
    if (u := t.uop).op is not Ops.ASSIGN: continue  # run since
    while u.op is Ops.ASSIGN: pending.add(u); u = u.src[0]
    pending.add(u.base)
  return bool(ts and pending) and any(u in pending for u in UOp(Ops.SINK, src=tuple(t.uop for t in ts)).toposort())

def _check_returns_tensors(ret: Any) -> None:
  """A replay returns the captured return value again: anything in it but tensors would be stale (a counter, a float)."""
  if ret is None or isinstance(ret, Tensor): return
  if isinstance(ret, (tuple, list, dict)):
    for v in (ret.values() if isinstance(ret, dict) else ret): _check_returns_tensors(v)
    return
  raise JitError(f"a jitted function may return only tensors (in tuples, lists, dicts), got a {type(ret).__name__}: a replay would "
                 "return the captured value again")

class _Capture(list):
  """R.capturing while a TinyJit captures: kernels and copies run inside `with Context(CAPTURING=0)` are not kept."""
  def append(self, x) -> None:
    if CAPTURING.value: super().append(x)
  def extend(self, xs) -> None:
    if CAPTURING.value: super().extend(xs)

def _key_buffer(key: Tensor) -> Buffer | None:
  """The host buffer a random draw's key is copied from (None: the draw was never realized)."""
  u = key.uop
  while u.op in (Ops.COPY, Ops.RESHAPE): u = u.src[0]
  return R.buffer_for(u) if u.op is Ops.BUFFER and u.src and u.src[0].op is Ops.DEVICE else None

class CapturedJit:
  """What a TinyJit captured: kernels (program, device, buffers: output first) and copies (None, device, [dst, src])
  in the order they ran, and which of those buffer slots are the inputs. `linear` shows them as tinygrad does."""
  def __init__(self, ret: Any, items: list[tuple[Any, str, list[Buffer]]], signature: list[tuple], names: list[int | str],
               input_slots: list[list[tuple[int, int]]]):
    self.ret, self.items, self.signature, self.names, self.input_slots = ret, items, signature, names, input_slots
    self._input_kernels = {i for slots in input_slots for i, _ in slots}
    self._direct: list[tuple[Callable, list[int]] | None] | bool | None = None  # bare calls for the replay, once built
    self._totals = (0, 0, 0)
    self._side_by_side, self._plan = R.side_by_side([dev for p, dev, _ in items if p is not None]), None
    self.ret_inputs: dict[int, int] = {}  # id of a returned tensor -> which input it is
    self._written_ids: set[int] | None = None  # ids of the buffers the kernels write that no input is
    self.draws: list[tuple[Buffer, str, int]] = []  # random draws: (key buffer, device, start word - the device's count before)
    self.ndraws, self.words = 0, {}  # draws made, words drawn per device, in one call

  @functools.cached_property
  def linear(self) -> UOp:
    """LINEAR of one CALL per captured item (arg: its device); a CALL's first source is the kernel's PROGRAM (arg: its
    name) or a COPY (arg: (from device, to device)): len(jit.captured.linear.src) is how many run per replay."""
    return UOp(Ops.LINEAR, src=tuple(UOp(Ops.CALL, src=(UOp(Ops.PROGRAM, arg=p.name) if p is not None else
                                                       UOp(Ops.COPY, arg=(bufs[1].device, bufs[0].device)),), arg=dev)
                                     for p, dev, bufs in self.items))

  def _written(self) -> set[int]:
    if self._written_ids is None:
      inputs = {(i, j) for slots in self.input_slots for i, j in slots}
      self._written_ids = {id(bufs[0]) for i, (_, _, bufs) in enumerate(self.items) if (i, 0) not in inputs}
    return self._written_ids

  def free_intermediates(self) -> None:
    """Frees the memory of the buffers the captured kernels write and no input is: intermediates and the returned
    tensors' buffers (a replay allocates them again; a tensor returned before no longer holds its values after this).
    An input, or a buffer a kernel updates in place (`x += y` of a tensor from outside), keeps its memory."""
    inputs = {(i, j) for slots in self.input_slots for i, j in slots}
    for i, (_, _, bufs) in enumerate(self.items):
      out = bufs[0]
      if (i, 0) in inputs or any(b is out for b in bufs[1:]) or any(self.items[k][2][j] is out for k, j in inputs): continue
      out.deallocate()
    self._direct, self._plan = None, None  # their addresses change

  def replay(self, new_inputs: list[Buffer]) -> None:
    # an input that is a buffer the kernels write (last call's output fed back in: `buf = f(buf, x)`) is copied first,
    # or a kernel would read what it, or one before it, overwrites (as tinygrad's jit does)
    if (written := self._written()) and any(id(b) in written for b in new_inputs):
      new_inputs = [_copy_of(b) if id(b) in written else b for b in new_inputs]
    for k, slots in enumerate(self.input_slots):
      for i, j in slots: self.items[i][2][j] = new_inputs[k]
    # random draws: each key gets the device count the same call without the jit would start at, so a replay draws exactly
    # the numbers the Python function would (and the seed set since is the one used)
    for b, dev, k in self.draws: b.copyin(Tensor._rng_key(dev, Tensor._dev_counts.get(dev, 0) + k))
    for dev, n in self.words.items(): Tensor._dev_counts[dev] = Tensor._dev_counts.get(dev, 0) + n
    Tensor._draws += self.ndraws
    if self._side_by_side and R.capturing is None:  # several CPU devices: each on its own queue, the plan made once
      if self._plan is None: self._plan = R.QueuedPlan(self.items)
      self._plan.run()
    # an outer jit capturing this replay needs each kernel to go through exec_kernel, which it listens to
    elif tracing.tracer is not None or DEBUG >= 2 or R.capturing is not None or not self._replay_direct():
      for p, dev, bufs in self.items:
        if p is None: R.exec_copy(bufs[1], bufs[0])
        else: R.exec_kernel(p, dev, bufs)

  def _replay_direct(self) -> bool:
    """Runs the captured kernels as bare calls of their compiled functions on their buffers' addresses, when every
    kernel's device can hand out such a call (the CPU): per kernel a few microseconds less than exec_kernel, which
    times and reports each one (with a tracer or DEBUG>=2 the replay goes through it). The counters get the totals."""
    if self._direct is None:
      calls = []
      for p, dev, bufs in self.items:
        if p is None: calls.append(None); continue
        if (bind := getattr(R.Device[dev], "bind", None)) is None: self._direct = False; return False
        calls.append(bind(p, bufs))
      self._direct, progs = calls, [p for p, _, _ in self.items if p is not None]
      self._totals = (len(progs), sum(p.flops for p in progs), sum(p.mem_bytes for p in progs))
    if self._direct is False: return False
    for i, (p, _, bufs) in enumerate(self.items):  # the new inputs' addresses
      if (c := self._direct[i]) is not None and i in self._input_kernels: c[1][:] = [b.ptr for b in bufs]
    st = perf_ns()
    for (p, _, bufs), c in zip(self.items, self._direct):
      if c is None: R.exec_copy(bufs[1], bufs[0])
      else: c[0](*c[1])
    n, flops, mem = self._totals
    GlobalCounters.kernel_count += n; GlobalCounters.global_ops += flops; GlobalCounters.global_mem += mem
    GlobalCounters.time_sum_s += (perf_ns() - st) * 1e-9
    return True

def _copy_of(b: Buffer) -> Buffer:
  out = Buffer(b.device, b.size, b.dtype).ensure_allocated()
  R.exec_copy(b, out)
  return out

def _prune(items: list, seed: list[Buffer]) -> list:
  """TinyJit(prune=True): only the items that depend on the inputs (or on the random counter) are replayed; the rest
  ran once while capturing and their results stay in their buffers."""
  needed, kept = {id(b) for b in seed}, []
  for it in items:
    ids = {id(b) for b in it[2]}
    if ids & needed: kept.append(it); needed |= ids
  return kept

class TinyJit:
  """`@TinyJit` or `TinyJit(fxn, prune=True)` or `@TinyJit(prune=True)`."""
  def __new__(cls, fxn: Callable[..., Any] | None = None, **kwargs):
    if fxn is None: return lambda f: cls(f, **kwargs)  # the decorator with arguments
    return super().__new__(cls)
  def __init__(self, fxn: Callable[..., Any], *, prune: bool = False):
    self.fxn, self.prune, self.cnt = fxn, prune, 0
    self.captured: CapturedJit | None = None  # the latest capture
    self._by_vals: dict[tuple, CapturedJit] = {}  # a capture per set of bound-variable values it was made with
    functools.update_wrapper(self, fxn)
  def __get__(self, obj, objtype=None):
    """On a method: one jit per instance, since a replay reads the tensors of the object it was captured with (another
    instance's weights would be silently ignored); an object that can't be weakly referenced shares this one."""
    if obj is None: return self
    per: weakref.WeakKeyDictionary = self.__dict__.setdefault("_per_obj", weakref.WeakKeyDictionary())
    try: j = per.get(obj) or per.setdefault(obj, TinyJit(self.fxn, prune=self.prune))
    except TypeError: j = self
    return functools.partial(j.__call__, obj)
  def reset(self) -> None: self.cnt, self.captured, self._by_vals = 0, None, {}

  def _inputs(self, args, kwargs) -> tuple[list[int | str], list[Tensor]]:
    names, ts = _named_inputs(args, kwargs)
    # the inputs still to compute realized together: one schedule, one compile wait, and a graph they share (a batch's
    # X[samples] and Y[samples]: the draw) computed once. Not an input that is a node of another's graph (x and
    # x.clone(): the clone's contiguous would fold into x's buffer, one buffer for two inputs): those one by one, as before
    todo = [t for t in ts if not is_contiguous_view(t.uop)]
    # the first call runs the function as it is: pending assigns its inputs don't read (weights and optimizer state
    # filled lazily) wait for the function's own realize, so their kernels compile with its schedule. A capture runs
    # them all first (a capture must not replay them)
    pending = self.cnt >= 1 or _reads_pending(todo)
    if len(todo) > 1:
      graphs = [set(t.uop.toposort()) for t in todo]
      apart = [t for i, t in enumerate(todo) if not any(j != i and (t.uop in g or todo[j].uop in graphs[i]) for j, g in enumerate(graphs))]
      if len(apart) > 1: Tensor.realize_all(apart, with_pending_assigns=pending)
    for t in ts:  # inputs must be buffers the kernels can read directly
      if pending: t.realize()
      elif not is_contiguous_view(t.uop): Tensor.realize_all([t], with_pending_assigns=False)
      if not is_contiguous_view(t.uop):
        c = t.contiguous()
        Tensor.realize_all([c], with_pending_assigns=pending)
        t.uop = c.uop
    return names, ts

  def __call__(self, *args, **kwargs) -> Any:
    if not getenv("JIT", 1):  # JIT=0: always run the Python function (for debugging)
      ret = self.fxn(*args, **kwargs)
      Tensor.realize_all(_tensors_in(ret))
      return ret
    names, inputs = self._inputs(args, kwargs)
    bufs = [_input_buffer(t) for t in inputs]
    for i, b in enumerate(bufs):  # a replay could not tell apart two inputs captured as one buffer
      if (j := next(j for j in range(i + 1) if bufs[j] is b)) != i:
        raise JitError(f"duplicate inputs to JIT: inputs {j} and {i} are the same buffer; pass a .clone() of one")
    sig = [(t.shape, t.dtype, t.device) for t in inputs]
    # bound variables (`f(x, Variable("i", 0, 9).bind(3))`) stand for their values here (shapes are concrete): a
    # capture replays for the values it was made with, new values capture again (tinygrad replays one for all)
    vals = _bound_values(args, kwargs)
    if self.cnt >= 2 and (cap := self._by_vals.get(vals)) is not None:
      if sig != cap.signature:
        diff = next(i for i, (a, b) in enumerate(zip(sig + [None] * 9, cap.signature + [None] * 9)) if a != b)
        raise JitError(f"TinyJit: input {diff} is (shape, dtype, device) {sig[diff] if diff < len(sig) else 'missing'} but was captured as "
                       f"{cap.signature[diff] if diff < len(cap.signature) else 'missing'}; a jitted function needs the same shapes, dtypes "
                       "and devices on every call")
      if names != cap.names: raise JitError(f"TinyJit: the tensor arguments are {names} (positions, keywords) but were captured as {cap.names}")
      cap.replay([b for t in inputs for b in _input_buffers(t)])
      # a returned tensor that is an input (`return b.assign(a + 1)`) is this call's input, not the captured call's
      return _swap(cap.ret, {i: inputs[k] for i, k in cap.ret_inputs.items()}) if cap.ret_inputs else cap.ret
    if self.cnt >= 1:
      if R.capturing is not None: raise RuntimeError("having TinyJit inside another TinyJit is not supported")
      in_bufs = [b for t in inputs for b in _input_buffers(t)]
      R.capturing, Tensor._draw_log, draws0, counts0 = _Capture(), [], Tensor._draws, dict(Tensor._dev_counts)
      try:
        ret = self.fxn(*args, **kwargs)
        Tensor.realize_all([t for t in _tensors_in(ret)])
        captured, draws = R.capturing, Tensor._draw_log
      finally: R.capturing, Tensor._draw_log = None, None
      if not captured: raise JitError("didn't JIT anything: the function ran no kernel and no copy")
      _check_returns_tensors(ret)
      items = [(p, dev, list(bufs)) for p, dev, bufs in captured]
      keys = [(b, dev, c - counts0.get(dev, 0)) for key, dev, c in draws if (b := _key_buffer(key)) is not None]
      if self.prune:
        items = _prune(items, in_bufs + [b for b, _, _ in keys])
        if DEBUG >= 1: print(f"pruned from {len(captured)} -> {len(items)} kernels")
      slots = [[(i, j) for i, (_, _, bs) in enumerate(items) for j, b in enumerate(bs) if b is ib] for ib in in_bufs]
      self.captured = CapturedJit(ret, items, sig, names, slots)
      self.captured.draws, self.captured.ndraws = keys, Tensor._draws - draws0
      self.captured.words = {d: n - counts0.get(d, 0) for d, n in Tensor._dev_counts.items() if n != counts0.get(d, 0)}
      self.captured.ret_inputs = {id(t): k for t in _tensors_in(ret) for k, ib in enumerate(bufs) if _buffer_of(t) is ib}
      self._by_vals[vals] = self.captured
    else:
      ret = self.fxn(*args, **kwargs)
      Tensor.realize_all([t for t in _tensors_in(ret)])
    self.cnt += 1
    return ret

def _buffer_of(t: Tensor) -> Buffer | None:
  u = t.uop
  while u.op is Ops.RESHAPE: u = u.src[0]
  return R.buffer_for(u) if u.op is Ops.BUFFER else None

def _swap(x: Any, by_id: dict[int, Tensor]) -> Any:
  if isinstance(x, Tensor): return by_id.get(id(x), x)
  if isinstance(x, (list, tuple)): return type(x)(_swap(v, by_id) for v in x)
  if isinstance(x, dict): return {k: _swap(v, by_id) for k, v in x.items()}
  return x

def _tensors_in(x: Any) -> list[Tensor]:
  if isinstance(x, Tensor): return [x]
  if isinstance(x, (list, tuple)): return [t for v in x for t in _tensors_in(v)]
  if isinstance(x, dict): return [t for v in x.values() for t in _tensors_in(v)]
  return []
