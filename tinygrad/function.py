"""@function: a Python function (or method) over Tensors becomes one CALL node in the graph.

The Tensors reachable from the arguments (a method's self, its layers and their weights, walked through attributes,
lists, tuples and dicts) are the call's parameters. The body is traced once per input signature (the parameters'
shapes, dtypes and devices, the other argument values, Tensor.training): while it runs each parameter Tensor holds a
PARAM, so the body's graph reads its inputs by slot and holds no buffer. A later call of the same signature runs no
Python: it makes CALL(the same body, its own tensors), so the schedule cache and the compiled kernels are reused.
Tensors the body reads that are not reachable from the arguments are implicit inputs: refused unless
allow_implicit=True, which makes them extra parameters. Writes the body makes (BatchNorm's running statistics) are
extra outputs, assigned after the call, again on every later call. A body that draws random numbers is traced
again on every call (its draws must differ). The scheduler inlines calls (tinygrad/engine/schedule.py,
"schedule: inline calls"); gradients flow through a backward call built the same way (call_gradient)."""
from __future__ import annotations
import functools, itertools, time, types, weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, NamedTuple, TypeVar, cast, overload
from tinygrad.dtype import DType, dtypes
from tinygrad.helpers import DEBUG
from tinygrad.uop.ops import UOp, UPat, Ops, PatternMatcher, graph_rewrite, track_context
from tinygrad.tensor import Tensor

class ParamArg(NamedTuple):
  """A PARAM's arg: the input slot, its shape, the trace it belongs to (a nested call's PARAMs are its own), and the
  argument's name (its path from the function's parameters: "self.layers.0.weight")."""
  slot: int
  shape: tuple[int, ...]
  trace: int
  name: str = ""
  def __repr__(self): return f"p{self.slot} {self.name} {self.shape}" if self.name else f"p{self.slot} {self.shape}"

@dataclass(frozen=True)
class CallInfo:
  """A CALL's arg. The trace id names the body's PARAMs; grad_fxn, when given, is the call's gradient."""
  name: str
  trace: int
  precompile: bool = False
  precompile_backward: bool = False
  grad_fxn: Callable | None = field(default=None, compare=True)
  def __repr__(self): return self.name + "".join(f" {k}" for k in ("precompile", "precompile_backward") if getattr(self, k))

_trace_ids = itertools.count(1)
TRACES_KEPT = 32  # signatures kept per function (a train step, an eval step, a few batch sizes)

def param_like(u: UOp, slot: int, trace: int, name: str = "") -> UOp:
  return UOp(Ops.PARAM, u.dtype, (UOp(Ops.DEVICE, arg=u.device),), ParamArg(slot, u.shape, trace, name))

# ---------------------------------------------------------------- the parameters of a call

_LEAF = (int, float, bool, str, bytes, type(None), DType)
_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
def _walk(roots: list[tuple[str, Any]], tensors: list[Tensor], key: list, paths: list[str] | None = None) -> None:
  """Tensors reachable from the named roots, in order, and a key of everything else found on the way (names and
  values of plain constants, identities of other objects): two calls with equal keys trace to the same body.
  paths, when given, gets each tensor's path ("self.layers.0.weight"), as get_state_dict names them."""
  seen: dict[int, Any] = {}  # id -> the object, held so that no id is reused while we walk
  stack: list[tuple[Any, Any, str]] = [(n, o, n) for n, o in reversed(roots)]
  while stack:
    name, o, path = stack.pop()
    key.append(name if isinstance(name, _LEAF) else ("key", id(name)))
    if isinstance(o, Tensor):
      tensors.append(o); key.append("T")
      if paths is not None: paths.append(path)
      continue
    if isinstance(o, _LEAF): key.append(o); continue
    if id(o) in seen or isinstance(o, _OPAQUE): key.append(("obj", id(o))); continue
    seen[id(o)] = o
    if hasattr(o, "_asdict"): seen[id(d := o._asdict())] = d; items = list(d.items())
    elif isinstance(o, dict): items = list(o.items())
    elif isinstance(o, (list, tuple)): items = list(enumerate(o))
    elif hasattr(o, "__dict__"): items = list(vars(o).items())
    else: key.append(("obj", id(o))); continue
    key.append((type(o), len(items)))
    stack.extend((k, v, f"{path}.{k}" if paths is not None else "") for k, v in reversed(items))

def _roots(fxn: Callable, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
  """The walk's roots, named by the function's parameters: what the callable carries (a bound method's self, a
  callable instance, a partial's arguments), then the arguments."""
  while isinstance(fxn, functools.partial): args, kwargs, fxn = fxn.args + args, {**fxn.keywords, **kwargs}, fxn.func
  out: list[tuple[str, Any]] = []
  if isinstance(fxn, types.MethodType): out.append(("self", fxn.__self__)); fxn = fxn.__func__
  elif not isinstance(fxn, (types.FunctionType, types.BuiltinFunctionType)): out.append(("self", fxn)); fxn = type(fxn).__call__
  code = getattr(fxn, "__code__", None)
  names = code.co_varnames[len(out):code.co_argcount] if code is not None else ()
  out += [(names[i] if i < len(names) else f"arg{i}", a) for i, a in enumerate(args)]
  return out + list(kwargs.items())

# ---------------------------------------------------------------- turning a traced graph into a body

class _Inputs:
  def __init__(self, arg_params: dict[UOp, UOp], trace: int, first_slot: int, inner: set[int]):
    self.arg_params, self.trace, self.next_slot, self.inner = arg_params, trace, first_slot, inner
    self.implicit: list[UOp] = []

def _to_param(ctx: _Inputs, x: UOp) -> UOp | None:
  if (p := ctx.arg_params.get(x)) is not None: return p  # an argument's graph, read through another Tensor object
  # what else the body reads from outside: a buffer, or an input of an enclosing call that is being traced
  if x.op is Ops.BUFFER or (x.op is Ops.PARAM and x.arg.trace != ctx.trace and x.arg.trace not in ctx.inner):
    p = ctx.arg_params[x] = param_like(x, ctx.next_slot, ctx.trace, "implicit")
    ctx.next_slot += 1
    ctx.implicit.append(x)
    return p
  return None
pm_inputs = PatternMatcher([(UPat(name="x"), _to_param)])

def make_body(outputs: list[UOp], arg_params: dict[UOp, UOp], trace: int, name: str, n_params: int) -> tuple[UOp, list[UOp]]:
  """SINK(outputs) with every outside input a PARAM of this trace: the body, and the implicit inputs found."""
  sink = UOp(Ops.SINK, src=tuple(outputs))
  inner = {u.arg.trace for u in sink.toposort() if u.op is Ops.CALL}
  ctx = _Inputs(dict(arg_params), trace, n_params, inner)
  return graph_rewrite(sink, pm_inputs, ctx=ctx, bottom_up=True, name=f"{name}: inputs to params"), ctx.implicit

def _implicit_error(name: str, implicit: list[UOp]) -> RuntimeError:
  bufs = [b for b in implicit if b.op is Ops.BUFFER]
  lines = "\n  ".join(f"{i}: dtype={b.dtype}, size={b.arg[1]}, device={b.device}" for i, b in enumerate(bufs))
  return RuntimeError(f"function {name} has {len(bufs)} implicit buffer(s), but allow_implicit=False\n  {lines}")

# ---------------------------------------------------------------- one traced signature

@dataclass
class _Trace:
  info: CallInfo
  body: UOp
  implicit: tuple[UOp, ...]
  n_ret: int                                   # outputs the caller gets; the rest are the body's writes
  is_tuple: bool
  effects: list[tuple[str, Any, int]]          # (how, target, output): how is "assign" or "replace"; target a param
                                               # index, or a weakref to a Tensor the body wrote that is not one

def _outputs(call: UOp, body: UOp) -> list[UOp]:
  return [UOp(Ops.GETTUPLE, o.dtype, (call,), i) for i, o in enumerate(body.src)]

def _apply_effects(tr: _Trace, outs: list[UOp], tensors: list[Tensor]) -> None:
  for how, target, k in tr.effects:
    t = tensors[target] if isinstance(target, int) else target()
    if t is None: continue
    if how == "assign": t.assign(Tensor(outs[k]))
    else: t.uop = outs[k]

ReturnType = TypeVar("ReturnType")

class _function(Generic[ReturnType]):
  def __init__(self, fxn: Callable[..., ReturnType], *, precompile: bool, precompile_backward: bool, allow_implicit: bool,
               grad_fxn: Callable | None):
    self.fxn, self.precompile, self.precompile_backward, self.allow_implicit, self.grad_fxn = fxn, precompile, precompile_backward, allow_implicit, grad_fxn
    self.name = getattr(fxn, "__qualname__", None) or type(fxn).__qualname__
    self.traces: OrderedDict[tuple, _Trace] = OrderedDict()
    self.trace_count = 0  # how many times the body ran (a test and a curious user can read it)
    functools.update_wrapper(self, fxn, updated=())  # type: ignore[arg-type]  # (a callable instance's __dict__ is not ours)

  def __get__(self, obj, objtype=None): return functools.partial(self.__call__, obj) if obj is not None else self

  def __call__(self, *args, **kwargs) -> ReturnType:
    st, n = time.perf_counter(), self.trace_count
    tensors: list[Tensor] = []
    key: list = [Tensor.training, dtypes.default_float, dtypes.default_int]
    _walk(roots := _roots(self.fxn, args, kwargs), tensors, key)
    uops = list(dict.fromkeys(t.uop for t in tensors))
    slot = {u: i for i, u in enumerate(uops)}
    key.extend(slot[t.uop] for t in tensors)  # which arguments are the same tensor
    key.extend((u.dtype, u.shape, u.device) for u in uops)
    k = tuple(key)
    uniq = list({id(t): t for t in tensors}.values())
    if (tr := self.traces.get(k)) is not None: self.traces.move_to_end(k)
    else: tr = self._trace(args, kwargs, roots, uniq, uops, slot, k)
    call = UOp(Ops.CALL, dtypes.void, (tr.body, *uops, *tr.implicit), tr.info)
    outs = _outputs(call, tr.body)
    _apply_effects(tr, outs, uniq)
    ret = [Tensor(o) for o in outs[:tr.n_ret]]
    if DEBUG >= 2: print(f"function {self.name}: {'traced' if self.trace_count != n else 'reused'} in {(time.perf_counter() - st) * 1e3:.2f} ms")
    return cast(ReturnType, tuple(ret) if tr.is_tuple else ret[0])

  def _trace(self, args: tuple, kwargs: dict, roots: list[tuple[str, Any]], uniq: list[Tensor], uops: list[UOp], slot: dict[UOp, int],
             key: tuple) -> _Trace:
    trace = next(_trace_ids)
    tensors, paths = [], []  # the walk again, for names: a PARAM says which weight it is
    _walk(roots, tensors, [], paths)
    names = {}
    for t, p in zip(tensors, paths): names.setdefault(t.uop, p)
    params = [param_like(u, i, trace, names[u]) for i, u in enumerate(uops)]
    own = [params[slot[t.uop]] for t in uniq]
    saved = [t.uop for t in uniq]
    pending_before, draws_before = {id(t) for t in Tensor._pending_assigns}, Tensor._draws
    rets: list[Tensor] | None = None
    with track_context("call", self.name):
      for t, p in zip(uniq, own): t.uop = p
      self.trace_count += 1
      try:
        ret = self.fxn(*args, **kwargs)
        if isinstance(ret, Tensor): rets = [ret]
        elif isinstance(ret, tuple) and all(isinstance(x, Tensor) for x in ret): rets = list(ret)
        ret_uops = [r.uop for r in rets] if rets is not None else []
      finally:
        # what the body wrote: a parameter Tensor that no longer holds its PARAM, a Tensor given a pending assign
        effects: list[tuple[str, Any, int]] = []
        values: list[UOp] = []
        for i, (t, p) in enumerate(zip(uniq, own)):
          if t.uop is p: continue
          assigned = t.uop.op is Ops.ASSIGN and t.uop.src[0] is p
          effects.append(("assign" if assigned else "replace", i, len(values)))
          values.append(t.uop.src[1] if assigned else t.uop)
        for t, u in zip(uniq, saved): t.uop = u
        mine = {id(t) for t in uniq}
        for t in Tensor._pending_assigns:
          if id(t) in pending_before or id(t) in mine or t.uop.op is not Ops.ASSIGN: continue
          effects.append(("assign", weakref.ref(t), len(values)))
          values.append(t.uop.src[1])
          t.uop = t.uop.src[0]  # assigned again after the call, from the call's output
      if rets is None: raise RuntimeError(f"function return type {type(ret)} not supported")
      body, implicit = make_body(ret_uops + values, {u: params[i] for i, u in enumerate(uops)}, trace, self.name, len(uops))
    if not self.allow_implicit and any(b.op is Ops.BUFFER for b in implicit): raise _implicit_error(self.name, implicit)
    info = CallInfo(self.name, trace, self.precompile, self.precompile_backward, self.grad_fxn)
    tr = _Trace(info, body, tuple(implicit), len(rets), isinstance(ret, tuple), [(h, t, len(rets) + k) for h, t, k in effects])
    if Tensor._draws == draws_before:  # a body that drew random numbers must draw new ones next time: not kept
      self.traces[key] = tr
      if len(self.traces) > TRACES_KEPT: self.traces.popitem(last=False)
    return tr

# @function and @function(precompile=True, ...) both work
@overload
def function(fxn: Callable[..., ReturnType], *, precompile: bool = False, precompile_backward: bool = False,
             allow_implicit: bool = False, grad_fxn: Callable | None = None) -> _function[ReturnType]: ...
@overload
def function(fxn: None = None, *, precompile: bool = False, precompile_backward: bool = False,
             allow_implicit: bool = False, grad_fxn: Callable | None = None) -> Callable[[Callable[..., ReturnType]], _function[ReturnType]]: ...
def function(fxn=None, *, precompile: bool = False, precompile_backward: bool = False, allow_implicit: bool = False, grad_fxn: Callable | None = None):
  """Make fxn one CALL node (see this module's docstring). precompile: the body's kernels are its own (its inputs and
  outputs realized, nothing fused across the call); precompile_backward: the same for its backward call;
  allow_implicit: tensors read but not reachable from the arguments become extra parameters instead of an error;
  grad_fxn(grad, call) (grad_fxn(*grads, call=call) for several outputs): the gradients of the call's arguments."""
  def make(f: Callable) -> _function:
    if not callable(f): raise TypeError(f"@function needs a callable, got {type(f).__name__}")
    return _function(f, precompile=precompile, precompile_backward=precompile_backward, allow_implicit=allow_implicit, grad_fxn=grad_fxn)
  return make if fxn is None else make(fxn)

# ---------------------------------------------------------------- gradients

_backward: OrderedDict[tuple, tuple[UOp, tuple[UOp, ...], list[int]]] = OrderedDict()

def _trace_backward(body: UOp, info: CallInfo, args: tuple[UOp, ...], order: list[int], out_grads: dict[int, Tensor],
                    needed: list[bool]) -> tuple[UOp, tuple[UOp, ...], list[int]]:
  from tinygrad.gradient import compute_gradient
  n, name = len(args), info.name + "_backward"
  params = {p.arg.slot: p for p in body.toposort() if p.op is Ops.PARAM and p.arg.trace == info.trace}
  want = [s for s in range(n) if needed[s]]
  targets = {params[s] for s in want if s in params}
  with track_context("call", name):
    total: dict[int, Tensor] = {}
    for j, i in enumerate(order):
      gs = compute_gradient(body.src[i], Tensor(param_like(out_grads[i].uop, n + j, info.trace, f"grad{i}")), targets)
      for s in want:
        if s in params and (g := gs.get(params[s])) is not None: total[s] = total[s] + g if s in total else g
    outs = [total[s].uop if s in total else Tensor.zeros(*args[s].shape, dtype=args[s].dtype, device=args[s].device).uop for s in want]
    bwd_body, implicit = make_body(outs, {}, info.trace, name, n + len(order))
  return bwd_body, tuple(implicit), want

def call_gradient(call: UOp, out_grads: dict[int, Tensor], needed: list[bool]) -> tuple[Tensor | None, ...]:
  """The gradients of a call's sources given its outputs' (by output index): None for the body, then the call's
  grad_fxn, or the outputs of a backward call whose body is the forward body's gradient, traced once per forward
  body and kind of output gradient, and inlined like any call (sharing what it reads of the forward's values)."""
  info, body, args = call.arg, call.src[0], call.src[1:]
  if info.grad_fxn is not None:
    outs = [out_grads[i] if i in out_grads else Tensor.zeros(*o.shape, dtype=o.dtype, device=o.device) for i, o in enumerate(body.src)]
    ret = info.grad_fxn(*outs, call=call) if len(outs) > 1 else info.grad_fxn(outs[0], call)
    if not isinstance(ret, (tuple, list)) or len(ret) != len(args):
      raise RuntimeError(f"grad_fxn of function {info.name} returned {type(ret).__name__}{f' of {len(ret)}' if isinstance(ret, (tuple, list)) else ''}: "
                         f"it must return a tuple of {len(args)} gradients, one per argument of the call (None where none flows)")
    return (None, *[None if g is None else g if isinstance(g, Tensor) else Tensor(g) for g in ret])
  order = sorted(out_grads)
  key = (body, info, tuple((i, out_grads[i].dtype, out_grads[i].shape, out_grads[i].device) for i in order), tuple(needed))
  if (bw := _backward.get(key)) is None:
    bw = _backward[key] = _trace_backward(body, info, args, order, out_grads, needed)
    if len(_backward) > 4 * TRACES_KEPT: _backward.popitem(last=False)
  bwd_body, implicit, want = bw
  bwd = UOp(Ops.CALL, dtypes.void, (bwd_body, *args, *(out_grads[i].uop for i in order), *implicit),
            CallInfo(info.name + "_backward", info.trace, info.precompile_backward))
  outs = _outputs(bwd, bwd_body)
  return (None, *[Tensor(outs[want.index(s)]) if needed[s] else None for s in range(len(args))])
