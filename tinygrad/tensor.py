"""Tensor: a lazy view of a UOp graph. Nothing runs until realize() (or numpy(), tolist(), item())."""
from __future__ import annotations
import functools, math, pathlib, struct, sys, weakref, itertools
from typing import Any, Sequence
from tinygrad.dtype import DType, DTypeError, dtypes, to_dtype, least_upper_dtype, least_upper_float, f32_to_bf16_bits, float_to_fp8, NO_NUMPY
from tinygrad.dtype import _to_np_dtype  # noqa: F401  (tinygrad's tests import it from tinygrad.tensor)
from tinygrad.helpers import prod, normalize_axis, all_int, flatten, ceildiv
from tinygrad.uop.ops import UOp, Ops, GroupOp, track_context, _as_dtype
from tinygrad import tracing
from tinygrad.helpers import perf_ns
from tinygrad.device import Device, Buffer, buffers
from tinygrad.engine.schedule import new_buffer, is_contiguous_view, view_of, FILL, create_schedule, schedule_label
from tinygrad.engine.schedule_cache import cached_schedule
from tinygrad.engine.realize import run_schedule, buffer_for, trace_schedule, debug_schedule
from tinygrad.helpers import DEBUG
from tinygrad.tensor_ops_index import IndexOps
from tinygrad.tensor_ops_math import MathOps
from tinygrad.tensor_ops_conv import ConvOps
from tinygrad.tensor_linalg import LinalgOps

def _shape_of(data: Any) -> tuple[int, ...]:
  if not isinstance(data, (list, tuple)): return ()
  if len(data) == 0: return (0,)
  sub = [_shape_of(d) for d in data]
  if any(s != sub[0] for s in sub): raise ValueError(f"inhomogeneous nested list: sub-shapes {sorted(set(sub))} differ")
  return (len(data),) + sub[0]

def _through_reshapes(u: UOp) -> UOp:
  while u.op is Ops.RESHAPE: u = u.src[0]
  return u

def _flat(data: Any) -> list:
  out, stack = [], [data]
  while stack:
    d = stack.pop()
    if isinstance(d, (list, tuple)): stack.extend(reversed(d))
    else: out.append(d)
  return out

def _plain(data: Any) -> Any:
  if isinstance(data, (list, tuple)): return [_plain(d) for d in data]
  return data.tolist() if hasattr(data, "tolist") else data

def _pack(vals: list, dtype: DType) -> bytes:
  from tinygrad.uop.alu import cast_value
  if dtypes.is_int(dtype) or dtype == dtypes.bool: vals = [cast_value(v, dtype) for v in vals]
  elif dtype == dtypes.float16: vals = [cast_value(float(v), dtype) for v in vals]
  elif dtype == dtypes.bfloat16: return struct.pack(f"{len(vals)}H", *[f32_to_bf16_bits(float(v)) for v in vals])  # its bits
  elif dtype in dtypes.fp8s: return bytes(float_to_fp8(float(v), dtype) for v in vals)
  return struct.pack(f"{len(vals)}{dtype.fmt}", *vals)

def _host_buffer(data: bytes, dtype: DType, device: str) -> UOp:
  """A BUFFER on the Python side holding `data`, copied to `device` when realized."""
  n = len(data) // dtype.itemsize
  b = new_buffer("PYTHON", n, dtype)
  buffers[b] = Buffer("PYTHON", n, dtype).copyin(data)
  return UOp(Ops.COPY, dtype, (b, UOp(Ops.DEVICE, arg=device)))

def _assign_chain(u: UOp | None) -> list[UOp]:
  """An assign and the pending assigns it writes after (`t += 1; t *= 2`: the second's target is the first)."""
  out = []
  while u is not None and u.op is Ops.ASSIGN: out.append(u); u = u.src[0]
  return out

def _in_chain(u: UOp | None, a: UOp) -> bool:
  """Is a one of the writes of u's assign chain (_assign_chain(u), without building it: every realize asks this of each
  done assign)?"""
  while u is not None and u.op is Ops.ASSIGN:
    if u is a: return True
    u = u.src[0]
  return False

def _int_of(x: Any) -> Any:
  """A bound variable (or int arithmetic of one, `n - start_pos`) in a pad/shrink stands for its value: shapes here are
  concrete (docs/engine.md)."""
  return int(x) if isinstance(x, UOp) else x

def _bound_value(x: Any) -> int | None:
  """The value of a bound variable, or of int arithmetic of bound variables (`vv * 4`); None for any other thing. A
  Tensor made of one holds that value (shapes and values here are concrete; TinyJit keys a capture by the values)."""
  # only a BIND or int arithmetic has an int value (UOp.__index__): anything else is None without a walk of its graph
  if not isinstance(x, UOp) or x.op is Ops.CONST or (x.op is not Ops.BIND and not dtypes.is_int(x.dtype)): return None
  # int(x) reads only BINDs, int CONSTs and int ALU ops' sources: a graph reaching anything else there (a buffer, a
  # view, an arange) has no value, seen at the first such node, not after a walk of the whole graph (every int Tensor op)
  seen, stack, bound = {x}, [x], False
  while stack:
    u = stack.pop()
    if u.op is Ops.BIND: bound = True
    elif u.op is Ops.CONST:
      if not isinstance(u.arg, int) or isinstance(u.arg, bool): return None
    elif u.op in GroupOp.ALU and dtypes.is_int(u.dtype):
      for s in u.src:
        if s not in seen: seen.add(s); stack.append(s)
    else: return None
  if not bound: return None
  try: return int(x)
  except TypeError: return None

def _const(val: Any, dtype: DType, device: str, shape: tuple[int, ...] = ()) -> UOp:
  c = UOp(Ops.CONST, dtype, (UOp(Ops.DEVICE, arg=device),), _as_dtype(dtype, val))  # UOp.const's arg, without its node
  if not shape: return c
  return UOp(Ops.EXPAND, dtype, (UOp(Ops.RESHAPE, dtype, (c,), (1,) * len(shape)),), tuple(shape))

def _broadcast_uop(u: UOp, shape: tuple[int, ...]) -> UOp:
  """u broadcast to a shape it broadcasts to: the nodes Tensor._broadcast_to makes (a RESHAPE adding the leading dims,
  an EXPAND where a dim isn't the shape's), each only where the shape changes, without a Tensor for each."""
  if len(u.shape) < len(shape): u = UOp(Ops.RESHAPE, u.dtype, (u,), (1,) * (len(shape) - len(u.shape)) + u.shape)
  return u if u.shape == shape else UOp(Ops.EXPAND, u.dtype, (u,), shape)

def _scalar_to(val: Any, dtype: DType, device: str, shape: tuple[int, ...]) -> UOp:
  """A Python scalar as a binary op takes it, broadcast to shape."""
  return _broadcast_uop(_const(val, dtype, device), tuple(shape))

def _placed_const(t: Tensor, device: Any) -> Tensor:
  """A device-less constant (Tensor(UOp.const(dtypes.float, 1.0))) made on device; anything else as it is."""
  if t.device is not None or device is None or t.uop.base.op is not Ops.CONST: return t
  return Tensor.full(t.shape, t.uop.base.arg, t.dtype, device)

def _broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
  if all(s == shapes[0] for s in shapes[1:]): return tuple(shapes[0])  # the same shapes: most binary ops
  nd = max(len(s) for s in shapes)
  padded = [(1,) * (nd - len(s)) + s for s in shapes]
  out = []
  for dims in zip(*padded):
    non1 = {d for d in dims if d != 1}
    if len(non1) > 1: raise ValueError(f"shapes {' and '.join(str(s) for s in shapes)} cannot broadcast together (dims {dims})")
    out.append(non1.pop() if non1 else 1)
  return tuple(out)

class _WeakTensors:
  """A weak set of Tensors keyed by identity (WeakSet compares members with ==, which on Tensors builds a graph)."""
  def __init__(self): self.refs: dict[int, weakref.ref] = {}
  def add(self, t: Tensor) -> None: self.refs[id(t)] = weakref.ref(t, lambda _, k=id(t): self.refs.pop(k, None))
  def clear(self) -> None: self.refs.clear()
  def discard(self, t: Tensor) -> None: self.refs.pop(id(t), None)
  def __iter__(self): return iter([t for r in list(self.refs.values()) if (t := r()) is not None])

def _tensor_call(fn):
  """A span on the TENSOR track for each call of a user-facing method, when a tracer is installed."""
  name = fn.__name__
  def wrapper(self, *args, **kwargs):
    if (t := tracing.tracer) is None: return fn(self, *args, **kwargs)
    st = perf_ns()
    try: return fn(self, *args, **kwargs)
    finally: t.span("TENSOR", f"Tensor.{name}", st, perf_ns(), "tensor", {"shape": list(self.shape), "dtype": self.dtype.name})
  wrapper.__name__, wrapper.__doc__, wrapper.__wrapped__ = name, fn.__doc__, fn  # type: ignore[attr-defined]
  return wrapper

class MatmulShapeError(ValueError, RuntimeError):
  """Operands matmul can't multiply: a ValueError, and the RuntimeError tinygrad (and torch) raise there."""

class ArgumentAssertionError(ValueError, AssertionError):
  """An argument tinygrad checks with an assert (multinomial's): a ValueError, and the AssertionError tinygrad raises."""

class UnsupportedAssertionError(NotImplementedError, AssertionError):
  """A case tinygrad refuses with an assert that this engine does not implement either (multinomial without replacement)."""

class ShapeError(ValueError, RuntimeError):
  """A reshape or permute argument that can't apply: a ValueError, and the RuntimeError tinygrad (and torch) raise."""

class _NoGrad:
  """Sets Tensor.no_grad for a block or a decorated function, restoring it after."""
  def __init__(self, mode: bool): self.mode = mode
  def __enter__(self):
    self.prev, Tensor.no_grad = Tensor.no_grad, self.mode
    return self
  def __exit__(self, *exc): Tensor.no_grad = self.prev
  def __call__(self, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kw):
      with _NoGrad(self.mode): return fn(*args, **kw)
    return wrapper

class Tensor(IndexOps, ConvOps, MathOps, LinalgOps):  # noqa: PLW1641
  """A lazy tensor. `.uop` is its graph (alias `.lazydata`)."""
  __slots__ = ("uop", "_requires_grad", "grad", "_lazy", "__weakref__")
  training: bool = False
  no_grad: bool = False  # set by Tensor.test(): inference, no backward
  _seed, _draws = 0, 0  # random numbers: the seed and how many tensors were drawn since it was set
  _draw_log: list | None = None  # while TinyJit captures: (key tensor, device, start word) of each draw (engine/jit.py)
  # tinygrad's per-device random state (tensor_random.py): the order each device was first drawn on, words drawn on it
  _dev_seeds: dict[str, int] = {}
  _dev_counts: dict[str, int] = {}
  _live: _WeakTensors  # every Tensor alive (backward finds the ones that require grad here)
  _pending_assigns: _WeakTensors  # assigns not yet realized: they run with the next realize, as in tinygrad
  _shared: weakref.WeakSet[UOp]  # buffers that several live tensors took at one realize (an assign copies first)
  # assigns already run -> the buffer each became: a graph built on a pending assign (`t += 1; y = t * 2`) still holds
  # the ASSIGN after t realized, and must read t's buffer, not run the write again (tinygrad's becomes_map does this)
  _done_assigns: weakref.WeakKeyDictionary[UOp, tuple[UOp, weakref.ref]]  # (the buffer, the tensor that took it)
  _contiguous: _WeakTensors  # contiguous() results not yet realized (see _contiguous_in)

  def __init__(self, data: Any, device: str | None = None, dtype: DType | str | None = None, requires_grad: bool | None = None):
    dev = Device.canonicalize(device)
    dt = to_dtype(dtype) if dtype is not None else None
    if isinstance(data, UOp) and (bv := _bound_value(data)) is not None: u = _const(bv, dt or data.dtype, dev)  # Tensor(v.bind(3))
    elif isinstance(data, UOp):
      # as tinygrad: a Tensor wraps the UOp as it is (cast it with .cast to change its dtype)
      assert dt is None or data.dtype == dt, f"Tensor(UOp of {data.dtype}, dtype={dt}): the dtypes differ; a UOp isn't cast here, use .cast()"
      u = data
    elif isinstance(data, Tensor): u = data.uop if dt is None else data.uop.cast(dt)
    elif data is None: u = _host_buffer(b"", dt or dtypes.default_float, dev)
    elif isinstance(data, (bool, int, float)): u = _const(data, dt or dtypes.from_py(data), dev)
    elif isinstance(data, (list, tuple)):
      shape, vals = _shape_of(data), _flat(data)
      if not all(isinstance(v, (bool, int, float)) for v in vals) and any(hasattr(v, "tolist") for v in vals):
        data = _plain(data)  # numpy arrays (or numpy scalars) inside the list: their values, as tinygrad takes them
        shape, vals = _shape_of(data), _flat(data)
      if dt is None:
        dt = dtypes.bool if vals and all(isinstance(v, bool) for v in vals) else \
          (dtypes.int64 if any(not -2**31 <= v < 2**31 for v in vals) else dtypes.default_int) if vals and all(isinstance(v, (bool, int)) for v in vals) \
          else dtypes.default_float  # an int outside int32 makes it int64, so Tensor([2**40]) keeps its value
      for v in vals:
        if not isinstance(v, (bool, int, float)): raise TypeError(f"cannot make a Tensor from a list holding {type(v).__name__}")
      u = _host_buffer(_pack(vals, dt), dt, dev)
      if shape != (len(vals),): u = UOp(Ops.RESHAPE, dt, (u,), shape)
    elif isinstance(data, bytes): u = _host_buffer(data, dtypes.uint8, dev) if dt is None else _host_buffer(data, dt, dev)
    elif isinstance(data, pathlib.Path): u = _host_buffer(data.read_bytes(), dt or dtypes.uint8, dev)  # a file's bytes, as tinygrad's
    elif type(data).__module__ == "numpy" or hasattr(data, "__array__"):
      import numpy as np
      arr = np.asarray(data)
      if not arr.flags.c_contiguous: arr = np.ascontiguousarray(arr)  # (ascontiguousarray alone makes 0-d arrays 1-d)
      src_dt = dtypes.from_np(arr.dtype)
      u = _host_buffer(arr.tobytes(), src_dt, dev)
      if arr.shape != (arr.size,): u = UOp(Ops.RESHAPE, src_dt, (u,), tuple(arr.shape))
      if dt is not None and dt != src_dt: u = u.cast(dt)
    else: raise TypeError(f"cannot make a Tensor from {type(data).__name__}")
    self.uop: UOp = u
    self._lazy: UOp | None = None  # the graph this tensor had before realize made it a buffer (backward still finds it)
    self.grad: Tensor | None = None
    self._requires_grad: bool | None = None
    self.requires_grad = requires_grad
    Tensor._live.add(self)

  # ----- properties
  @property
  def requires_grad(self) -> bool | None: return self._requires_grad
  @requires_grad.setter
  def requires_grad(self, v: bool | None) -> None:
    # a leaf built from constants is a hash-consed UOp that identical leaves share: give it its own buffer, so
    # gradients of two Tensor.zeros(3, requires_grad=True) (or two BatchNorms' weights) don't merge
    # (filled by the next realize, with the other pending assigns: tinygrad initializes lazily)
    if v and not any(u.op is Ops.BUFFER for u in self.uop.toposort()) and not self._fill_later():
      Tensor.realize_all([self], with_pending_assigns=False, share=False)
      self._lazy = None  # its constant graph is shared: a use of the same constant elsewhere is not a use of this leaf
    self._requires_grad = v
  def _fill_later(self) -> bool:
    """Give this tensor a buffer of its own that the next realize fills with its value (a pending assign into a new
    buffer), as tinygrad initializes lazily: a model's weights and an optimizer's state are computed by the kernels of
    the first step's schedule and compile with them, rather than each schedule waiting for a compiler of its own. True
    when it is (or already was) a buffer or a pending assign; False when it must be realized now: multi-device, empty,
    or a copy of host data, which needs no kernel (into a new buffer, an assign would copy it twice)."""
    u = self.uop
    if is_contiguous_view(u) or u.op is Ops.ASSIGN: return True
    if u.op is Ops.CONTIGUOUS and id(self) in Tensor._contiguous.refs: u = u.src[0]  # its own contiguous(): the assign makes it one
    if not isinstance(self.device, str) or self.numel() == 0 or _through_reshapes(u).op in (Ops.COPY, Ops.BUFFER): return False
    self.uop = UOp(Ops.ASSIGN, self.dtype, (view_of(new_buffer(self.device, self.numel(), self.dtype), self.shape), u), FILL)
    Tensor._pending_assigns.add(self)
    return True
  @property
  def lazydata(self) -> UOp: return self.uop
  @property
  def shape(self) -> tuple[int, ...]: return self.uop.shape  # type: ignore[return-value]
  @property
  def dtype(self) -> DType: return self.uop.dtype
  @property
  def device(self) -> str: return self.uop.device  # type: ignore[return-value]
  @property
  def ndim(self) -> int: return len(self.shape)
  def numel(self) -> int: return prod(self.shape)
  def element_size(self) -> int: return self.dtype.itemsize
  def nbytes(self) -> int: return self.numel() * self.element_size()
  def __len__(self) -> int:
    if not self.shape: raise TypeError("len() of a 0-d tensor")
    return self.shape[0]
  def is_floating_point(self) -> bool: return dtypes.is_float(self.dtype)
  def size(self, dim: int | None = None): return self.shape if dim is None else self.shape[normalize_axis(dim, self.ndim)]
  def __repr__(self): return f"<Tensor {self.uop.op} {self.shape} {self.dtype} on {self.device} with grad {self.grad!r}>"
  def __hash__(self): return id(self)
  def __bool__(self): raise TypeError("the truth value of a Tensor is ambiguous: use .item() or .numpy()")
  def __delitem__(self, idx) -> None: raise TypeError("a Tensor has a fixed shape: `del t[...]` can't remove elements (use t[mask] or t.shrink)")

  # ----- realizing
  @_tensor_call
  def realize(self, *lst: Tensor, do_update_stats: bool = True) -> Tensor:
    """Run everything these tensors depend on; afterwards each tensor's uop is a view of a buffer."""
    Tensor.realize_all([self, *lst])
    return self
  @staticmethod
  def realize_all(tensors: list[Tensor], with_pending_assigns: bool = True, share: bool = True, run: bool = True) -> list:
    """Schedules and runs the tensors (and pending assigns); each then stands for its buffer. run=False: the schedule
    items are returned unrun (linear_with_vars), the tensors already stand for the buffers they will fill."""
    # buffers (or whole views of them) already, nothing pending: nothing to schedule (a jitted step's inputs, realized
    # on every call: the MLP step's replay spent 0.18 ms of 0.7 there). Untraced and below DEBUG=2 only: those show each
    # empty schedule too. (_pending_assigns.refs: a _WeakTensors itself is always true)
    if tracing.tracer is None and DEBUG < 2 and not (with_pending_assigns and Tensor._pending_assigns.refs) and \
       all(is_contiguous_view(t.uop) for t in tensors): return []
    pending = [t for t in Tensor._pending_assigns if t.uop.op is Ops.ASSIGN] if with_pending_assigns else []
    if with_pending_assigns: Tensor._pending_assigns.clear()
    if (cont := Tensor._contiguous_in([*tensors, *pending])): tensors = [*tensors, *cont]
    if Tensor._done_assigns: Tensor._read_done_assigns([*tensors, *pending])
    targets = list(dict.fromkeys(t.uop for t in [*tensors, *pending]))
    if share:  # another live tensor can hold a target only if something besides these tensors refers to it (a cheap test
      holders: dict[int, set[int]] = {}  # that spares the walk over every live tensor below, nearly always)
      for t in [*tensors, *pending]: holders.setdefault(id(t.uop), set()).add(id(t))
      share = any(n > 3 for n in [sys.getrefcount(u) - len(holders[id(u)]) for u in targets])  # 3: targets, u, the call
    if (tr := tracing.tracer) is None:
      st = perf_ns() if DEBUG >= 2 else 0
      items, becomes, hit = cached_schedule(targets)
      if st: debug_schedule(items, hit, st)
      if run: run_schedule(items)
    else:
      made = []
      def traced(ts: list[UOp], topo: list[UOp] | None = None):  # a schedule made anew is a context of rewrites; a cached
        name, detail, loc = schedule_label(ts)  # one's are in the trace already. Named by the user's line that realized it
        with track_context("schedule", name, detail, loc) as tc:
          made.append(tc.id)
          return create_schedule(ts, topo)
      st = perf_ns()
      items, becomes, hit = cached_schedule(targets, traced)
      if DEBUG >= 2: debug_schedule(items, hit, st)
      tr.span("HOST", f"schedule {len(items)} items{' (cached)' if hit else ''}", st, perf_ns(), "schedule",
              {"kernels": sum(it.kind == "kernel" for it in items), "cached": hit})
      if run: run_schedule(items)
      if made and not hit: trace_schedule(made[0], items)
    # every live tensor holding a graph that was realized takes its buffer, as tinygrad's becomes_map does: `a, b = t*4,
    # t*4` are one (hash-consed) UOp, so a.realize() realizes b too. A buffer several tensors took is marked shared, and
    # an assign to one of them copies it first (see assign), so the others keep their values
    took: dict[UOp, int] = {}
    for t in (Tensor._live if share else [*tensors, *pending]):
      if (nu := becomes.get(t.uop)) is not None:
        for a in _assign_chain(t.uop): Tensor._done_assigns[a] = (nu, weakref.ref(t))  # each write of a chain: done
        t._lazy, t.uop = t.uop, nu
        took[nu] = took.get(nu, 0) + 1
    for nu, n in took.items():
      if n > 1: Tensor._shared.add(nu)
    return items
  @staticmethod
  def _read_done_assigns(ts: list[Tensor]) -> None:
    """Each tensor's graph with the assigns already run standing for their buffers. Only a done assign something
    refers to (a graph's node) can be in a graph: the references counted are the loop's three (the item, u, the
    call's) and the old graph its tensor keeps (_lazy: it, or the next write of its chain), so nearly every realize
    walks no graph."""
    held = {u: b for u, (b, h) in list(Tensor._done_assigns.items())
            if sys.getrefcount(u) > 3 + ((o := h()) is not None and _in_chain(o._lazy, u))}
    if not held or not any(u in held for u in UOp(Ops.SINK, dtypes.void, tuple(t.uop for t in ts)).toposort()): return
    for t in ts:
      if (hit := {u: held[u] for u in t.uop.toposort() if u in held}): t.uop = t.uop.substitute(hit)
  def linear_with_vars(self, *lst: Tensor) -> tuple[UOp, dict[str, int]]:
    """The schedule realizing these tensors as tinygrad's LINEAR UOp (one CALL per kernel or copy, in run order) and
    its bound variables' values; run_linear (tinygrad.engine.realize) runs it. The tensors stand for its buffers now."""
    from tinygrad.engine.linear import to_linear
    return to_linear(Tensor.realize_all([self, *lst], run=False)), {}
  def schedule_linear(self, *lst: Tensor) -> UOp: return self.linear_with_vars(*lst)[0]
  def contiguous(self) -> Tensor:
    Tensor._contiguous.add(ret := self._new(UOp(Ops.CONTIGUOUS, self.dtype, (self.uop,))))
    return ret
  @staticmethod
  def _contiguous_in(tensors: list[Tensor]) -> list[Tensor]:
    """The unrealized contiguous() tensors these tensors' graphs compute on the way: a realize hands them their buffers
    too (tinygrad's becomes map), so `w = x.contiguous(); f(w).realize(); g(w).realize()` computes w once."""
    cont: dict[UOp, Tensor] = {}
    for t in Tensor._contiguous:
      if t.uop.op is Ops.CONTIGUOUS: cont[t.uop] = t
      else: Tensor._contiguous.discard(t)  # realized (or replaced) since
    if not cont: return []
    inside = UOp(Ops.SINK, src=tuple(t.uop for t in tensors)).toposort()
    # one inside a @function body (computed from its PARAMs) is the body's business: it is no buffer of its own
    return [cont[u] for u in inside if u in cont and not any(x.op is Ops.PARAM for x in u.toposort())]
  def contiguous_backward(self) -> Tensor:
    """This tensor, unchanged forward; backward, its gradient is made contiguous (realized) before it flows on."""
    from tinygrad.gradient import custom_vjp
    out = self._new(UOp(Ops.RESHAPE, self.dtype, (self.uop,), self.shape))  # a no-op node to hang the rule on
    custom_vjp[out.uop] = ((self.uop,), lambda g: (g.contiguous(),))
    return out
  def detach(self) -> Tensor: return Tensor(UOp(Ops.DETACH, self.dtype, (self.uop,)), requires_grad=False)
  def _buffer(self) -> tuple[Buffer, tuple[int, ...]]:
    """Realize this tensor (in place, as tinygrad users expect after .numpy()) and return its host buffer."""
    from tinygrad.engine import realize as R
    if R.capturing is not None:  # as tinygrad: a replay would not run this read, the value would be baked in
      from tinygrad.engine.jit import JitError
      raise JitError("reading a tensor's values (.item() / .tolist() / .numpy() / .data()) while TinyJit captures: a replay runs no Python, "
                     "so the value would be frozen; return the tensor from the jitted function and read it outside")
    self.realize()
    t = self.to(self.device[0]).realize() if isinstance(self.device, tuple) else self  # a multi-device tensor: gathered on its first
    t = t if t.device.partition(":")[0] in ("CPU", "PYTHON") else t.to("CPU").realize()
    u = t.uop
    while u.op is Ops.RESHAPE: u = u.src[0]
    return buffer_for(u).ensure_allocated(), self.shape
  def data(self) -> memoryview:
    buf, shape = self._buffer()
    mv = buf.as_memoryview()
    # memoryview has no half or bfloat16 format: those come as their bytes
    return mv if self.dtype == dtypes.float16 or self.dtype in NO_NUMPY or not shape or 0 in shape else mv.cast(self.dtype.fmt, shape)
  @_tensor_call
  def numpy(self):
    import numpy as np
    if self.dtype in NO_NUMPY: return self.float().numpy()  # numpy has no bfloat16 or fp8: float32, as tinygrad 0.14
    buf, shape = self._buffer()
    return np.frombuffer(buf.copyout(), dtype=dtypes.to_np_name(self.dtype)).reshape(shape).copy()
  @_tensor_call
  def tolist(self) -> Any:
    if self.dtype in NO_NUMPY: return self.float().tolist()  # Python floats, each exactly the bfloat16 (fp8) value
    buf, shape = self._buffer()
    vals = list(struct.unpack(f"{buf.size}{self.dtype.fmt}", buf.copyout()))
    for d in reversed(shape[1:]): vals = [vals[i:i + d] for i in range(0, len(vals), d)] if d else [[] for _ in range(len(vals) and 0)]
    return vals[0] if not shape else vals
  def item(self) -> Any:
    if self.numel() != 1: raise ValueError(f"item() needs a tensor with one element, this one has shape {self.shape}")
    return self.reshape(()).tolist()
  def to(self, device: str | None) -> Tensor:
    d = Device.canonicalize(device)
    if d == self.device: return self
    return self._new(UOp(Ops.COPY, self.dtype, (self.uop, UOp(Ops.DEVICE, arg=d))))
  def to_(self, device: str | None) -> Tensor: self.uop = self.to(device).uop; return self
  def shard(self, devices: tuple[str, ...], axis: int | None = None) -> Tensor:
    """This tensor split along `axis` over `devices`, each holding one equal piece (axis None: each holds a copy).
    Ops on it run on every device; see tinygrad/multi.py."""
    from tinygrad.multi import multi, shard_piece, check_divides, _copy
    if isinstance(self.device, tuple): raise RuntimeError(f"can't shard a multi-device tensor (on {self.device}): shard the single-device tensor")
    devs = Device.canonicalize(tuple(devices) if isinstance(devices, (list, tuple)) else (devices,))
    if isinstance(devs, str): return self.to(devs)
    if axis is None: return self.to(devs)
    ax = normalize_axis(axis, self.ndim)
    check_divides(self.shape, ax, len(devs))
    return self._new(multi([_copy(shard_piece(self.uop, ax, i, len(devs)), d) for i, d in enumerate(devs)], ax))
  def shard_like(self, y: Tensor) -> Tensor:
    """This tensor on y's device, or sharded as y is (the same devices and axis)."""
    if isinstance(y.device, str): return self.to(y.device)
    if not isinstance(self.device, tuple): return self.shard(y.device, y.uop.axis)
    # as tinygrad: a multi-device tensor is only "sharded like" one it already is sharded like
    if self.device != y.device: raise RuntimeError(f"shard_like: this tensor is on {self.device}, y on {y.device}: gather it first (.to(one device))")
    if self.uop.axis != y.uop.axis:
      raise RuntimeError(f"shard_like: this tensor is split along axis {self.uop.axis}, y along {y.uop.axis}: gather it first (.to(one device))")
    return self
  def shard_(self, devices: tuple[str, ...], axis: int | None = None) -> Tensor: self.uop = self.shard(devices, axis).uop; return self
  def clone(self, device: str | None = None) -> Tensor:
    """A copy in a buffer of its own (on `device`, default this tensor's): writing to one never changes the other."""
    d = self.device if device is None else Device.canonicalize(device)
    if d != self.device: return self.to(d)
    # a realized tensor is its buffer already (contiguous() of it is a no-op), and so is a pending contiguous() (rand's
    # draws): copy it; anything else computes anew
    if isinstance(d, str) and (is_contiguous_view(self.uop) or _through_reshapes(self.uop).op is Ops.CONTIGUOUS): ret = self._new(UOp(Ops.COPY, self.dtype, (self.uop, UOp(Ops.DEVICE, arg=d))))
    elif self.uop.op is Ops.MULTI and is_contiguous_view(self.uop):  # each device copies its own piece
      ret = self._new(UOp(Ops.MULTI, self.dtype, tuple(UOp(Ops.COPY, s.dtype, (s, UOp(Ops.DEVICE, arg=s.device))) for s in self.uop.src), self.uop.arg))
    else: ret = self.contiguous()
    if self.grad is not None: ret.grad = self.grad.clone()  # as tinygrad: the clone carries a copy of the gradient
    return ret
  def __deepcopy__(self, memo: dict) -> Tensor:
    """copy.deepcopy: a clone in its own buffer (UOps are shared graph nodes, never copied), same requires_grad."""
    ret = self.clone()
    ret.requires_grad = self.requires_grad
    return ret
  def assign(self, x: Tensor | Any) -> Tensor:
    """Write x into this tensor's buffer (in place, so a TinyJit replay updates the same memory)."""
    if isinstance(x, (bool, int, float)) and isinstance(self.device, str): x = Tensor.full(self.shape, x, self.dtype, self.device)  # t[:3].assign(1.0) fills
    x = x if isinstance(x, Tensor) else Tensor(x, device=self.device, dtype=self.dtype)
    if x.shape != self.shape: raise ValueError(f"assign shape mismatch: {self.shape} <- {x.shape}")
    if x.device != self.device: raise ValueError(f"assign device mismatch: {self.device} <- {x.device}")
    if (into_base := self._assign_view(x)) is not None: return into_base
    # after a pending assign (a lazily filled weight's first update, `t += 1; t *= 2`) this one is written next, in the
    # same schedule: the scheduler orders the writes after the reads of each value
    if (pending := self.uop).op is Ops.ASSIGN and len(pending.src) == 2 and isinstance(self.device, str):
      self.uop = UOp(Ops.ASSIGN, self.dtype, (pending, x.cast(self.dtype).uop))
      Tensor._pending_assigns.add(self)
      return self
    # the target must be a buffer; realizing it must not run other pending assigns early (readers of old values would miss them)
    if not is_contiguous_view(pending):
      Tensor.realize_all([self], with_pending_assigns=False, share=False)
      # t += 1; t *= 2: x reads the first assign, now done; left in x's graph it would run again
      if pending.op is Ops.ASSIGN: x = Tensor(x.uop.substitute({pending: self.uop}))
    if not is_contiguous_view(self.uop): self.uop = self.contiguous().uop; Tensor.realize_all([self], with_pending_assigns=False, share=False)
    # a buffer other tensors took at the same realize (`a, b = t*4, t*4`): this one writes to a copy of its own
    if self.uop in Tensor._shared and any(t is not self and t.uop is self.uop for t in Tensor._live):
      self.uop = self.clone().uop; Tensor.realize_all([self], with_pending_assigns=False, share=False)
    self.uop = UOp(Ops.ASSIGN, self.dtype, (self.uop, x.cast(self.dtype).uop))
    Tensor._pending_assigns.add(self)
    return self
  def _assign_view(self, x: Tensor) -> Tensor | None:
    """assign into a view (slice, permute, flip, reshape, pad) of a realized tensor writes into the viewed buffer, as in
    tinygrad (`t[:, 2:3].assign(v)` changes t): the view's movements are undone on x and on a mask of the places it
    covers, and the base is assigned mask.where(x, its old value). None when self is no such view."""
    chain, u = [], self.uop
    # detach() is a view too: the detached tensor shares the buffer (tinygrad: `t.detach()[i] = v` writes t)
    while u.op in (Ops.SHRINK, Ops.PERMUTE, Ops.FLIP, Ops.RESHAPE, Ops.PAD, Ops.DETACH): chain.append(u); u = u.src[0]
    # (the cheap tests first: every plain assign, an optimizer's update of each weight, comes through here)
    # (a reshape of a buffer is the buffer: a plain assign writes it; a reshape of a pending assign is not: `t += 1;
    # t.reshape(20)[3] = 5` must go through t, or the write is lost and the += runs twice)
    if not chain or (all(m.op is Ops.RESHAPE for m in chain) and u.op is not Ops.ASSIGN) or not (is_contiguous_view(u) or u.op is Ops.ASSIGN): return None
    held = {t.uop: t for t in Tensor._live}
    # a base whose own assign is still pending (t[:3].assign(a); t[3:].assign(b)) takes this one after it
    def writable(b: UOp) -> bool: return is_contiguous_view(b) or (b.op is Ops.ASSIGN and b in held)
    if not writable(u): return None
    # the tensor holding the base (`t` of t[:, 2:3], maybe itself a reshape of the buffer) takes the assign, so its
    # later reads see it
    if (k := next((i for i, m in enumerate(chain) if m.src[0] in held and writable(m.src[0])), None)) is not None:
      chain, u = chain[:k + 1], chain[k].src[0]
    val, mask = x.cast(self.dtype).uop, Tensor.full(self.shape, True, dtypes.bool, self.device).uop
    for m in chain:  # from the view back to the base
      src = m.src[0].shape
      if m.op is Ops.SHRINK: op, arg = Ops.PAD, tuple((b, s - e) for (b, e), s in zip(m.arg, src))
      elif m.op is Ops.PAD: op, arg = Ops.SHRINK, tuple((b, b + s) for (b, _), s in zip(m.arg, src))
      elif m.op is Ops.PERMUTE: op, arg = Ops.PERMUTE, tuple(sorted(range(len(m.arg)), key=m.arg.__getitem__))
      else: op, arg = m.op, (src if m.op is Ops.RESHAPE else m.arg)
      val, mask = UOp(op, val.dtype, (val,), arg), UOp(op, dtypes.bool, (mask,), arg)
    if (base := held.get(u)) is None: base = Tensor(u)
    base.assign(Tensor(mask).where(Tensor(val), Tensor(u)))
    cur = base.uop
    for m in reversed(chain): cur = UOp(m.op, m.dtype, (cur,), m.arg)
    self.uop = cur
    return self
  def replace(self, x: Tensor) -> Tensor: self.uop = x.uop; return self

  def _new(self, u: UOp) -> Tensor: return Tensor(u)

  # ----- creation
  @staticmethod
  def manual_seed(seed: int = 0) -> None:
    Tensor._seed, Tensor._draws, Tensor._dev_seeds, Tensor._dev_counts = seed, 0, {}, {}
  @staticmethod
  def _shape_arg(shape: tuple) -> tuple[int, ...]:
    s = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)
    s = tuple(bv if (bv := _bound_value(d)) is not None else d for d in s)  # a bound variable is its value
    if not all_int(s) or any(d < 0 for d in s): raise ValueError(f"a shape must be non-negative ints, got {s}")
    return s
  @staticmethod
  def full(shape: tuple[int, ...] | int, fill_value: Any, dtype: DType | str | None = None, device: str | None = None, buffer: bool = False,
           **kw) -> Tensor:
    """A broadcast constant (it folds into the kernels that read it); buffer=True fills a buffer of its own instead,
    written by the next realize (tinygrad 0.14's default): two such tensors are never one UOp."""
    shape = (shape,) if isinstance(shape, int) else Tensor._shape_arg(tuple(shape))
    if (bv := _bound_value(fill_value)) is not None: fill_value = bv  # Tensor.full((3,), v.bind(5))
    dt = to_dtype(dtype) if dtype is not None else dtypes.from_py(fill_value)
    if buffer: return Tensor.empty(shape, dtype=dt, device=device, **kw).assign(Tensor(_const(fill_value, dt, Device.canonicalize(device), shape)))
    return Tensor(_const(fill_value, dt, Device.canonicalize(device), shape), **kw)
  @staticmethod
  def zeros(*shape, dtype=None, device=None, **kw) -> Tensor: return Tensor.full(Tensor._shape_arg(shape), 0.0, dtype or dtypes.default_float, device, **kw)
  @staticmethod
  def ones(*shape, dtype=None, device=None, **kw) -> Tensor: return Tensor.full(Tensor._shape_arg(shape), 1.0, dtype or dtypes.default_float, device, **kw)
  @staticmethod
  def empty(*shape, dtype=None, device=None, **kw) -> Tensor:
    shape = Tensor._shape_arg(shape)
    dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
    b = new_buffer(Device.canonicalize(device), prod(shape), dt)
    return Tensor(b if len(shape) == 1 else UOp(Ops.RESHAPE, dt, (b,), shape), **kw)
  def empty_like(self, dtype=None, device=None, **kw) -> Tensor: return Tensor.empty(self.shape, dtype=dtype or self.dtype, device=device or self.device, **kw)
  @staticmethod
  def invalids(*shape, device=None, dtype=None) -> Tensor: return Tensor.empty(*shape, device=device, dtype=dtype)  # tinygrad's anonymous buffer
  @staticmethod
  def from_uop(y: UOp, **kw) -> Tensor:
    """A scalar tensor of a UOp value: a bound variable or int arithmetic of them (`v.bind(2) * 4`: its value), or a
    constant (a newer tinygrad's name)."""
    if not isinstance(y, UOp): raise TypeError(f"from_uop takes a UOp, not {type(y).__name__}")
    kw.setdefault("dtype", y.dtype)
    if (bv := _bound_value(y)) is not None: return Tensor(bv, **kw)
    if y.op is Ops.CONST: return Tensor(y.arg, **kw)
    raise TypeError(f"from_uop: a {y.op} UOp has no value (only a bound variable, int arithmetic of them, or a constant has)")
  @staticmethod
  def from_blob(ptr: int, shape: tuple[int, ...], **kwargs) -> Tensor:
    """The memory at `ptr` (host memory, `prod(shape)` elements) as a Tensor, without copying or owning it: it must
    outlive the tensor. dtype=, device= (CPU or PYTHON) and the constructor's keywords as for Tensor.empty."""
    t = Tensor.empty(*shape, **kwargs)
    buf = buffer_for(t.uop.base)
    if not buf.is_host: raise ValueError(f"from_blob wraps host memory; {t.device} keeps its own: make the tensor on CPU, then .to({t.device!r})")
    if not isinstance(ptr, int) or ptr <= 0: raise ValueError(f"from_blob needs a memory address (an int > 0), got {ptr!r}")
    buf._ptr = ptr  # not allocated here, so never freed here
    return t
  @staticmethod
  def const(b, dtype: DType | str | None = None) -> Tensor: return Tensor(b, dtype=dtype)
  def const_like(self, b, dtype: DType | str | None = None) -> Tensor: return self.full_like(b, dtype=dtype)
  @property
  def max_shape(self) -> tuple[int, ...]: return self.shape  # no symbolic dims here: the shape is its own maximum
  def max_numel(self) -> int: return self.numel()
  @staticmethod
  def _from_values(vals: list, shape: tuple[int, ...], dtype: DType, device: str | None, **kw) -> Tensor:
    dev = Device.canonicalize(device)
    u = _host_buffer(_pack(vals, dtype), dtype, dev)
    return Tensor(u if shape == (len(vals),) else UOp(Ops.RESHAPE, dtype, (u,), shape), **kw)
  @staticmethod
  def arange(start, stop=None, step=1, dtype: DType | str | None = None, device: str | None = None, **kw) -> Tensor:
    if stop is None: start, stop = 0, start
    start, stop, step = (bv if (bv := _bound_value(v)) is not None else v for v in (start, stop, step))  # bound variables: their values
    if step == 0: raise ValueError("arange step must not be zero")
    # tinygrad's choice: int32 for ints, int64 when an end is beyond int32, the default float if any argument is a float
    dt = to_dtype(dtype) if dtype is not None else least_upper_dtype(*(dtypes.from_py(v) for v in (start, stop, step)))
    n = max(0, math.ceil((stop - start) / step))
    # computed where it is used: element i is start + i*step (an IOTA node lowers to the loop index)
    iota = Tensor(UOp(Ops.IOTA, dt, (UOp(Ops.DEVICE, arg=Device.canonicalize(device)),), n))
    return Tensor((iota * step + start if step != 1 or start != 0 else iota).cast(dt).uop, **kw)
  @staticmethod
  def eye(n: int, m: int | None = None, dtype=None, device=None, **kw) -> Tensor:
    m = n if m is None else m
    if n < 0 or m < 0: raise ValueError(f"eye needs non-negative sizes, got {n}, {m}")
    return (Tensor.arange(n, device=device).reshape(n, 1) == Tensor.arange(m, device=device).reshape(1, m)).cast(to_dtype(dtype) if dtype else dtypes.default_float).requires_grad_(kw.get("requires_grad"))
  @staticmethod
  def _rng_key(device: str, counter: int) -> bytes:
    """The key bytes of a draw starting at word `counter` on device (tensor_random.py)."""
    from tinygrad.tensor_random import draw_key
    k0, k1 = draw_key(Tensor._seed, Tensor._dev_seeds.setdefault(device, len(Tensor._dev_seeds)), counter)
    return k0.to_bytes(4, "little") + k1.to_bytes(4, "little")
  @staticmethod
  def _random_bits(n: int, device: str) -> Tensor:
    """n random uint32 words on the device, tinygrad 0.14's stream (tensor_random.py). The draw's key is data copied
    in with it: a TinyJit replay rewrites its captured draws' keys with the counts the same calls would use without
    the jit, so it draws the very same numbers (engine/jit.py)."""
    from tinygrad.tensor_random import threefry2x32, pair_words
    if isinstance(device, tuple): return Tensor._random_bits(n, device[0]).to(device)  # one draw, the same on every device
    Tensor._draws += 1
    counter = Tensor._dev_counts.get(device, 0)
    Tensor._dev_counts[device] = counter + n
    # the key is data, not a constant of the kernel, so every draw of this size reuses one compiled kernel
    key = Tensor(list(struct.unpack("<2I", Tensor._rng_key(device, counter))), dtype=dtypes.uint32, device=device)
    if Tensor._draw_log is not None: Tensor._draw_log.append((key, device, counter))
    half = ceildiv(n, 2)
    c0 = Tensor.arange(half, dtype=dtypes.uint32, device=device)
    lo, hi = threefry2x32(c0, c0 + half, key[0:1], key[1:2])
    return pair_words(lo, hi)[:n]  # each pair's chain computed once
  @staticmethod
  def rand(*shape, dtype=None, device=None, contiguous: bool = True, **kw) -> Tensor:
    """Uniform in [0, 1). contiguous (the default, as tinygrad 0.14): the draws are a buffer of their own, computed once
    by the next realize, not recomputed inside each kernel that reads them; False: they fuse into their readers."""
    shape = Tensor._shape_arg(shape)
    dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
    dev = Device.canonicalize(device)
    if isinstance(dev, tuple): raise ValueError(f"rand on several devices {dev}: make it on one and .shard() it (or rand_like a sharded tensor)")
    if prod(shape) == 0: return Tensor.zeros(*shape, dtype=dt, device=dev, **kw)
    if not dtypes.is_float(dt): raise ValueError(f"rand only supports float dtypes, got {dt}")
    # tinygrad's values: dt's mantissa-many random bits over 2**mantissa, so every value is exact in dt (never 1.0)
    from tinygrad.tensor_random import unit_values
    u = unit_values(Tensor._random_bits(ceildiv(prod(shape) * dt.itemsize, 4), dev), prod(shape), dt).reshape(shape)
    out = Tensor(UOp(Ops.CONTIGUOUS, dt, (u.uop,)) if contiguous else u.uop, **kw)
    if contiguous: Tensor._contiguous.add(out)  # a realize that computes it on the way hands it its buffer
    return out
  @staticmethod
  def randn(*shape, dtype=None, device=None, **kw) -> Tensor:
    """Standard normal (Box-Muller)."""
    shape = Tensor._shape_arg(shape)
    dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
    u = Tensor.rand(2, *shape, device=device, dtype=dtypes.float32)
    n = u[0].mul(2 * math.pi).cos().mul((1 - u[1]).log().mul(-2).sqrt())  # tinygrad's order of the two draws
    return Tensor(n.cast(dt).uop, **kw)
  @staticmethod
  def randint(*shape, low=0, high=10, dtype=dtypes.int32, device=None, **kw) -> Tensor:
    shape = Tensor._shape_arg(shape)
    if high <= low: raise ValueError(f"randint needs low < high, got {low} and {high}")
    r = (Tensor.rand(*shape, device=device) * (high - low)).floor() + low
    return Tensor(r.clip(low, high - 1).cast(to_dtype(dtype)).uop, **kw)
  @staticmethod
  def normal(*shape, mean=0.0, std=1.0, **kw) -> Tensor: return (std * Tensor.randn(*shape, **kw)) + mean
  @staticmethod
  def uniform(*shape, low=0.0, high=1.0, dtype=None, **kw) -> Tensor:
    """Uniform in [low, high); drawn as floats and cast before low is added, so an int dtype gives ints in [low, high)."""
    return ((high - low) * Tensor.rand(*shape, **kw)).cast(to_dtype(dtype) if dtype is not None else dtypes.default_float) + low
  @staticmethod
  def scaled_uniform(*shape, **kw) -> Tensor: return Tensor.uniform(*shape, low=-1.0, high=1.0, **kw) * (prod(Tensor._shape_arg(shape)) ** -0.5)
  @staticmethod
  def glorot_uniform(*shape, **kw) -> Tensor:
    s = Tensor._shape_arg(shape)
    return Tensor.uniform(*s, low=-1.0, high=1.0, **kw) * ((6 / (s[0] + prod(s[1:]))) ** 0.5)
  @staticmethod
  def kaiming_uniform(*shape, a: float = 0.01, **kw) -> Tensor:
    s = Tensor._shape_arg(shape)
    bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(prod(s[1:]))
    return Tensor.uniform(*s, low=-bound, high=bound, **kw)
  @staticmethod
  def kaiming_normal(*shape, a: float = 0.01, **kw) -> Tensor:
    s = Tensor._shape_arg(shape)
    return Tensor.normal(*s, mean=0.0, std=math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(prod(s[1:])), **kw)
  @staticmethod
  def from_url(url: str, gunzip: bool = False, **kwargs) -> Tensor:
    """The bytes at url (downloaded once into the cache, see helpers.fetch) as a uint8 tensor; gunzip unpacks them first."""
    from tinygrad.helpers import fetch
    data = fetch(url).read_bytes()
    if gunzip:
      import gzip
      data = gzip.decompress(data)
    return Tensor(data, **kwargs)
  @staticmethod
  def linspace(start, stop, steps: int, dtype: DType | str | None = None, device: str | None = None, **kw) -> Tensor:
    """`steps` evenly spaced values from start to stop, both included."""
    if steps < 0: raise ValueError(f"linspace needs a non-negative number of steps, got {steps}")
    dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
    if dt == dtypes.bool: raise ValueError("linspace with a bool dtype is not supported")
    if steps == 1: return Tensor.full((1,), start, dt, device, **kw)
    return Tensor((start + Tensor.arange(steps, device=device) * ((stop - start) / (steps - 1))).cast(dt).uop, **kw)
  @staticmethod
  def randperm(n: int, device: str | None = None, dtype: DType | str = dtypes.int32, **kw) -> Tensor:
    """A random permutation of 0..n-1 (the order that sorts n uniform draws)."""
    return Tensor(Tensor.rand(n, device=device).argsort().cast(to_dtype(dtype)).uop, **kw)
  def multinomial(self, num_samples: int = 1, replacement: bool = False) -> Tensor:
    """Indices drawn with probability proportional to self's last dim (1-d: one distribution, 2-d: one per row)."""
    if not 1 <= self.ndim <= 2 or num_samples < 1: raise ArgumentAssertionError(f"multinomial needs 1-d or 2-d weights and num_samples >= 1, got {self.shape} and {num_samples}")
    if not replacement and num_samples != 1: raise UnsupportedAssertionError("multinomial without replacement supports num_samples=1 only")
    w = self.unsqueeze(0) if self.ndim == 1 else self
    cw = w.float().cumsum(1)
    cdf = cw / cw[:, -1:]
    # a uniform draw picks the first category whose cdf exceeds it: count the cdf entries at or below it
    idx = (Tensor.rand(num_samples, w.shape[0], 1, device=self.device) >= cdf.unsqueeze(0)).sum(2).permute(1, 0)
    return (idx.squeeze(0) if self.ndim == 1 else idx).cast(dtypes.int32)
  def _multi_like(self, device: Any, make) -> Tensor:
    """A *_like of a multi-device tensor: made on one device and sharded as self is (on self's devices only)."""
    if device is not None: raise RuntimeError(f"*_like of a multi-device tensor (on {self.device}) takes no device=: it is made where self is")
    return make(None).shard(self.device, self.uop.axis)
  def full_like(self, fill_value, dtype=None, device=None, buffer: bool = False, **kw) -> Tensor:
    if isinstance(self.device, tuple):
      return self._multi_like(device, lambda d: Tensor.full(self.shape, fill_value, dtype or self.dtype, d, buffer, **kw))
    return Tensor.full(self.shape, fill_value, dtype or self.dtype, device or self.device, buffer, **kw)
  def zeros_like(self, **kw) -> Tensor: return self.full_like(0, **kw)
  def ones_like(self, **kw) -> Tensor: return self.full_like(1, **kw)
  def rand_like(self, dtype=None, device=None, **kw) -> Tensor:
    dt = dtype or (self.dtype if dtypes.is_float(self.dtype) else None)
    if isinstance(self.device, tuple): return self._multi_like(device, lambda d: Tensor.rand(*self.shape, dtype=dt, device=d, **kw))
    return Tensor.rand(*self.shape, dtype=dt, device=device or self.device, **kw)
  def randn_like(self, dtype=None, device=None, **kw) -> Tensor:
    dt = dtype or (self.dtype if dtypes.is_float(self.dtype) else None)
    if isinstance(self.device, tuple): return self._multi_like(device, lambda d: Tensor.randn(*self.shape, dtype=dt, device=d, **kw))
    return Tensor.randn(*self.shape, dtype=dt, device=device or self.device, **kw)
  def requires_grad_(self, requires_grad: bool | None = True) -> Tensor: self.requires_grad = requires_grad; return self

  # ----- movement
  def _mv(self, op: Ops, arg: Any) -> Tensor: return self._new(UOp(op, self.dtype, (self.uop,), arg))
  def reshape(self, shape, *args) -> Tensor:
    new = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,) + args
    if None in new:  # tinygrad's "keep this dim"
      if len(new) > self.ndim: raise ShapeError(f"reshape: None keeps a dim, but {new} has more entries than shape {self.shape}")
      new = tuple(self.shape[i] if d is None else d for i, d in enumerate(new))
    if new.count(-1) > 1: raise ShapeError(f"reshape: only one dimension can be -1, got {new}")
    if -1 in new:
      rest = prod(d for d in new if d != -1)
      if rest == 0 or self.numel() % rest: raise ValueError(f"reshape: cannot infer -1 reshaping {self.shape} to {new}")
      new = tuple(self.numel() // rest if d == -1 else d for d in new)
    if not all_int(new) or any(d < 0 for d in new): raise ValueError(f"reshape: bad shape {new}")
    if prod(new) != self.numel(): raise ValueError(f"reshape: size mismatch, cannot reshape {self.shape} ({self.numel()} elements) to {new}")
    return self if new == self.shape else self._mv(Ops.RESHAPE, new)
  def view(self, shape, *args) -> Tensor: return self.reshape(shape, *args)
  def permute(self, order, *args) -> Tensor:
    o = tuple(order) if isinstance(order, (tuple, list)) else (order,) + args
    o = tuple(normalize_axis(a, self.ndim) for a in o)
    if sorted(o) != list(range(self.ndim)): raise ShapeError(f"permute order {o} is not a permutation of {self.ndim} dims")
    return self if o == tuple(range(self.ndim)) else self._mv(Ops.PERMUTE, o)
  def expand(self, shape, *args) -> Tensor:
    new = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,) + args
    if len(new) < self.ndim: raise ValueError(f"expand: cannot expand {self.shape} to fewer dims {new}")
    base = (1,) * (len(new) - self.ndim) + self.shape
    new = tuple(b if n == -1 else n for b, n in zip(base, new))
    for b, n in zip(base, new):
      if b != n and b != 1: raise ValueError(f"expand: cannot expand {self.shape} to {new}")
    x = self.reshape(base) if base != self.shape else self
    return x if new == base else x._mv(Ops.EXPAND, new)
  def pad(self, padding, mode: str = "constant", value: float = 0.0) -> Tensor:
    """Flat torch-style (left, right, top, bottom, ...) or one (before, after)/None per dim; negative values crop.
    mode: constant (with value), reflect, replicate, circular."""
    if not isinstance(mode, str): raise TypeError(f"pad(padding, mode, value): mode must be a string, got {mode!r} (give value= by keyword)")
    if mode not in ("constant", "reflect", "replicate", "circular"): raise NotImplementedError(f"pad mode {mode!r} is not one of constant, reflect, replicate, circular")
    if all(isinstance(p, (int, UOp)) for p in padding):  # torch style: (left, right) pairs from the last dim backwards
      if len(padding) % 2 or len(padding) // 2 > self.ndim: raise ValueError(f"bad flat padding {padding} for shape {self.shape}")
      pairs = [(0, 0)] * self.ndim
      for i in range(len(padding) // 2): pairs[self.ndim - 1 - i] = (_int_of(padding[2 * i]), _int_of(padding[2 * i + 1]))
    else:
      if len(padding) != self.ndim: raise ValueError(f"padding {padding} needs one entry per dim of {self.shape}")
      pairs = [(0, 0) if p is None else tuple(_int_of(x) for x in p) for p in padding]
    if mode != "constant": return self._pad_mode(pairs, mode)  # type: ignore[arg-type]
    # negative padding shrinks
    shrink = tuple((-min(b, 0), s + min(a, 0)) for (b, a), s in zip(pairs, self.shape))
    x = self.shrink(shrink) if any(b != 0 or e != s for (b, e), s in zip(shrink, self.shape)) else self
    pos = tuple((max(b, 0), max(a, 0)) for b, a in pairs)
    if all(p == (0, 0) for p in pos): return x
    if x.numel() == 0: return Tensor.full(tuple(s + b + a for s, (b, a) in zip(x.shape, pos)), value, x.dtype, x.device)  # only padding is left
    out = x._mv(Ops.PAD, pos)
    if value == 0: return out
    mask = Tensor(_const(True, dtypes.bool, x.device, x.shape))._mv(Ops.PAD, pos)
    return mask.where(out, value)
  def pad_to(self, shape, *args, value: float = 0.0) -> Tensor:
    """Padded at the end of each dim up to `shape` (None keeps a dim), with `value`."""
    new = tuple(shape) + args if isinstance(shape, (tuple, list)) else (shape, *args)
    if len(new) != self.ndim: raise ValueError(f"pad_to {new} needs one size per dim of {self.shape}")
    to = tuple(s if n is None else n for s, n in zip(self.shape, new))
    if any(n < s for s, n in zip(self.shape, to)): raise ValueError(f"pad_to {new} is smaller than {self.shape}: use shrink_to")
    return self if to == self.shape else self.pad(tuple((0, n - s) for s, n in zip(self.shape, to)), value=value)
  def shrink_to(self, shape, *args) -> Tensor:
    """The first `shape` elements of each dim (None keeps a dim)."""
    new = tuple(shape) + args if isinstance(shape, (tuple, list)) else (shape, *args)
    if len(new) != self.ndim: raise ValueError(f"shrink_to {new} needs one size per dim of {self.shape}")
    return self.shrink(tuple(None if n is None else (0, n) for n in new))
  def shrink(self, arg) -> Tensor:
    arg = tuple((0, s) if a is None else tuple(_int_of(x) for x in a) for a, s in zip(arg, self.shape))
    if len(arg) != self.ndim or any(not 0 <= b <= e <= s for (b, e), s in zip(arg, self.shape)):
      raise ValueError(f"shrink {arg} is out of bounds for shape {self.shape}")
    return self if all(a == (0, s) for a, s in zip(arg, self.shape)) else self._mv(Ops.SHRINK, arg)
  def flip(self, axis, *args) -> Tensor:
    given = [normalize_axis(a, self.ndim) for a in ((axis,) + args if isinstance(axis, int) else tuple(axis))]
    if len(set(given)) != len(given): raise RuntimeError(f"flip: a dim can appear only once, got {axis if not args else (axis,) + args}")
    axes = set(given)
    return self._mv(Ops.FLIP, tuple(i in axes for i in range(self.ndim))) if axes else self
  def transpose(self, dim0: int = 1, dim1: int = 0) -> Tensor:
    order = list(range(self.ndim))
    a, b = normalize_axis(dim0, self.ndim), normalize_axis(dim1, self.ndim)
    order[a], order[b] = order[b], order[a]
    return self.permute(order)
  @property
  def T(self) -> Tensor: return self.transpose()
  @property
  def mT(self) -> Tensor: return self.transpose(-2, -1)
  def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if self.ndim == 0: return self.reshape(1)
    s, e = normalize_axis(start_dim, self.ndim), normalize_axis(end_dim, self.ndim)
    return self.reshape(self.shape[:s] + (prod(self.shape[s:e + 1]),) + self.shape[e + 1:])
  def unflatten(self, dim: int, sizes: tuple[int, ...]) -> Tensor:
    d = normalize_axis(dim, self.ndim)
    return self.reshape(self.shape[:d] + tuple(sizes) + self.shape[d + 1:])
  def rearrange(self, formula: str, **sizes: int) -> Tensor:
    """einops' rearrange: `x.rearrange("b c (h p) w -> b (c p) h w", p=2)` (tinygrad/rearrange.py)."""
    from tinygrad.rearrange import rearrange_plan
    split, perm, out = rearrange_plan(formula, self.shape, sizes)
    return self.reshape(split).permute(perm).reshape(out)
  def squeeze(self, dim: int | None = None) -> Tensor:
    if dim is None: return self.reshape(tuple(s for s in self.shape if s != 1))
    d = normalize_axis(dim, self.ndim)  # a 0-d tensor takes dim 0 and -1, as in torch
    if self.ndim == 0: return self
    return self if self.shape[d] != 1 else self.reshape(self.shape[:d] + self.shape[d + 1:])
  def unsqueeze(self, dim: int) -> Tensor:
    d = normalize_axis(dim, self.ndim + 1)
    return self.reshape(self.shape[:d] + (1,) + self.shape[d:])
  def repeat(self, repeats, *args) -> Tensor:
    reps = tuple(repeats) if isinstance(repeats, (tuple, list)) else (repeats,) + args
    base = (1,) * (len(reps) - self.ndim) + self.shape
    x = self.reshape(base)
    x = x.reshape(flatten((1, s) for s in base)).expand(flatten((r, s) for r, s in zip(reps, base)))
    return x.reshape(tuple(r * s for r, s in zip(reps, base)))
  def _slice_dim(self, d: int, s: slice) -> Tensor:
    n = self.shape[d]
    start, stop, step = s.indices(n)
    if step > 0: b, e = start, max(start, stop)
    else: b, e = max(stop + 1, 0), start + 1 if start >= stop else max(stop + 1, 0)
    x = self.shrink(tuple((b, e) if i == d else None for i in range(self.ndim)))
    if step < 0: x = x.flip(d)
    if abs(step) > 1:
      cnt = x.shape[d]
      k = ceildiv(cnt, abs(step))
      x = x.pad(tuple((0, k * abs(step) - cnt) if i == d else None for i in range(x.ndim)))
      x = x.reshape(x.shape[:d] + (k, abs(step)) + x.shape[d + 1:]).shrink(tuple((0, 1) if i == d + 1 else None for i in range(x.ndim + 1)))
      x = x.reshape(x.shape[:d] + (k,) + x.shape[d + 2:])
    return x
  def __getitem__(self, idx) -> Tensor:
    idx = idx if isinstance(idx, tuple) else (idx,)
    # a bound variable (Variable(...).bind(n)) indexes as its value: shapes here are concrete (docs/engine.md)
    idx = tuple(int(i) if isinstance(i, UOp) and i.op is Ops.BIND else i for i in idx)
    if any(isinstance(i, (Tensor, list, tuple)) for i in idx): return self._fancy_index(idx)
    if sum(i is Ellipsis for i in idx) > 1: raise IndexError("an index can only have a single ellipsis")
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if n_real > self.ndim: raise IndexError(f"too many indices ({n_real}) for a tensor of {self.ndim} dims")
    if Ellipsis in idx:
      k = idx.index(Ellipsis)
      idx = idx[:k] + (slice(None),) * (self.ndim - n_real) + idx[k + 1:]
    idx = idx + (slice(None),) * (self.ndim - sum(1 for i in idx if i is not None))
    # index each real dim in turn (an int keeps a size-1 dim for now), then reshape: ints drop their dim, None adds one
    x, d, shape = self, 0, []
    for i in idx:
      if i is None: shape.append(1); continue
      if isinstance(i, bool) or not isinstance(i, (int, slice)): raise IndexError(f"unsupported index {i!r}")
      if isinstance(i, int):
        n = x.shape[d]
        if not -n <= i < n: raise IndexError(f"index {i} is out of bounds for dim {d} with size {n}")
        i = i + n if i < 0 else i
        x = x.shrink(tuple((i, i + 1) if k == d else None for k in range(x.ndim)))
      else:
        x = x._slice_dim(d, i)
        shape.append(x.shape[d])
      d += 1
    return x.reshape(tuple(shape))
  def gather(self, dim: int, index: Tensor) -> Tensor:
    d = normalize_axis(dim, self.ndim)
    if index.ndim != self.ndim or any(i != d and ix > s for i, (ix, s) in enumerate(zip(index.shape, self.shape))):
      raise RuntimeError(f"gather: index {index.shape} needs {self.ndim} dims, each no larger than self {self.shape} outside dim {d}")
    n = self.shape[d]
    onehot = index.unsqueeze(-1) == Tensor.arange(n, device=self.device)
    x = self.shrink(tuple((0, index.shape[i]) if i != d else None for i in range(self.ndim))).unsqueeze(-1).transpose(-1, d)
    return onehot.where(x, 0).sum(-1, dtype=self.dtype)
  def cat(self, *others: Tensor, dim: int = 0) -> Tensor:
    """a.cat(b, c, dim=1) or Tensor.cat(a, b, c, dim=1)."""
    ts = [self, *others]
    d = normalize_axis(dim, self.ndim)
    for t in ts:
      if t.ndim != self.ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, self.shape)) if i != d):
        raise ValueError(f"cat: shapes {[t.shape for t in ts]} differ outside dim {d}")
    dt = least_upper_dtype(*[t.dtype for t in ts])
    total, off, out = sum(t.shape[d] for t in ts), 0, None
    for t in ts:
      p = t.cast(dt).pad(tuple((off, total - off - t.shape[d]) if i == d else None for i in range(self.ndim)))
      out = p if out is None else out + p
      off += t.shape[d]
    return out  # type: ignore[return-value]
  def stack(self, *others: Tensor, dim: int = 0) -> Tensor:
    """a.stack(b, dim=0) or Tensor.stack(a, b, dim=0) (a list of tensors works too)."""
    ts = [*self, *others] if isinstance(self, (list, tuple)) else [self, *others]
    if not ts or not all(isinstance(t, Tensor) for t in ts) or (isinstance(self, (list, tuple)) and others):
      raise ValueError(f"stack takes tensors (Tensor.stack(a, b) or Tensor.stack([a, b])), got {[type(t).__name__ for t in ts]}")
    d = normalize_axis(dim, ts[0].ndim + 1)
    return Tensor.cat(*[t.unsqueeze(d) for t in ts], dim=d)
  def split(self, sizes: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    d = normalize_axis(dim, self.ndim)
    if isinstance(sizes, int) and sizes <= 0: raise ValueError(f"split: the size of each piece must be positive, got {sizes}")
    sizes = [min(sizes, self.shape[d] - i) for i in range(0, self.shape[d], sizes)] if isinstance(sizes, int) else list(sizes)
    if sum(sizes) != self.shape[d]: raise ValueError(f"split sizes {sizes} don't add up to {self.shape[d]}")
    offs = list(itertools.accumulate(sizes, initial=0))
    return tuple(self.shrink(tuple((offs[k], offs[k + 1]) if i == d else None for i in range(self.ndim))) for k in range(len(sizes)))
  def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    d = normalize_axis(dim, self.ndim)
    if chunks <= 0: raise ValueError(f"chunk: the number of chunks must be positive, got {chunks}")
    return self.split(max(1, -(-self.shape[d] // chunks)), d)

  # ----- elementwise
  def _to_tensor(self, y: Any) -> Tensor:
    if isinstance(y, Tensor): return y
    if isinstance(y, (bool, int, float)): return Tensor(_const(y, self._scalar_dtype(y), self.device))
    return Tensor(y, device=self.device)
  def _scalar_dtype(self, y: bool | int | float) -> DType:
    """The dtype a Python scalar takes beside this tensor: the tensor's, a float beside ints the default float, an int
    beside bools the default int."""
    if isinstance(y, float) and not dtypes.is_float(self.dtype): return dtypes.default_float
    if isinstance(y, int) and not isinstance(y, bool) and self.dtype == dtypes.bool: return dtypes.default_int
    return self.dtype
  def _broadcasted(self, y: Any, reverse: bool = False, match_dtype: bool = True) -> tuple[Tensor, Tensor]:
    if isinstance(y, (bool, int, float)) and isinstance(dev := self.device, str):  # `x * 2`: most binary ops
      dt = self._scalar_dtype(y)
      if dt == self.dtype or not match_dtype:  # nothing to cast: the constant broadcast to x's shape
        c = Tensor(_scalar_to(y, dt, dev, self.shape))
        return (c, self) if reverse else (self, c)
    x, yt = self, self._to_tensor(y)
    if reverse: x, yt = yt, x
    if x.device is None or yt.device is None: x, yt = _placed_const(x, yt.device), _placed_const(yt, x.device)
    if x.device != yt.device: raise ValueError(f"tensors are on different devices: {x.device} and {yt.device}; use .to()")
    if match_dtype and x.dtype != yt.dtype:
      dt = least_upper_dtype(x.dtype, yt.dtype)
      x, yt = x.cast(dt), yt.cast(dt)
    shape = _broadcast_shape(x.shape, yt.shape)
    return x._broadcast_as(shape), yt._broadcast_as(shape)
  def _broadcast_as(self, shape: tuple[int, ...]) -> Tensor:
    """_broadcast_to a shape it broadcasts to (one from _broadcast_shape): the same nodes, made as UOps, no Tensor each."""
    return self if self.uop.shape == shape else self._new(_broadcast_uop(self.uop, shape))
  def _broadcast_to(self, shape: tuple[int, ...]) -> Tensor:
    if self.shape == shape: return self
    if self.ndim < len(shape): return self.reshape((1,) * (len(shape) - self.ndim) + self.shape).expand(shape)
    return self.expand(shape)
  def _alu(self, op: Ops, *srcs: Tensor, dtype: DType | None = None) -> Tensor:
    return self._new(UOp(op, dtype or self.dtype, (self.uop,) + tuple(s.uop for s in srcs)))
  def _bin(self, op: Ops, y: Any, reverse: bool = False) -> Tensor:
    a, b = self._broadcasted(y, reverse)
    return a._alu(op, b, dtype=dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ) else None)
  def cast(self, dtype: DType | str) -> Tensor:
    dt = to_dtype(dtype)
    return self if dt == self.dtype else self._alu(Ops.CAST, dtype=dt)
  def bitcast(self, dtype: DType | str) -> Tensor:
    dt = to_dtype(dtype)
    if dt.itemsize != self.dtype.itemsize:  # the last dimension's bytes, reinterpreted (tinygrad's rule)
      from tinygrad.tensor_bitcast import bitcast_resize
      return bitcast_resize(self, dt)
    return self._alu(Ops.BITCAST, dtype=dt)
  def float(self) -> Tensor: return self.cast(dtypes.float32)
  def half(self) -> Tensor: return self.cast(dtypes.float16)
  def bfloat16(self) -> Tensor: return self.cast(dtypes.bfloat16)
  def double(self) -> Tensor: return self.cast(dtypes.float64)
  def int(self) -> Tensor: return self.cast(dtypes.int32)
  def long(self) -> Tensor: return self.cast(dtypes.int64)
  def short(self) -> Tensor: return self.cast(dtypes.int16)
  def bool(self) -> Tensor: return self.cast(dtypes.bool)
  def _float(self) -> Tensor: return self.cast(least_upper_float(self.dtype))

  # the other operand is named x, as in tinygrad (t.add(x=...))
  def add(self, x, reverse=False) -> Tensor: return self._bin(Ops.ADD, x, reverse)
  def sub(self, x, reverse=False) -> Tensor: return self._bin(Ops.SUB, x, reverse)
  def mul(self, x, reverse=False) -> Tensor: return self._bin(Ops.MUL, x, reverse)
  def div(self, x, reverse=False, rounding_mode: str | None = None) -> Tensor:
    if rounding_mode not in (None, "trunc", "floor"): raise RuntimeError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    a, b = self._broadcasted(x, reverse)
    if rounding_mode == "trunc": return a.idiv(b) if dtypes.is_int(a.dtype) else (a / b).trunc()
    if rounding_mode == "floor": return a // b
    return a._float()._alu(Ops.FDIV, b._float())
  def idiv(self, x, reverse=False) -> Tensor:
    a, b = self._broadcasted(x, reverse)
    if not dtypes.is_int(a.dtype): raise DTypeError(f"idiv needs integer tensors, got {a.dtype}")
    return a._alu(Ops.IDIV, b)
  def __floordiv__(self, y) -> Tensor: return self._floordiv(y, False)
  def __rfloordiv__(self, y) -> Tensor: return self._floordiv(y, True)
  def _floordiv(self, y, reverse: bool) -> Tensor:
    a, b = self._broadcasted(y, reverse)
    if not dtypes.is_int(a.dtype): return (a / b).floor()
    q = a._alu(Ops.IDIV, b)  # C truncates; floor division rounds down when the signs differ and there is a remainder
    return ((a._alu(Ops.MOD, b) != 0) & ((a < 0) != (b < 0))).where(q - 1, q)
  def mod(self, x, reverse=False) -> Tensor:
    a, b = self._broadcasted(x, reverse)
    if not dtypes.is_int(a.dtype): return a - b * (a / b).floor()
    r = a._alu(Ops.MOD, b)  # numpy's sign follows the divisor
    return ((r != 0) & ((r < 0) != (b < 0))).where(r + b, r)
  def pow(self, x, reverse=False) -> Tensor:
    a, b = self._broadcasted(x, reverse)
    if dtypes.is_int(a.dtype) or a.dtype == dtypes.bool:
      if not reverse and isinstance(x, (int, float)) and not (isinstance(x, int) and x >= 0):
        raise RuntimeError(f"pow: an integer base needs a non-negative integer exponent, got {x!r} (cast the base to float)")
      # in double, exact for every result below 2**53 (float32 would round 11**7)
      return a.double()._alu(Ops.POW, b.double()).round().cast(a.dtype) if a.dtype != dtypes.bool else a.float()._alu(Ops.POW, b.float()).cast(a.dtype)
    return a._alu(Ops.POW, b)
  def maximum(self, x) -> Tensor:
    a, b = self._broadcasted(x)
    return a._alu(Ops.MAX, b)
  def minimum(self, x) -> Tensor:
    a, b = self._broadcasted(x)
    return (a < b).where(a, b) if not dtypes.is_float(a.dtype) else -((-a)._alu(Ops.MAX, -b))
  def where(self, x, y) -> Tensor:
    cond = self if self.dtype == dtypes.bool else self != 0
    xt = x if isinstance(x, Tensor) else None
    yt = y if isinstance(y, Tensor) else None
    if xt is None and yt is None:
      dt = dtypes.from_py(x) if type(x) == type(y) else least_upper_dtype(dtypes.from_py(x), dtypes.from_py(y))
      xt, yt = Tensor(_const(x, dt, self.device)), Tensor(_const(y, dt, self.device))
    # a scalar beside a tensor: as _broadcasted takes it (the constant _to_tensor makes, broadcast the same way)
    if xt is None: xb, yb = yt._broadcasted(x, reverse=True)  # type: ignore[union-attr]
    elif yt is None: xb, yb = xt._broadcasted(y)
    else: xb, yb = xt._broadcasted(yt)  # type: ignore[union-attr]
    shape = _broadcast_shape(cond.shape, xb.shape)
    return cond._broadcast_as(shape)._alu(Ops.WHERE, xb._broadcast_as(shape), yb._broadcast_as(shape), dtype=xb.dtype)
  def logical_not(self) -> Tensor: return self.bool()._alu(Ops.NEG)
  def neg(self) -> Tensor: return -self
  def __neg__(self) -> Tensor: return self.logical_not() if self.dtype == dtypes.bool else self._alu(Ops.NEG)
  def __invert__(self) -> Tensor:
    if self.dtype == dtypes.bool: return self.logical_not()
    if not dtypes.is_int(self.dtype): raise DTypeError(f"~ needs an integer or bool tensor, got {self.dtype}")
    return self._bin(Ops.XOR, -1 if not dtypes.is_unsigned(self.dtype) else dtypes.max(self.dtype))
  def _bitwise(self, op: Ops, y, reverse=False) -> Tensor:
    a, b = self._broadcasted(y, reverse)
    if not (dtypes.is_int(a.dtype) or a.dtype == dtypes.bool): raise DTypeError(f"bitwise ops need integer or bool tensors, got {a.dtype}")
    return a._alu(op, b)
  def bitwise_and(self, x, reverse=False) -> Tensor: return self._bitwise(Ops.AND, x, reverse)
  def bitwise_or(self, x, reverse=False) -> Tensor: return self._bitwise(Ops.OR, x, reverse)
  def bitwise_xor(self, x, reverse=False) -> Tensor: return self._bitwise(Ops.XOR, x, reverse)
  xor = bitwise_xor
  def bitwise_not(self) -> Tensor: return ~self
  def lshift(self, x, reverse=False) -> Tensor: return self._bitwise(Ops.SHL, x, reverse)
  def rshift(self, x, reverse=False) -> Tensor: return self._bitwise(Ops.SHR, x, reverse)
  __add__ = lambda self, y: self.add(y); __radd__ = lambda self, y: self.add(y, True)
  __sub__ = lambda self, y: self.sub(y); __rsub__ = lambda self, y: self.sub(y, True)
  __mul__ = lambda self, y: self.mul(y); __rmul__ = lambda self, y: self.mul(y, True)
  __truediv__ = lambda self, y: self.div(y); __rtruediv__ = lambda self, y: self.div(y, True)
  __mod__ = lambda self, y: self.mod(y); __rmod__ = lambda self, y: self.mod(y, True)
  __pow__ = lambda self, y: self.pow(y); __rpow__ = lambda self, y: self.pow(y, True)
  __and__ = lambda self, y: self._bitwise(Ops.AND, y); __rand__ = lambda self, y: self._bitwise(Ops.AND, y, True)
  __or__ = lambda self, y: self._bitwise(Ops.OR, y); __ror__ = lambda self, y: self._bitwise(Ops.OR, y, True)
  __xor__ = lambda self, y: self._bitwise(Ops.XOR, y); __rxor__ = lambda self, y: self._bitwise(Ops.XOR, y, True)
  __lshift__ = lambda self, y: self.lshift(y); __rshift__ = lambda self, y: self.rshift(y)
  __rlshift__ = lambda self, y: self.lshift(y, True); __rrshift__ = lambda self, y: self.rshift(y, True)
  __matmul__ = lambda self, y: self.matmul(y); __rmatmul__ = lambda self, y: Tensor._to_tensor(self, y).matmul(self)
  __lt__ = lambda self, y: self._bin(Ops.CMPLT, y); __gt__ = lambda self, y: self._bin(Ops.CMPLT, y, True)
  __ge__ = lambda self, y: (self < y).logical_not(); __le__ = lambda self, y: (self > y).logical_not()
  __ne__ = lambda self, y: self._bin(Ops.CMPNE, y)  # type: ignore[assignment]
  __eq__ = lambda self, y: self._bin(Ops.CMPEQ, y)  # type: ignore[assignment]
  def __iadd__(self, y): return self.assign(self + y)
  def __isub__(self, y): return self.assign(self - y)
  def __imul__(self, y): return self.assign(self * y)
  def __itruediv__(self, y): return self.assign(self / y)
  def __ifloordiv__(self, y): return self.assign(self // y)
  def __ipow__(self, y): return self.assign(self ** y)
  def __imatmul__(self, y): return self.assign(self @ y)
  def __iand__(self, y): return self.assign(self & y)
  def __ior__(self, y): return self.assign(self | y)
  def __ixor__(self, y): return self.assign(self ^ y)
  def __ilshift__(self, y): return self.assign(self << y)
  def __irshift__(self, y): return self.assign(self >> y)
  def eq(self, x) -> Tensor: return self == x
  def ne(self, x) -> Tensor: return self != x

  # unary math, in terms of the few ALU ops the devices implement
  def exp2(self) -> Tensor: return self._float()._alu(Ops.EXP2)
  def log2(self) -> Tensor: return self._float()._alu(Ops.LOG2)
  def exp(self) -> Tensor: return (self._float() * (1 / math.log(2))).exp2()
  def log(self) -> Tensor: return self.log2() * math.log(2)
  def sqrt(self) -> Tensor: return self._float()._alu(Ops.SQRT)
  def rsqrt(self) -> Tensor: return self.sqrt().reciprocal()
  def reciprocal(self) -> Tensor: return self._float()._alu(Ops.RECIP)
  def sin(self) -> Tensor: return self._float()._alu(Ops.SIN)
  def cos(self) -> Tensor: return ((math.pi / 2) - self._float()).sin()
  def tan(self) -> Tensor: return self.sin() / self.cos()
  def trunc(self) -> Tensor: return self if not dtypes.is_float(self.dtype) else self._alu(Ops.TRUNC)
  def floor(self) -> Tensor:
    t = self.trunc()
    return self if not dtypes.is_float(self.dtype) else (self < t).where(t - 1, t)
  def ceil(self) -> Tensor:
    t = self.trunc()
    return self if not dtypes.is_float(self.dtype) else (self > t).where(t + 1, t)
  def round(self) -> Tensor:  # half to even, like numpy
    if not dtypes.is_float(self.dtype): return self
    f = (self + 0.5).floor()
    tie = (f - self) == 0.5
    return (tie & ((f * 0.5).floor() * 2 != f)).where(f - 1, f)
  def square(self) -> Tensor: return self * self
  def abs(self) -> Tensor:  # x * sign(x) for floats: its gradient is 0 at 0, as in torch and tinygrad
    if dtypes.is_unsigned(self.dtype) or self.dtype == dtypes.bool: return self
    return self * self.sign() if dtypes.is_float(self.dtype) else (self < 0).where(-self, self)
  def sign(self) -> Tensor: return (self > 0).cast(self.dtype) - (self < 0).cast(self.dtype) if self.dtype != dtypes.bool else self
  def relu(self) -> Tensor: return (self > 0).where(self, 0)
  def relu6(self) -> Tensor: return self.relu() - (self - 6).relu()
  def leaky_relu(self, neg_slope: float = 0.01) -> Tensor: return (self > 0).where(self, self * neg_slope)
  def elu(self, alpha: float = 1.0) -> Tensor: return self.relu() - alpha * (1 - self.exp()).relu()
  def sigmoid(self) -> Tensor:
    x = self._float()
    out = (1 + (-x).exp()).reciprocal()
    # its derivative as s*(1-s): the op-by-op one is exp(-x) * (...)^2 = inf * 0 for x below about -88
    if not Tensor.no_grad:
      from tinygrad.gradient import custom_vjp
      custom_vjp[out.uop] = ((x.uop,), lambda g: (g * (s := (1 + (-x).exp()).reciprocal()) * (1 - s),))
    return out
  def hardsigmoid(self, alpha: float = 1 / 6, beta: float = 0.5) -> Tensor: return (alpha * self + beta).relu() - (alpha * self + beta - 1).relu()
  def tanh(self) -> Tensor: return 2.0 * (2.0 * self._float()).sigmoid() - 1.0
  def sinh(self) -> Tensor: return (self.exp() - (-self).exp()) / 2
  def cosh(self) -> Tensor: return (self.exp() + (-self).exp()) / 2
  def silu(self) -> Tensor: return self * self.sigmoid()
  swish = silu
  def gelu(self, approximate: str = "tanh") -> Tensor:
    if approximate == "tanh": return 0.5 * self * (1 + (math.sqrt(2 / math.pi) * (self + 0.044715 * self * self * self)).tanh())
    if approximate == "none": return self * 0.5 * (1.0 + (self * (1 / math.sqrt(2))).erf())
    raise RuntimeError(f"gelu: approximate must be 'tanh' or 'none', got {approximate!r}")
  def quick_gelu(self) -> Tensor: return self * (self * 1.702).sigmoid()
  def softplus(self, beta: float = 1.0) -> Tensor: return (1 / beta) * (self * beta).logaddexp(0.0)  # no exp overflow for large x
  def mish(self) -> Tensor: return self * self.softplus().tanh()
  def clip(self, min_=None, max_=None) -> Tensor:
    """Values below min_ become min_, above max_ become max_; at a bound the gradient passes through, as in torch."""
    if min_ is None and max_ is None: raise RuntimeError("clip needs at least one of min_ and max_")
    if max_ is None: return (self < min_).where(min_, self)
    if min_ is None: return (self > max_).where(max_, self)
    # both bounds tested on self itself (min_ > max_ gives max_ everywhere, as torch): a test on the first where's
    # result inside a nested where is miscompiled by gcc 12 -O3 -march=native (see docs/engine.md)
    scalars = isinstance(min_, (int, float)) and isinstance(max_, (int, float))
    above = self > max_ if scalars and min_ <= max_ else (self > max_) | (min_ > max_)
    return above.where(max_, (self < min_).where(min_, self))
  clamp = clip
  def lerp(self, end: Tensor, weight) -> Tensor:
    # uint8 (images) blend in fixed point, as tinygrad and torch do (tinygrad 0.14 uses 7 bits and an int8 difference,
    # which wraps for ends more than 127 apart; here 14 bits, torch's, and the exact difference)
    if self.dtype == dtypes.uint8 and isinstance(weight, Tensor): return self._lerp_u8(end, (weight * (1 << 14) + 0.5).cast(dtypes.int32), 14)
    return self + (end - self) * weight
  def _lerp_u8(self, end: Tensor, w: Tensor, bits: int) -> Tensor:
    """self + (end - self) * w / 2**bits for uint8 tensors and an int32 weight w, rounded half up."""
    a = self.cast(dtypes.int32)
    return ((a * (1 << bits) + (end.cast(dtypes.int32) - a) * w + (1 << (bits - 1))) >> bits).cast(dtypes.uint8)
  def isnan(self) -> Tensor: return self != self
  def isinf(self, detect_positive: bool = True, detect_negative: bool = True) -> Tensor:
    if detect_positive and detect_negative: return (self == math.inf) | (self == -math.inf)
    if detect_positive or detect_negative: return self == (math.inf if detect_positive else -math.inf)
    return self.zeros_like(dtype=dtypes.bool)
  def isfinite(self) -> Tensor: return (self.isinf() | self.isnan()).logical_not()
  def softsign(self) -> Tensor: return self / (1 + self.abs())
  def hardswish(self) -> Tensor: return self * (self + 3).relu6() * (1 / 6)
  def hardtanh(self, min_val: float = -1, max_val: float = 1) -> Tensor: return self.clip(min_val, max_val)
  def celu(self, alpha: float = 1.0) -> Tensor: return self.maximum(0) + (alpha * ((self / alpha).exp() - 1)).minimum(0)
  def selu(self, alpha: float = 1.67326, gamma: float = 1.0507) -> Tensor: return gamma * (self >= 0).detach().where(self, alpha * (self.exp() - 1))

  # ----- reductions
  def _axes(self, axis) -> tuple[int, ...]:
    if axis is None: return tuple(range(self.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted({normalize_axis(a, self.ndim) for a in axes}))
  def _reduce(self, op: Ops, axis=None, keepdim: bool = False) -> Tensor:
    axes = self._axes(axis)
    if self.ndim == 0: return self
    if axes and any(self.shape[a] == 0 for a in axes):  # nothing to combine: every output is the op's identity
      out = Tensor.full(tuple(1 if i in axes else s for i, s in enumerate(self.shape)), {Ops.ADD: 0, Ops.MUL: 1}.get(op, dtypes.min(self.dtype)), self.dtype, self.device)
    else: out = self._new(UOp(Ops.REDUCE_AXIS, self.dtype, (self.uop,), (op, axes))) if axes else self
    return out if keepdim else out.reshape(tuple(s for i, s in enumerate(self.shape) if i not in axes))
  @staticmethod
  def _sum_dtype(dt: DType) -> DType:
    if dt in (dtypes.bool, dtypes.int8, dtypes.int16): return dtypes.int32
    if dt in (dtypes.uint8, dtypes.uint16): return dtypes.uint32
    return dt
  def sum(self, axis=None, keepdim: bool = False, dtype: DType | None = None) -> Tensor:
    acc = to_dtype(dtype) if dtype is not None else Tensor._sum_dtype(self.dtype)
    acc_inner = dtypes.float32 if acc in (dtypes.float16, *NO_NUMPY) else acc
    out = self.cast(acc_inner)._reduce(Ops.ADD, axis, keepdim)
    return out.cast(acc)
  def prod(self, axis=None, keepdim: bool = False, dtype: DType | None = None) -> Tensor:
    acc = to_dtype(dtype) if dtype is not None else Tensor._sum_dtype(self.dtype)
    return self.cast(acc)._reduce(Ops.MUL, axis, keepdim)
  def max(self, axis=None, keepdim: bool = False) -> Tensor: return self._reduce(Ops.MAX, axis, keepdim)
  def _inverse(self) -> Tensor:
    """An order-reversing map that is its own inverse and never overflows: -x for floats, ~x for ints (-x would
    wrap the most negative int onto itself)."""
    return self.logical_not() if self.dtype == dtypes.bool else -self if dtypes.is_float(self.dtype) else ~self
  def min(self, axis=None, keepdim: bool = False) -> Tensor: return self._inverse().max(axis, keepdim)._inverse()
  def any(self, axis=None, keepdim: bool = False) -> Tensor: return self.bool().max(axis, keepdim)
  def all(self, axis=None, keepdim: bool = False) -> Tensor: return self.logical_not().any(axis, keepdim).logical_not()
  def mean(self, axis=None, keepdim: bool = False) -> Tensor:
    x = self._float() if not dtypes.is_float(self.dtype) else self
    n = prod(self.shape[a] for a in self._axes(axis))
    s = x.sum(axis, keepdim)
    return s / n if n else s * math.nan
  def var(self, axis=None, keepdim: bool = False, correction: int = 1) -> Tensor:
    n = prod(self.shape[a] for a in self._axes(axis))
    sq = (self - self.mean(axis, keepdim=True)).square().sum(axis, keepdim)
    return sq / max(0, n - correction)
  def std(self, axis=None, keepdim: bool = False, correction: int = 1) -> Tensor: return self.var(axis, keepdim, correction).sqrt()
  def var_mean(self, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Tensor, Tensor]:
    return self.var(axis, keepdim, correction), self.mean(axis, keepdim)
  def std_mean(self, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Tensor, Tensor]:
    return self.std(axis, keepdim, correction), self.mean(axis, keepdim)
  def logsumexp(self, axis=None, keepdim: bool = False) -> Tensor:
    m = self.max(axis, keepdim=True)
    out = (self - m).exp().sum(axis, keepdim=True).log() + m
    return out if keepdim else out.reshape(tuple(s for i, s in enumerate(self.shape) if i not in self._axes(axis)))
  def _shifted(self, axis, dtype) -> Tensor:
    """self minus its max along axis: the max is a constant shift, it gets no gradient (softmax doesn't depend on it)."""
    m = self - self.max(axis, keepdim=True).detach()
    return m.cast(dtype) if dtype is not None else m
  def softmax(self, axis: int = -1, dtype: DType | str | None = None) -> Tensor:
    e = self._shifted(axis, dtype).exp()
    # times the reciprocal, not a division: the backward then reuses the forward's sum, and at a gradient of ones
    # the result is s * (1 - s * sum) rounded once
    return e * e.sum(axis, keepdim=True).reciprocal()
  def log_softmax(self, axis: int = -1, dtype: DType | str | None = None) -> Tensor:
    m = self._shifted(axis, dtype)
    return m - m.exp().sum(axis, keepdim=True).log()
  def argmax(self, axis: int | None = None, keepdim: bool = False) -> Tensor:
    if axis is None: return self.flatten().argmax(0)
    a = normalize_axis(axis, self.ndim)
    if self.ndim == 0: return Tensor.zeros((), dtype=dtypes.int32, device=self.device)
    n = self.shape[a]
    # the first index of the max: n - max over (is_max * (n - i))
    rev = Tensor.arange(n, 0, -1, device=self.device).reshape((n,) + (1,) * (self.ndim - a - 1))
    return (n - ((self == self.max(a, keepdim=True)) * rev).max(a, keepdim)).cast(dtypes.int32)
  def argmin(self, axis: int | None = None, keepdim: bool = False) -> Tensor:
    return self._inverse().argmax(axis, keepdim)
  def cumsum(self, axis: int = 0) -> Tensor:
    a = normalize_axis(axis, self.ndim)
    if self.ndim == 0: return self
    n = self.shape[a]
    x = self.transpose(a, -1)
    # pad-and-window: row i sums elements 0..i
    y = x.unsqueeze(-2).expand(x.shape[:-1] + (n, n))
    tri = Tensor.arange(n, device=self.device).reshape(n, 1) >= Tensor.arange(n, device=self.device).reshape(1, n)
    return tri.where(y, 0).sum(-1, dtype=self.dtype).transpose(a, -1)

  # ----- matmul
  def dot(self, w: Tensor, dtype: DType | str | None = None) -> Tensor:
    """self @ w; dtype is the result's (and the accumulation's) dtype, by default the operands' common one."""
    if self.ndim == 0 or w.ndim == 0: raise MatmulShapeError(f"matmul needs at least 1-d tensors, got {self.shape} and {w.shape}")
    x, wt = self, w
    if x.device != wt.device: raise ValueError(f"matmul of tensors on different devices: {x.device} and {wt.device}")
    k = x.shape[-1]
    kw = wt.shape[-2] if wt.ndim > 1 else wt.shape[0]
    if k != kw: raise MatmulShapeError(f"matmul shape mismatch: {self.shape} @ {w.shape} (inner dims {k} != {kw})")
    dt = least_upper_dtype(x.dtype, wt.dtype)
    x, wt = x.cast(dt), wt.cast(dt)
    xr = x.reshape(x.shape[:-1] + (1,) * min(wt.ndim - 1, 1) + (k,))
    wr = wt.reshape(wt.shape[:-2] + (1,) * min(x.ndim - 1, 1) + wt.shape[-2:]).transpose(-1, -2) if wt.ndim > 1 else wt
    return (xr * wr).sum(-1, dtype=dt if dtype is None else to_dtype(dtype))
  def matmul(self, x: Tensor, reverse: bool = False, dtype: DType | str | None = None) -> Tensor:
    return x.dot(self, dtype) if reverse else self.dot(x, dtype)
  def linear(self, weight: Tensor, bias: Tensor | None = None, dtype: DType | str | None = None) -> Tensor:
    x = self.mul(weight) if weight.ndim == 1 else self.dot(weight, dtype)
    return x + bias if bias is not None else x
  @staticmethod
  def einsum(formula: str, *operands, dtype: DType | str | None = None) -> Tensor:
    """Sum of products over the subscripts in `formula` ('ij,jk->ik'; '...' broadcasts; no '->' keeps the letters
    named once, in alphabetical order). A letter twice in one operand takes its diagonal."""
    xs = list(operands[0]) if len(operands) == 1 and isinstance(operands[0], (list, tuple)) else list(operands)
    lhs, arrow, out = formula.replace(" ", "").partition("->")
    ins = lhs.split(",")
    if len(ins) != len(xs): raise ValueError(f"einsum: {formula!r} names {len(ins)} operands, got {len(xs)}")
    if "..." in lhs:  # each broadcast dim gets a letter no formula uses
      n_ell = max(t.ndim - len(s) + 3 for s, t in zip(ins, xs) if "..." in s)
      ell = "".join(chr(0x3b1 + i) for i in range(n_ell))
      ins = [s.replace("...", ell[n_ell - (t.ndim - len(s) + 3):]) for s, t in zip(ins, xs)]
    else: ell = ""
    if arrow: out = out.replace("...", ell)
    else: out = ell + "".join(sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1))
    if len(set(out)) != len(out): raise ValueError(f"einsum: output subscripts {out!r} repeat a letter")
    sizes: dict[str, int] = {}
    terms = []
    for s, t in zip(ins, xs):
      if len(s) != t.ndim: raise ShapeError(f"einsum: subscripts {s!r} name {len(s)} dims, the operand has shape {t.shape}")
      while (c := next((c for c in s if s.count(c) > 1), None)) is not None:  # diagonal: (..., n, n) -> (..., n*(n+1)) rows -> first column
        a, b = s.index(c), s.index(c, s.index(c) + 1)
        rest = [i for i in range(t.ndim) if i not in (a, b)]
        n = t.shape[a]
        t = t.permute(rest + [a, b]).flatten(-2).pad(tuple(None for _ in rest) + ((0, n),)).unflatten(-1, (n, n + 1))[..., 0]
        s = "".join(s[i] for i in rest) + c
      for c, n in zip(s, t.shape):
        if sizes.get(c, n) not in (n, 1) and n != 1: raise ShapeError(f"einsum: subscript {c!r} has sizes {sizes[c]} and {n}")
        sizes[c] = max(sizes.get(c, 1), n)
      terms.append((s, t))
    if unknown := set(out) - set(sizes): raise ValueError(f"einsum: output subscripts {sorted(unknown)} are not in the inputs")
    letters = list(out) + sorted(set(sizes) - set(out))
    aligned = [t.permute([s.index(c) for c in letters if c in s]).reshape([t.shape[s.index(c)] if c in s else 1 for c in letters]) for s, t in terms]
    prod_ = aligned[0]
    for t in aligned[1:]: prod_ = prod_ * t
    res = prod_._broadcast_to(tuple(sizes[c] for c in letters))
    res = res.sum(tuple(range(len(out), len(letters)))) if len(letters) > len(out) else res
    return res.cast(dtype) if dtype is not None else res
  def sequential(self, ll: list) -> Tensor:
    x = self
    for f in ll: x = f(x)
    return x

  # ----- autograd (the rules live in gradient.py)
  def _seed_grad(self) -> Tensor:
    if self.numel() != 1: raise RuntimeError(f"gradient of a non-scalar tensor of shape {self.shape} needs an explicit `gradient`")
    return Tensor(_const(1.0, self.dtype if dtypes.is_float(self.dtype) else dtypes.default_float, self.device, self.shape))
  def gradient(self, *targets: Tensor, gradient: Tensor | None = None) -> list[Tensor]:
    """d(self)/d(target) for each target; self must be a scalar unless `gradient` is given."""
    from tinygrad.gradient import compute_gradient
    if gradient is None: gradient = self._seed_grad()
    if gradient.shape != self.shape: raise ValueError(f"gradient shape {gradient.shape} != tensor shape {self.shape}")
    grads = compute_gradient(self.uop, gradient, {t.uop for t in targets})
    return [g if (g := grads.get(t.uop)) is not None else t.zeros_like() for t in targets]
  @_tensor_call
  def backward(self, gradient: Tensor | None = None) -> Tensor:
    """Accumulate d(self)/d(t) into t.grad for every live float tensor t in self's graph whose requires_grad is not
    False (None, the default of Tensor.rand and of layer weights, counts), as tinygrad 0.14 does."""
    if Tensor.no_grad: raise RuntimeError("backward() inside Tensor.test() (Tensor.no_grad is set): gradients are off there")
    live = list(Tensor._live)
    root, topo = Tensor._through_realized(self.uop, live)
    in_graph = set(topo)
    tensors = [t for t in live if t._requires_grad is not False and (t.uop in in_graph or t._lazy in in_graph) and dtypes.is_float(t.dtype)]
    cap = Tensor._grad_capable(topo, tensors + [t for t in live if t._requires_grad is False])
    tensors = [t for t in tensors if cap.get(t.uop if t.uop in in_graph else t._lazy, True)]
    # a tensor realized after this graph was built appears in it as its earlier, lazy graph
    targets = [Tensor(t.uop if t.uop in in_graph else t._lazy) for t in tensors]  # type: ignore[arg-type]
    for t, g in zip(tensors, Tensor(root).gradient(*targets, gradient=gradient if gradient is not None else self._seed_grad())):
      t.grad = g if t.grad is None else t.grad + g
    return self
  @staticmethod
  def _grad_capable(topo: list[UOp], held: list[Tensor]) -> dict[UOp, bool]:
    """For each uop a tensor holds: whether that tensor takes a gradient. As in tinygrad, requires_grad=False
    propagates: a result computed only from tensors that don't (x * m, both False) doesn't either. True always does;
    None (the default) does unless every tensor it was computed from doesn't."""
    rank: dict[UOp, int] = {}
    for t in held: rank[t.uop] = max(rank.get(t.uop, 0), {False: 0, None: 1, True: 2}[t._requires_grad])
    from_any: dict[UOp, bool] = {}
    from_grad: dict[UOp, bool] = {}
    cap: dict[UOp, bool] = {}
    for u in topo:
      from_any[u] = any(s in rank or from_any[s] for s in u.src)
      from_grad[u] = any(cap[s] if s in rank else from_grad[s] for s in u.src)
      if u in rank: cap[u] = rank[u] == 2 or (rank[u] == 1 and (from_grad[u] or not from_any[u]))
    return cap
  @staticmethod
  def _through_realized(root: UOp, live: list[Tensor]) -> tuple[UOp, list[UOp]]:
    """root with each intermediate that was realized before it was built (`out.numpy()`, then `out.sum().backward()`)
    back as the lazy graph it came from, where that graph leads to a tensor that requires grad: the gradient flows
    through it, as in PyTorch. Tensors updated in place (parameters, running statistics) stay buffers. Also returns
    the new root's toposort (usually root's own: nothing was realized early)."""
    wants = {t.uop for t in live if t.requires_grad}
    lazy = {t.uop: t._lazy for t in live if t._lazy is not None and t._lazy.op is not Ops.ASSIGN and not t.requires_grad}
    topo = root.toposort()
    while sub := {u: lz for u in topo if (lz := lazy.get(u)) is not None and any(v in wants for v in lz.toposort())}:
      root = root.substitute(sub)
      topo = root.toposort()
    return root, topo
  @staticmethod
  def train(mode: bool = True):
    """Decorator/context: run with Tensor.training set."""
    from tinygrad.helpers import Context
    return Context(TRAINING=int(mode))
  @staticmethod
  def test(mode: bool = True) -> _NoGrad:
    """Decorator/context for inference (tinygrad's `@Tensor.test()`): Tensor.no_grad is set, so backward refuses."""
    return _NoGrad(mode)

  # ----- neural network functions
  @staticmethod
  def _reduction(loss: Tensor, reduction: str) -> Tensor:
    if reduction not in ("mean", "sum", "none"): raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss
  def one_hot(self, num_classes: int = -1) -> Tensor:
    """(..., num_classes) of 0/1; num_classes -1 (torch's default) takes the largest class + 1, which reads the data."""
    if not dtypes.is_int(self.dtype): raise RuntimeError(f"one_hot needs an integer tensor, got {self.dtype}")
    if num_classes == -1: num_classes = int(self.max().item()) + 1 if self.numel() else 0
    if num_classes < 0: raise ValueError(f"one_hot: num_classes must be non-negative (or -1), got {num_classes}")
    return (self.unsqueeze(-1) == Tensor.arange(num_classes, device=self.device)).cast(dtypes.default_int)
  def sparse_categorical_crossentropy(self, Y: Tensor, ignore_index: int = -1, label_smoothing: float = 0.0, reduction: str = "mean") -> Tensor:
    # as tinygrad, labels broadcast against the logits' batch dims (one row of logits scored against several labels)
    try: _broadcast_shape(Y.shape, self.shape[:-1])
    except ValueError: raise ValueError(f"labels of shape {Y.shape} don't match logits of shape {self.shape}") from None
    logp = self.log_softmax(-1)
    mask = (Y != ignore_index).cast(logp.dtype)
    y = (Y.unsqueeze(-1) == Tensor.arange(self.shape[-1], device=self.device)).cast(logp.dtype) * mask.unsqueeze(-1)
    smooth = -logp.mean(-1) * mask
    loss = -(logp * y).sum(-1) * (1 - label_smoothing) + smooth * label_smoothing
    if reduction == "none": return loss
    if reduction == "sum": return loss.sum()
    return loss.sum() / mask.sum()
  def cross_entropy(self, Y: Tensor, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """torch's cross_entropy: logits with the classes on dim 1 (dim 0 for 1-d); Y is class indices (self's shape without
    that dim) or class probabilities (self's shape)."""
    if not 0.0 <= label_smoothing <= 1.0: raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    if reduction not in ("mean", "sum", "none"): raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    cdim = 0 if self.ndim == 1 else 1
    if Y.shape != self.shape:
      if Y.shape != self.shape[:cdim] + self.shape[cdim + 1:]:
        raise RuntimeError(f"cross_entropy: targets of shape {Y.shape} match neither logits {self.shape} nor them without the class dim {cdim}")
      C = self.shape[cdim]
      Y = (Y.unsqueeze(cdim) == Tensor.arange(C, device=self.device).reshape((C,) + (1,) * (self.ndim - cdim - 1))).cast(self.dtype)
    Y = Y * (1 - label_smoothing) + label_smoothing / self.shape[cdim]
    return Tensor._reduction(-(self.log_softmax(cdim) * Y).sum(cdim), reduction)
  def nll_loss(self, Y: Tensor, weight: Tensor | None = None, ignore_index: int | None = None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of the classes Y, given log-probabilities self of shape (N, C, ...)."""
    if reduction not in ("mean", "sum", "none"): raise ValueError(f"nll_loss: reduction must be mean, sum or none, got {reduction!r}")
    if self.ndim < 2 or Y.shape != self.shape[:1] + self.shape[2:]: raise ValueError(f"nll_loss: targets of shape {Y.shape} don't match input {self.shape}")
    C = self.shape[1]
    onehot = Y.unsqueeze(1) == Tensor.arange(C, device=self.device).reshape((C,) + (1,) * (Y.ndim - 1))
    w = Tensor.ones(*Y.shape, dtype=self.dtype, device=self.device) if weight is None else weight[Y].cast(self.dtype)
    if ignore_index is not None: w = (Y != ignore_index).where(w, 0)
    nll = -onehot.where(self, 0).sum(1) * w
    return nll.sum() / w.sum() if reduction == "mean" else nll.sum() if reduction == "sum" else nll
  def scaled_dot_product_attention(self, key: Tensor, value: Tensor, attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                   is_causal: bool = False, enable_gqa: bool = False) -> Tensor:
    """softmax(q @ k^T / sqrt(d) + mask) @ v. A bool mask keeps where True; dropout applies in training, as in tinygrad."""
    if enable_gqa:  # each group of query heads shares one key/value head
      key, value = (t.repeat_interleave(self.shape[-3] // t.shape[-3], dim=-3) for t in (key, value))
    qk = self.matmul(key.transpose(-2, -1)) * (1 / math.sqrt(self.shape[-1]))
    if is_causal:
      if attn_mask is not None: raise RuntimeError("scaled_dot_product_attention: give attn_mask or is_causal, not both")
      attn_mask = Tensor.ones(*qk.shape[-2:], dtype=dtypes.bool, device=self.device).tril()
    if attn_mask is not None: qk = attn_mask.where(qk, -math.inf) if attn_mask.dtype == dtypes.bool else qk + attn_mask
    return qk.softmax(-1).dropout(dropout_p) @ value
  def binary_crossentropy(self, Y: Tensor, reduction: str = "mean") -> Tensor:
    return Tensor._reduction(-(Y * self.log() + (1 - Y) * (1 - self).log()), reduction)
  def binary_crossentropy_logits(self, Y: Tensor, reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """binary_crossentropy of sigmoid(self), computed in log space (finite for any logit); pos_weight scales the
    positive term, per class."""
    pos = self.logsigmoid() * Y * (1 if pos_weight is None else pos_weight)
    return Tensor._reduction(-(pos + (-self).logsigmoid() * (1 - Y)), reduction)
  def dropout(self, p: float = 0.5) -> Tensor:
    if not Tensor.training or p == 0: return self
    if not 0 <= p <= 1: raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if p == 1: return self * 0  # everything dropped: zeros, and a zero gradient (torch's dropout(p=1))
    # a multi-device tensor's mask is drawn like it (each shard its own draws), as tinygrad's rand_like
    # the draws fuse into the mask's kernel (tinygrad's dropout draws contiguous=False too)
    r = self._multi_like(None, lambda d: Tensor.rand(*self.shape, contiguous=False)) if isinstance(self.device, tuple) \
      else Tensor.rand(*self.shape, device=self.device, contiguous=False)
    return self * (r >= p).cast(self.dtype) * (1 / (1 - p))
  def layernorm(self, axis=-1, eps: float = 1e-5) -> Tensor:
    y = self - self.mean(axis, keepdim=True)
    return y * (y.square().mean(axis, keepdim=True) + eps).rsqrt()
  def batchnorm(self, weight: Tensor | None, bias: Tensor | None, mean: Tensor, invstd: Tensor, axis=1) -> Tensor:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    shape = tuple(s if i in axes else 1 for i, s in enumerate(self.shape))
    x = self - mean.reshape(shape)
    if weight is not None: x = x * weight.reshape(shape)
    x = x * invstd.reshape(shape) if invstd.ndim else x * invstd
    return x + bias.reshape(shape) if bias is not None else x

Tensor._live, Tensor._pending_assigns, Tensor._shared = _WeakTensors(), _WeakTensors(), weakref.WeakSet()
Tensor._done_assigns = weakref.WeakKeyDictionary()
Tensor._contiguous = _WeakTensors()  # contiguous() results not yet realized
