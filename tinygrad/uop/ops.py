"""UOp (the one IR), UPat + PatternMatcher (transformations as data) and graph_rewrite."""
from __future__ import annotations
import sys, weakref, inspect, math, itertools, time
try: from _weakref import _remove_dead_weakref  # CPython's, as WeakValueDictionary uses it
except ImportError:  # another Python: the same test in Python
  def _remove_dead_weakref(d: dict, key: Any) -> None:
    if (w := d.get(key)) is not None and w() is None: del d[key]
from enum import Enum, auto
from typing import Any, Callable
from tinygrad.dtype import DType, dtypes, truncate
from tinygrad import tracing
from tinygrad.uop.upat_compile import compile_rules

class Ops(Enum):
  # graph structure
  SINK = auto(); NOOP = auto(); DEVICE = auto(); BUFFER = auto(); COPY = auto(); CONST = auto(); DEFINE_VAR = auto()
  CONTIGUOUS = auto(); DETACH = auto(); ASSIGN = auto(); IOTA = auto()  # IOTA: 0, 1, ..., arg-1 (arange, lazily)
  # multi-device: MULTI holds one UOp per device (arg: the sharded axis, None when each holds a copy); MSELECT takes
  # device arg[0]'s piece of a multi-device value sharded on axis arg[1] (tinygrad/multi.py lowers both)
  MULTI = auto(); MSELECT = auto()
  # calls (@function, tinygrad/function.py): CALL(body SINK, *args) runs its body on args; PARAM is an input of a body
  # (arg: ParamArg(slot, shape, trace)); GETTUPLE takes output arg of a CALL
  PARAM = auto(); CALL = auto(); GETTUPLE = auto()
  # CUSTOM_FUNCTION(LINEAR of CALLs), arg a name: calls one runtime function runs as a batch (tinygrad's jit "graph");
  # no device here has a graph runner (jit.graph_class is None), so a TinyJit's captured.linear holds plain CALLs
  CUSTOM_FUNCTION = auto()
  # movement: arg carries the new shape / order / padding
  RESHAPE = auto(); PERMUTE = auto(); EXPAND = auto(); PAD = auto(); SHRINK = auto(); FLIP = auto()
  # reductions: REDUCE_AXIS in the tensor graph (arg=(op, axes)); REDUCE in a lowered kernel (src=(value, *ranges))
  REDUCE_AXIS = auto(); REDUCE = auto()
  # kernels and their lowering
  KERNEL = auto(); DEFINE_GLOBAL = auto(); RANGE = auto(); INDEX = auto(); LOAD = auto(); STORE = auto()
  DEFINE_ACC = auto(); ACC_UPDATE = auto(); ENDRANGE = auto(); SPECIAL = auto()
  # a scratch array private to each thread of a kernel (arg: (id, size)); AFTER(buf, *stores) is buf once those
  # stores (a loop of them, over their own RANGEs) have run: loads of it come after the loop (codegen/pack.py)
  DEFINE_LOCAL = auto(); AFTER = auto()
  # a kernel's program: LINEAR holds its uops in order (linearized), PROGRAM(LINEAR, SOURCE) its rendering (SOURCE's arg: the code)
  LINEAR = auto(); PROGRAM = auto(); SOURCE = auto()
  # vectors inside a kernel: VECTORIZE builds one from scalar lanes, GEP takes lane arg out of one
  VECTORIZE = auto(); GEP = auto()
  # ALU
  CAST = auto(); BITCAST = auto()
  EXP2 = auto(); LOG2 = auto(); SIN = auto(); SQRT = auto(); RECIP = auto(); NEG = auto(); TRUNC = auto()
  ADD = auto(); SUB = auto(); MUL = auto(); FDIV = auto(); IDIV = auto(); MOD = auto(); MAX = auto(); POW = auto()
  CMPLT = auto(); CMPNE = auto(); CMPEQ = auto(); AND = auto(); OR = auto(); XOR = auto(); SHL = auto(); SHR = auto()
  WHERE = auto(); MULACC = auto()
  # BIND(DEFINE_VAR, CONST): a variable with its value (var.bind(3)); where an int is taken (a slice bound, a shape) it
  # stands for that value: tensors here have concrete shapes, so a kernel is built per value (docs/engine.md)
  BIND = auto()
  def __repr__(self): return f"Ops.{self.name}"
  # Enum hashes a member by its name in Python; the matcher and the UOp cache hash ops constantly. Members are unique
  # objects compared by identity, so the C-level identity hash gives the same dict/set semantics.
  __hash__ = object.__hash__

class GroupOp:
  Unary = {Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIP, Ops.NEG, Ops.TRUNC}
  Binary = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ,
            Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR}
  Ternary = {Ops.WHERE, Ops.MULACC}
  ALU = Unary | Binary | Ternary
  Elementwise = ALU | {Ops.CAST, Ops.BITCAST}
  Commutative = {Ops.ADD, Ops.MUL, Ops.MAX, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR}
  Comparison = {Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ}
  Movement = {Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP}
  All = set(Ops)

def _caller_location(skip_file: str) -> tuple[str, int]:
  """The first frame outside `skip_file`: where a UPat or a graph_rewrite call was written."""
  f = sys._getframe(1)
  while f is not None and f.f_code.co_filename == skip_file: f = f.f_back
  return (f.f_code.co_filename, f.f_lineno) if f is not None else ("<unknown>", 0)

# ---------------------------------------------------------------- UOp

_ucache: dict[tuple, weakref.ReferenceType] = {}

class _CacheRef(weakref.ref):
  """The UOp cache's entry: a weak reference that knows its key, so one shared callback drops it when its UOp dies (a
  kernel's codegen frees ~10^5 UOps at once: a closure per entry cost more to make and to run)."""
  __slots__ = ("key",)

def _drop(w: _CacheRef) -> None: _remove_dead_weakref(_ucache, w.key)  # only if the entry is still a dead one (C)

class UOpMetaClass(type):
  ucache = _ucache
  def __call__(cls, op: Ops, dtype: DType = dtypes.void, src: tuple[UOp, ...] = (), arg: Any = None):
    # a DType is equal to another of its name (dtype.py) and hashes in Python: its name in the key is the same test with
    # a C-level hash (the key is hashed up to four times per new UOp); anything else passed as a dtype keys as itself
    key = (op, dtype.name, src, arg, type(arg)) if type(dtype) is DType else (op, dtype, src, arg, type(arg), None)
    if (wr := _ucache.get(key)) is not None and (ret := wr()) is not None: return ret
    # built here rather than through type.__call__ and __init__: the slots set by their descriptors (hot: every rewrite)
    created = _new(cls); _set_op(created, op); _set_dtype(created, dtype); _set_src(created, src); _set_arg(created, arg)
    _set_vminmax(created, None)  # bounds not computed yet (a slot read, where a missing slot raised: _minmax)
    (r := _CacheRef(created, _drop)).key = key
    _ucache[key] = r
    return created

class UOp(metaclass=UOpMetaClass):
  """An immutable, hash-consed node: building the same UOp twice returns the very same object."""
  __slots__ = ("op", "dtype", "src", "arg", "__weakref__", "_shape", "_vminmax", "_dev", "_axis")
  def __init__(self, op: Ops, dtype: DType = dtypes.void, src: tuple[UOp, ...] = (), arg: Any = None):
    object.__setattr__(self, "op", op); object.__setattr__(self, "dtype", dtype)
    object.__setattr__(self, "src", src); object.__setattr__(self, "arg", arg)
  def __setattr__(self, k, v):
    if k in ("_shape", "_vminmax", "_dev", "_axis"): return object.__setattr__(self, k, v)
    raise AttributeError("UOp is immutable")
  def __reduce__(self): raise TypeError("UOps are not pickled; trace files store them interned by id")
  def replace(self, **kw) -> UOp:
    return UOp(kw.get("op", self.op), kw.get("dtype", self.dtype), kw.get("src", self.src), kw.get("arg", self.arg))

  # ----- graph walking, iterative so 10k+ deep chains are fine
  def toposort(self) -> list[UOp]:
    """All UOps this one depends on (and itself), sources before users."""
    if (memo := rewrite_memo.topo) is not None:  # inside a kernel's codegen: the same graphs are walked again and again
      if (got := memo.get(self)) is None: got = memo[self] = self._toposort(memo)
      return list(got)
    return list(self._toposort(None))
  def _toposort(self, memo: dict[UOp, dict[UOp, None]] | None) -> dict[UOp, None]:
    # depth first, sources in order: a node is pushed again under its sources and output when it comes back up (it is
    # in `seen` then: a DAG reaches no node again while its sources are being walked). A node whose walk is in memo is
    # that walk, less what is out already: one C-level dict update (dict.update keeps the place of keys it has)
    out: dict[UOp, None] = {}
    seen: set[UOp] = set()
    stack: list[UOp] = [self]
    push, pop = stack.append, stack.pop
    while stack:
      u = pop()
      if u in out: continue
      if u in seen: out[u] = None; continue
      if memo is not None and (got := memo.get(u)) is not None: out.update(got); continue
      seen.add(u); push(u)
      for s in reversed(u.src):
        if s not in out: push(s)
    return out
  def substitute(self, mapping: dict[UOp, UOp], topo: list[UOp] | None = None) -> UOp:
    """This graph with each key of `mapping` replaced by its value (a plain rebuild, not a traced rewrite). topo: this
    graph's toposort, where the caller walked it already."""
    memo: dict[UOp, UOp] = {}
    for u in self.toposort() if topo is None else topo:
      if (m := mapping.get(u)) is not None: memo[u] = m; continue
      memo[u] = u if (new_src := tuple(map(memo.__getitem__, u.src))) == u.src else UOp(u.op, u.dtype, new_src, u.arg)  # == : identity of each
    return memo[self]

  def __repr__(self) -> str: return _pretty(self)

  # ----- constructors
  @staticmethod
  def const(dtype: DType, b: Any) -> UOp: return UOp(Ops.CONST, dtype, (), _as_dtype(dtype, b))
  def const_like(self, b: Any) -> UOp: return UOp.const(self.dtype, b)
  @staticmethod
  def variable(name: str, min_val: int, max_val: int, dtype: DType = dtypes.int32) -> UOp:
    return UOp(Ops.DEFINE_VAR, dtype, (), (name, min_val, max_val))
  def bind(self, val: int) -> UOp:
    if self.op is not Ops.DEFINE_VAR: raise TypeError(f"bind: only a variable (Variable / UOp.variable) takes a value, not {self.op}")
    if not isinstance(val, int) or not self.arg[1] <= val <= self.arg[2]:
      raise ValueError(f"bind: {val!r} is not an int in {self.arg[0]}'s range [{self.arg[1]}, {self.arg[2]}]")
    return UOp(Ops.BIND, self.dtype, (self, UOp.const(self.dtype, val)))
  def unbind(self) -> tuple[UOp, int]:
    if self.op is not Ops.BIND: raise TypeError(f"unbind: {self.op} is not a bound variable")
    return self.src[0], self.src[1].arg
  def __index__(self) -> int:
    if self.op is Ops.BIND: return self.src[1].arg
    if self.op is Ops.CONST and isinstance(self.arg, int) and not isinstance(self.arg, bool): return self.arg
    if self.op in GroupOp.ALU and dtypes.is_int(self.dtype):  # arithmetic of bound variables: `vi+1`, `n-start_pos`
      from tinygrad.uop.alu import python_alu
      return python_alu[self.op](*(s.__index__() for s in self.src))
    raise TypeError(f"a {self.op} UOp has no int value (only a bound variable, var.bind(n), an int const, or int arithmetic of those has)")
  def __int__(self) -> int: return self.__index__()
  def alu(self, op: Ops, *src: UOp) -> UOp:
    out_dtype = dtypes.bool if op in GroupOp.Comparison else (src[-1] if op is Ops.WHERE else self).dtype
    return UOp(op, out_dtype, (self,) + src)
  def cast(self, dtype: DType) -> UOp: return self if self.dtype == dtype else UOp(Ops.CAST, dtype, (self,))
  def bitcast(self, dtype: DType) -> UOp: return UOp(Ops.BITCAST, dtype, (self,))
  def _bin(self, op: Ops, x: Any, reverse: bool = False) -> UOp:
    y = x if isinstance(x, UOp) else self.const_like(x)
    return y.alu(op, self) if reverse else self.alu(op, y)
  def __add__(self, x): return self._bin(Ops.ADD, x)
  def __radd__(self, x): return self._bin(Ops.ADD, x, True)
  def __sub__(self, x): return self._bin(Ops.SUB, x)
  def __rsub__(self, x): return self._bin(Ops.SUB, x, True)
  def __mul__(self, x): return self._bin(Ops.MUL, x)
  def __rmul__(self, x): return self._bin(Ops.MUL, x, True)
  def __truediv__(self, x): return self._bin(Ops.FDIV, x)
  def __floordiv__(self, x): return self._bin(Ops.IDIV, x)
  def __mod__(self, x): return self._bin(Ops.MOD, x)
  def __and__(self, x): return self._bin(Ops.AND, x)
  def __or__(self, x): return self._bin(Ops.OR, x)
  def __xor__(self, x): return self._bin(Ops.XOR, x)
  def __lshift__(self, x): return self._bin(Ops.SHL, x)
  def __rshift__(self, x): return self._bin(Ops.SHR, x)
  def __lt__(self, x): return self._bin(Ops.CMPLT, x)
  def __gt__(self, x): return self._bin(Ops.CMPLT, x, True)
  def __neg__(self): return UOp(Ops.NEG, self.dtype, (self,))
  def ne(self, x): return self._bin(Ops.CMPNE, x)
  def eq(self, x): return self._bin(Ops.CMPEQ, x)
  def maximum(self, x): return self._bin(Ops.MAX, x)
  def where(self, a: Any, b: Any) -> UOp:
    if not isinstance(a, UOp): a = b.const_like(a)
    if not isinstance(b, UOp): b = a.const_like(b)
    return UOp(Ops.WHERE, a.dtype, (self, a, b))
  __hash__ = object.__hash__

  # ----- the shape of a tensor-graph UOp (None for scalar ops of a lowered kernel)
  @property
  def shape(self) -> tuple[int, ...] | None:
    try: return self._shape
    except AttributeError: return _fill(self, "_shape", _compute_shape)
  @property
  def size(self) -> int:
    from tinygrad.helpers import prod
    return prod(self.shape or ())

  # ----- value bounds, for index arithmetic simplification
  @property
  def vmin(self): return self._minmax()[0]
  @property
  def vmax(self): return self._minmax()[1]
  def _minmax(self) -> tuple[Any, Any]:
    # asked of every new int node a rewrite visits (symbolic's _fold_by_range): the slot is None until computed (a
    # missing slot's AttributeError cost more than the read). Sources first, but only where the bounds are computed from them (an int node, a
    # RANGE): a float node's are its dtype's (or a constant's value), so a comparison of floats doesn't walk their graph
    if (r := self._vminmax) is None:
      for s in self.src:  # most often every source has its bounds: this node's at once
        if s._vminmax is None: break
      else:
        _set_vminmax(self, r := _compute_minmax(self)); return r
      stack = [self]
      while stack:
        u = stack[-1]
        if u._vminmax is not None: stack.pop(); continue
        if (u.op is Ops.RANGE or is_intlike(u.dtype)) and (missing := [s for s in u.src if s._vminmax is None]): stack.extend(missing); continue
        stack.pop()
        _set_vminmax(u, _compute_minmax(u))
      r = self._vminmax
    return r

  @property
  def buffer(self):
    """The device Buffer a BUFFER stands for (tinygrad's `t.uop.base.buffer`), allocated on first use."""
    if self.op is not Ops.BUFFER: raise AttributeError(f"a {self.op} has no buffer: only a realized tensor's base (a BUFFER) has one")
    from tinygrad.engine.realize import buffer_for
    return buffer_for(self)
  @property
  def base(self) -> UOp:
    u = self
    while u.op in GroupOp.Movement: u = u.src[0]
    return u
  @property
  def device(self) -> str | None:
    try: return self._dev
    except AttributeError: return _fill(self, "_dev", _compute_device)
  @property
  def bounds(self) -> list[tuple[int, int]]:
    """(start, end) along the sharded axis of each device's piece of a multi-device value (tinygrad's uop.bounds)."""
    if (ax := self.axis) is None: raise ValueError(f"bounds: this value is not split along an axis (device {self.device})")
    n = len(self.device); sz = self.shape[ax] // n  # type: ignore[index, operator, arg-type]
    return [(i * sz, (i + 1) * sz) for i in range(n)]
  def allreduce(self, op: Ops, device: tuple[str, ...]) -> UOp:
    """Each device's piece of this multi-device value combined (op: ADD, MUL or MAX) with every other device's, on
    every device (tinygrad's UOp.allreduce); the result is split as self is."""
    from tinygrad.multi import allreduce
    return allreduce(self, op, device)
  @property
  def axis(self) -> int | None:
    """The axis a multi-device value is split along (tinygrad's `t.uop.axis`): None when each device holds a copy or
    the value lives on one device. Computed once per node, on first use (it lowers the graph: see tinygrad/multi.py)."""
    try: return self._axis
    except AttributeError: pass
    from tinygrad.multi import shard_axis
    ax = shard_axis(self) if isinstance(self.device, tuple) and self.shape is not None else None
    object.__setattr__(self, "_axis", ax)
    return ax

_new = object.__new__
_set_op, _set_dtype, _set_src, _set_arg, _set_vminmax = (UOp.__dict__[k].__set__ for k in ("op", "dtype", "src", "arg", "_vminmax"))

def _fill(root: UOp, attr: str, compute: Callable[[UOp], Any]) -> Any:
  """Compute a cached per-node property for root and every source that lacks it, sources first; the walk stops at
  nodes that already have it (iterative: deep graphs are fine)."""
  # a node stays on the stack until its sources have the property (most often at once: one test per source)
  stack: list[UOp] = [root]
  while stack:
    u = stack[-1]
    if missing := [s for s in u.src if not hasattr(s, attr)]: stack.extend(missing); continue
    stack.pop()
    if not hasattr(u, attr): object.__setattr__(u, attr, compute(u))
  return getattr(root, attr)

def _compute_device(u: UOp) -> str | None:
  if u.op is Ops.DEVICE: return u.arg
  if u.op is Ops.COPY: return u.src[1].arg
  if u.op is Ops.GETTUPLE: return u.src[0].src[0].src[u.arg]._dev
  if u.op is Ops.MULTI: return tuple(s._dev for s in u.src)
  if u.op is Ops.MSELECT: return u.src[0]._dev[u.arg[0]]
  return next((s._dev for s in u.src if s._dev is not None), None)

def _as_dtype(dtype: DType, b: Any) -> Any:
  if dtype == dtypes.bool: return bool(b)
  if dtypes.is_int(dtype): return int(b)
  # a narrow float's constant is the value it holds (as the renderers spell it), so folding a cast of it sees that value
  if dtypes.is_float(dtype): return truncate[dtype](float(b)) if dtype.itemsize <= 2 and dtype.count == 1 else float(b)
  return b

def _compute_shape(u: UOp) -> tuple[int, ...] | None:
  op, src, arg = u.op, u.src, u.arg
  if op in (Ops.BUFFER, Ops.DEFINE_GLOBAL): return (arg[1],)
  if op is Ops.IOTA: return (arg,)
  if op is Ops.PARAM: return arg.shape
  if op is Ops.GETTUPLE: return src[0].src[0].src[arg].shape
  if op in (Ops.CONST, Ops.DEFINE_VAR): return ()
  if op in (Ops.RESHAPE, Ops.EXPAND): return tuple(arg)
  if op is Ops.PERMUTE: return tuple(src[0].shape[i] for i in arg)
  if op is Ops.PAD: return tuple(s + b + a for s, (b, a) in zip(src[0].shape, arg))
  if op is Ops.SHRINK: return tuple(e - b for b, e in arg)
  if op is Ops.FLIP: return src[0].shape
  if op is Ops.REDUCE_AXIS: return tuple(1 if i in arg[1] else s for i, s in enumerate(src[0].shape))
  if op in (Ops.COPY, Ops.CONTIGUOUS, Ops.DETACH, Ops.CAST, Ops.BITCAST): return src[0].shape
  if op is Ops.ASSIGN: return src[0].shape
  if op is Ops.MULTI: return tuple(d * len(src) if i == arg else d for i, d in enumerate(src[0].shape))
  if op is Ops.MSELECT: return tuple(d // len(src[0].device) if i == arg[1] else d for i, d in enumerate(src[0].shape))
  if op in GroupOp.ALU: return src[-1].shape
  return None

def _cdiv(a: int, b: int) -> int: return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C truncating division

_INTLIKE_NAMES = frozenset(d.name for d in dtypes.ints) | {dtypes.bool.name}

def is_intlike(dt: DType) -> bool:
  """dtypes.is_int(dt) or dt == dtypes.bool, by name for a DType (names are unique; DType compares by name): this is
  asked of nearly every node a rewrite visits."""
  return dt.name in _INTLIKE_NAMES if type(dt) is DType else (dtypes.is_int(dt) or dt == dtypes.bool)

_dtype_bounds: dict[str, tuple[Any, Any]] = {}

def _bounds_of(dt: DType) -> tuple[Any, Any]:
  """(dtypes.min(dt), dtypes.max(dt)), kept per dtype name."""
  if type(dt) is not DType: return dtypes.min(dt), dtypes.max(dt)
  if (b := _dtype_bounds.get(dt.name)) is None: b = _dtype_bounds[dt.name] = (dtypes.min(dt), dtypes.max(dt))
  return b

def _compute_minmax(u: UOp) -> tuple[Any, Any]:
  # only called by _fill, once every source has its bounds: they are read off the slot (hot: every new int node)
  op, s = u.op, u.src
  if op is Ops.CONST: return u.arg, u.arg
  if op is Ops.DEFINE_VAR: return u.arg[1], u.arg[2]
  if op is Ops.RANGE: return 0, s[0]._vminmax[1] - 1
  if op is Ops.SPECIAL: return 0, u.arg[1] - 1
  if is_intlike(u.dtype):
    if op is Ops.ADD: (a0, a1), (b0, b1) = s[0]._vminmax, s[1]._vminmax; return a0 + b0, a1 + b1
    if op is Ops.SUB: (a0, a1), (b0, b1) = s[0]._vminmax, s[1]._vminmax; return a0 - b1, a1 - b0
    if op is Ops.NEG:
      a0, a1 = s[0]._vminmax
      return (not a1, not a0) if u.dtype == dtypes.bool else (-a1, -a0)  # NEG of a bool is logical not
    if op is Ops.MUL:
      (a0, a1), (b0, b1) = s[0]._vminmax, s[1]._vminmax
      vals = [a0 * b0, a0 * b1, a1 * b0, a1 * b1]
      if not any(isinstance(v, float) and math.isnan(v) for v in vals): return min(vals), max(vals)
    if op is Ops.IDIV and s[1].op is Ops.CONST and s[1].arg > 0: a0, a1 = s[0]._vminmax; return _cdiv(a0, s[1].arg), _cdiv(a1, s[1].arg)
    if op is Ops.MOD and s[1].op is Ops.CONST and s[1].arg > 0:
      c, (a0, a1) = s[1].arg, s[0]._vminmax
      if a0 >= 0: return (a0, a1) if a1 < c else (0, c - 1)
      return -(c - 1), c - 1
    if op is Ops.MAX: (a0, a1), (b0, b1) = s[0]._vminmax, s[1]._vminmax; return max(a0, b0), max(a1, b1)
    if op is Ops.WHERE:
      (c0, c1), (a0, a1), (b0, b1) = s[0]._vminmax, s[1]._vminmax, s[2]._vminmax
      if c0 == c1: return (a0, a1) if c0 else (b0, b1)
      return min(a0, b0), max(a1, b1)
    if op is Ops.CMPLT:
      (a0, a1), (b0, b1) = s[0]._vminmax, s[1]._vminmax
      if a1 < b0: return True, True
      if a0 >= b1: return False, False
      return False, True
    if op is Ops.CMPNE:
      (a0, a1), (b0, b1) = s[0]._vminmax, s[1]._vminmax
      if a1 < b0 or a0 > b1: return True, True
      if a0 == a1 == b0 == b1: return False, False
      return False, True
    if op is Ops.AND and u.dtype == dtypes.bool: (a0, a1), (b0, b1) = s[0]._vminmax, s[1]._vminmax; return a0 and b0, a1 and b1
    if op is Ops.OR and u.dtype == dtypes.bool: (a0, a1), (b0, b1) = s[0]._vminmax, s[1]._vminmax; return a0 or b0, a1 or b1
    if op is Ops.CAST and is_intlike(s[0].dtype):
      a0, a1 = s[0]._vminmax
      lo, hi = int(a0), int(a1)
      dlo, dhi = _bounds_of(u.dtype)
      if dlo <= lo and hi <= dhi: return (bool(lo), bool(hi)) if u.dtype == dtypes.bool else (lo, hi)
  return _bounds_of(u.dtype)

def _pretty(u: UOp, depth: int = 0, seen: set | None = None) -> str:
  seen = set() if seen is None else seen
  pad = "  " * depth
  if depth > 40: return f"{pad}UOp({u.op}, ...)"
  if u.src:
    srcs = "\n" + ",\n".join(_pretty(s, depth + 1, seen) for s in u.src) + ","
  else: srcs = ""
  return f"{pad}UOp({u.op}, {u.dtype}, arg={u.arg!r}, src=({srcs}))"

# ---------------------------------------------------------------- UPat + PatternMatcher

class UPat:
  """A pattern over UOps. src: None matches any sources; a tuple matches in order; a list matches in any order
  (commutative); a single UPat matches every source. Remembers the file and line that wrote it."""
  __slots__ = ("op", "dtype", "src", "arg", "name", "allow_any_len", "location", "_variants")
  def __init__(self, op: Ops | tuple[Ops, ...] | set[Ops] | None = None, dtype: DType | tuple[DType, ...] | None = None,
               src: Any = None, arg: Any = None, name: str | None = None, allow_any_len: bool = False, location: tuple[str, int] | None = None):
    self.op = (op,) if isinstance(op, Ops) else (tuple(op) if op is not None else None)
    self.dtype = frozenset((dtype,) if isinstance(dtype, DType) else dtype) if dtype is not None else None  # a set: matching asks `in` constantly
    self.arg, self.name, self.allow_any_len, self.src = arg, name, allow_any_len, src
    self.location = location or _caller_location(__file__)
    if isinstance(src, list): self._variants = list(dict.fromkeys(itertools.permutations(src)))  # commutative: every order
    elif isinstance(src, tuple): self._variants = [src]
    else: self._variants = None
  def __repr__(self):
    ops = "None" if self.op is None else "(" + ", ".join(repr(o) for o in self.op) + ")"
    return f"UPat({ops}, name={self.name!r}, arg={self.arg!r}, src={self.src!r})"

  @staticmethod
  def var(name: str | None = None, dtype: DType | tuple[DType, ...] | None = None) -> UPat:
    return UPat(dtype=dtype, name=name, location=_caller_location(__file__))
  @staticmethod
  def cvar(name: str | None = None, dtype: DType | tuple[DType, ...] | None = None) -> UPat:
    return UPat(Ops.CONST, dtype, name=name, location=_caller_location(__file__))
  @staticmethod
  def const(dtype: DType | tuple[DType, ...] | None, b: Any) -> UPat:
    return UPat(Ops.CONST, dtype, arg=b, location=_caller_location(__file__))

  # operator sugar: UPat.cvar("a") + UPat.cvar("b")
  def _op(self, op: Ops, x: Any, reverse: bool = False, commutative: bool = False) -> UPat:
    y = x if isinstance(x, UPat) else UPat.const(None, x)
    srcs = (y, self) if reverse else (self, y)
    return UPat(op, None, list(srcs) if commutative else srcs, location=_caller_location(__file__))
  def __add__(self, x): return self._op(Ops.ADD, x, commutative=True)
  def __radd__(self, x): return self._op(Ops.ADD, x, True, commutative=True)
  def __mul__(self, x): return self._op(Ops.MUL, x, commutative=True)
  def __rmul__(self, x): return self._op(Ops.MUL, x, True, commutative=True)
  def __sub__(self, x): return self._op(Ops.SUB, x)
  def __truediv__(self, x): return self._op(Ops.FDIV, x)
  def __floordiv__(self, x): return self._op(Ops.IDIV, x)
  def __mod__(self, x): return self._op(Ops.MOD, x)
  def __lt__(self, x): return self._op(Ops.CMPLT, x)
  def __and__(self, x): return self._op(Ops.AND, x, commutative=True)
  def __or__(self, x): return self._op(Ops.OR, x, commutative=True)
  def __neg__(self): return UPat(Ops.NEG, None, (self,), location=_caller_location(__file__))
  def maximum(self, x): return self._op(Ops.MAX, x, commutative=True)
  def ne(self, x): return self._op(Ops.CMPNE, x, commutative=True)
  def cast(self, dtype: DType | None = None): return UPat(Ops.CAST, dtype, (self,), location=_caller_location(__file__))
  def where(self, a, b): return UPat(Ops.WHERE, None, (self, a, b), location=_caller_location(__file__))

  def match(self, u: UOp, store: dict[str, UOp]) -> list[dict[str, UOp]]:
    if (self.op is not None and u.op not in self.op) or (self.dtype is not None and u.dtype not in self.dtype) or \
       (self.arg is not None and self.arg != u.arg): return []
    if self.name is not None:
      if (prev := store.get(self.name)) is not None and prev is not u: return []
      store = {**store, self.name: u}
    if self.src is None: return [store]
    if self._variants is None: variants = [(self.src,) * len(u.src)]
    else: variants = self._variants
    out: list[dict[str, UOp]] = []
    for vp in variants:
      if len(u.src) != len(vp) and not (self.allow_any_len and len(u.src) >= len(vp)): continue
      stores = [store]
      for p, s in zip(vp, u.src):
        stores = [st2 for st in stores for st2 in p.match(s, st)]
        if not stores: break
      out.extend(stores)
    return out

class PatternMatcher:
  """An ordered table of (UPat, fn). fn gets the named matches as keyword arguments (and `ctx` if it asks for it)
  and returns a replacement UOp or None. Matchers combine with `+`. The rules are compiled into one Python function
  per op (uop/upat_compile.py) the first time a node of that op is rewritten: same matches, same order as UPat.match."""
  def __init__(self, patterns: list[tuple[UPat, Callable]]):
    self.patterns = list(patterns)
    self.pdict: dict[Ops, list[tuple[UPat, Callable, bool]]] = {}
    for p, fn in self.patterns:
      has_ctx = "ctx" in inspect.signature(fn).parameters
      for op in (p.op if p.op is not None else tuple(Ops)): self.pdict.setdefault(op, []).append((p, fn, has_ctx))
    self._fns = _Compiled(self)  # op -> its compiled rules (None: no rule names op), made on first lookup
  def __add__(self, other: PatternMatcher) -> PatternMatcher: return PatternMatcher(self.patterns + other.patterns)
  def compiled(self, op: Ops) -> Callable[[UOp, Any], tuple[UOp, UPat] | None] | None:
    """The function that tries this table's rules for a node of `op` (None when no rule names op)."""
    return self._fns[op]
  def rewrite(self, u: UOp, ctx: Any = None) -> UOp | None:
    r = self.rewrite_pat(u, ctx)
    return None if r is None else r[0]
  def rewrite_pat(self, u: UOp, ctx: Any = None) -> tuple[UOp, UPat] | None:
    return None if (f := self._fns[u.op]) is None else f(u, ctx)

# compiled rules by (op, the rules in order): tables made with + share most ops' rules (symbolic's ADD rules are the
# whole ADD table of the lowerer's, the copies' and the vectors' tables), so each such list is compiled once. The
# function holds its patterns and fns, so their ids in the key are not reused
_compiled_rules: dict[tuple, Callable] = {}

class _Compiled(dict):
  def __init__(self, pm: PatternMatcher): super().__init__(); self.pm = pm
  def __missing__(self, op: Ops):
    if not (rules := self.pm.pdict.get(op)): f = self[op] = None; return f
    if (f := _compiled_rules.get(key := (op, tuple((id(p), id(fn), hc) for p, fn, hc in rules)))) is None:
      f = _compiled_rules[key] = compile_rules(rules, name=f"rules_{op.name}")
    self[op] = f
    return f

# ---------------------------------------------------------------- graph_rewrite

class rewrite_memo:
  """Inside the block an untraced graph_rewrite without ctx starts from what the earlier ones in the block rewrote each
  node to under the same pattern table (a node's fixed point is the same every time: UOps are immutable): the plans of
  one kernel re-simplify mostly the same graph. Only while nothing is traced, so every recorded match still happens."""
  memo: dict[tuple[int, bool], tuple[PatternMatcher, dict[UOp, UOp]]] | None = None
  topo: dict[UOp, tuple[UOp, ...]] | None = None  # and each graph's toposort, walked once (dropped with the block)
  terms: dict[UOp, tuple[UOp, ...]] | None = None  # and each sum's terms (symbolic._terms)
  def __enter__(self):
    self.prev = rewrite_memo.memo, rewrite_memo.topo, rewrite_memo.terms
    if rewrite_memo.memo is None: rewrite_memo.memo, rewrite_memo.topo, rewrite_memo.terms = {}, {}, {}
  def __exit__(self, *exc): rewrite_memo.memo, rewrite_memo.topo, rewrite_memo.terms = self.prev

def _rules_of(pm: PatternMatcher) -> frozenset[tuple[int, int]]:
  if (r := pm.__dict__.get("_rule_ids")) is None: r = pm._rule_ids = frozenset((id(p), id(fn)) for p, fn in pm.patterns)
  return r

def _superset_memos(pm: PatternMatcher, memo: dict) -> list[dict[UOp, UOp]]:
  """The memos (in this rewrite_memo block) of the other tables that hold every rule of pm. A node one of them left
  as it is (its replacement is itself) is a fixed point of that table: no rule of it rewrites the node or any node under
  it, so none of pm's does either (the lowered kernel, simplified with the lowerer's table, is then not simplified
  again node by node by the copies' and the vectors' smaller tables)."""
  key = ("supersets", id(pm))
  if (got := memo.get(key)) is not None and got[0] == len(memo): return got[1]
  mine = _rules_of(pm)
  sups = [v[1] for k, v in memo.items() if type(k[0]) is int and not k[1] and v[0] is not pm and mine <= _rules_of(v[0])]
  memo[key] = (len(memo) + (key not in memo), sups)
  return sups

def _rewrite(sink: UOp, pm: PatternMatcher, ctx: Any, bottom_up: bool, trace) -> UOp:
  replace: dict[UOp, UOp] = {}
  sups: list[dict[UOp, UOp]] = []
  if (memo := rewrite_memo.memo) is not None and trace is None and ctx is None:
    replace = memo.setdefault((id(pm), bottom_up), (pm, replace))[1]  # pm kept alive with it: its id is not reused
    if not bottom_up: sups = _superset_memos(pm, memo)
  fns = pm._fns  # op -> compiled rules, looked up here rather than through rewrite_pat: this loop is the hot one
  def traced(f, n: UOp) -> tuple[UOp, UPat] | None:  # each match with the time its rewrite took (the match panel shows it)
    st = time.perf_counter_ns()
    if (r := f(n, ctx)) is not None: trace.rewrite_match(r[1], n, r[0], time.perf_counter_ns() - st)
    return r
  # explicit stack instead of recursion: stage 0 = visit sources, 1 = rebuild + rewrite, 2 = take the result's rewrite
  stack: list[tuple[UOp, int, UOp | None]] = [(sink, 0, None)]
  push, pop, get = stack.append, stack.pop, replace.__getitem__
  while stack:
    n, stage, extra = pop()
    if stage == 2: replace[n] = replace[extra]; continue
    if n in replace: continue
    if stage == 0:
      if sups:  # (inline: this loop is the hot one)
        for sr in sups:
          if sr.get(n) is n: break
        else: sr = None
        if sr is not None: replace[n] = n; continue
      if bottom_up and (f := fns[n.op]) is not None and (r := f(n, ctx) if trace is None else traced(f, n)) is not None:
        push((n, 2, r[0])); push((r[0], 0, None)); continue
      waits = False
      for s in reversed(n.src):
        if s not in replace:
          if not waits: push((n, 1, None)); waits = True
          push((s, 0, None))
      if waits: continue
      # every source done already: stage 1 at once (what popping the (n, 1) just pushed would do next)
    # stage 1. UOps compare by identity: == of the source tuples is "every source the same object"
    nn = n if (new_src := tuple(map(get, n.src))) == n.src else UOp(n.op, n.dtype, new_src, n.arg)
    if (f := fns[nn.op]) is None or (r := f(nn, ctx) if trace is None else traced(f, nn)) is None:
      replace[n] = nn
      if nn is not n: replace.setdefault(nn, nn)
    else: push((n, 2, r[0])); push((r[0], 0, None))
  return replace[sink]

class untraced_rewrites:
  """Rewrites inside are not recorded: for trial work whose result may be thrown away (an optimizer's rejected plans)."""
  depth = 0
  def __enter__(self): untraced_rewrites.depth += 1
  def __exit__(self, *exc): untraced_rewrites.depth -= 1

def traced() -> bool:
  """Whether a rewrite made now is recorded: a tracer that captures rewrites is installed, and we are outside
  untraced_rewrites. graph_rewrite and graph_step record only then; a plan built untraced may take faster paths that
  make the same kernel (codegen/upcast.py, vectorize.py)."""
  t = tracing.tracer
  return t is not None and t.capture_rewrites and not untraced_rewrites.depth

def graph_rewrite(sink: UOp, pm: PatternMatcher, ctx: Any = None, bottom_up: bool = False, name: str | None = None) -> UOp:
  """Rewrite `sink` with `pm` to a fixed point: sources first, and every replacement is rewritten again."""
  if not traced(): return _rewrite(sink, pm, ctx, bottom_up, None)
  t = tracing.tracer
  t.rewrite_begin(name or "graph_rewrite", _caller_location(__file__), sink)
  out = sink
  try: out = _rewrite(sink, pm, ctx, bottom_up, t)
  finally: t.rewrite_end(out)
  return out

def node_rewriter(pm: PatternMatcher) -> Callable[[UOp], UOp]:
  """u -> graph_rewrite(u, pm), for a graph built node by node from what it gave for each node's sources (a copy of a
  graph simplified as it is made, instead of built whole and then rewritten: each new node is made once, not raw and
  again rewritten). A node whose sources are fixed points tries its own rules only, without a rewrite's setup. Never
  recorded (for a plan built untraced, see traced()); inside a rewrite_memo block it reads and fills the memo that an
  untraced graph_rewrite(_, pm) uses."""
  if (memo := rewrite_memo.memo) is None: return lambda u: _rewrite(u, pm, None, False, None)
  replace = memo.setdefault((id(pm), False), (pm, {}))[1]
  get, fns = replace.get, pm._fns
  def rw(u: UOp) -> UOp:
    if (r := get(u)) is not None: return r
    for s in u.src:
      if get(s) is not s: return _rewrite(u, pm, None, False, None)
    # what _rewrite does with such a node: its rules, and a match's result rewritten in turn
    if (f := fns[u.op]) is None or (m := f(u, None)) is None: replace[u] = u; return u
    r = replace[u] = _rewrite(m[0], pm, None, False, None)
    return r
  return rw

_step_patterns: dict[Any, UPat] = {}

def graph_step(sink: UOp, fn: Callable[..., Any], *args: Any, name: str, **kw: Any) -> Any:
  """A transformation that is a whole-graph function (a code walk, a substitute) rather than a pattern table, traced
  as one rewrite named `name` with one match, from `sink` to what fn made, whose pattern is fn itself (its file and
  line): the trace then has no silent gap between rewrites. fn's own rewrites fold into this one. fn may return a
  UOp, a tuple whose first item is the new sink, or None (it did not apply: no match)."""
  if not traced(): return fn(sink, *args, **kw)
  t = tracing.tracer
  t.rewrite_begin(name, _caller_location(__file__), sink)
  out, new, st = None, sink, time.perf_counter_ns()
  try:
    with untraced_rewrites(): out = fn(sink, *args, **kw)
    new = out[0] if isinstance(out, tuple) and out and isinstance(out[0], UOp) else out if isinstance(out, UOp) else sink
    if new is not sink:
      if (pat := _step_patterns.get(fn)) is None:
        code = getattr(fn, "__code__", None)
        pat = _step_patterns[fn] = UPat(Ops.SINK, name=getattr(fn, "__name__", "step"),
                                        location=(code.co_filename, code.co_firstlineno) if code is not None else _caller_location(__file__))
      t.rewrite_match(pat, sink, new, time.perf_counter_ns() - st)
  finally: t.rewrite_end(new)
  return out

class track_context:
  """Groups the rewrites inside it into one context of the trace (a schedule, a kernel's codegen, ...)."""
  def __init__(self, kind: str, name: str, detail: str = "", loc: tuple[str, int] | None = None):
    self.kind, self.name, self.detail, self.loc, self.id = kind, name, detail, loc, -1
  def __enter__(self):
    if (t := tracing.tracer) is not None and t.capture_rewrites:
      loc = self.loc or _caller_location(__file__)
      self.id = t.context_begin(self.kind, self.name, loc, self.detail) if self.detail else t.context_begin(self.kind, self.name, loc)
    return self
  def __exit__(self, *exc):
    if self.id != -1 and (t := tracing.tracer) is not None: t.context_end(self.id)

