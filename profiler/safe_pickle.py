"""Reading a pickle written by someone else without running any of it.

A pickle names callables (module + name) and asks the reader to call them; `pickle.load` imports and calls whatever
it names, so opening a file could run `os.system`. This reader's class lookup never imports anything and never
returns a real callable from a name in the file: every class name becomes an inert stand-in type (Stub) whose
instances only record what the file gave them (constructor args, state, items). A short list of harmless builtins
is built for real, by our own checked functions; a name that can only be there to do harm (os.system, eval,
builtins.getattr, subprocess, importlib, ...) is refused with an error naming it. docs/trace-format.md describes it.
"""
from __future__ import annotations
import decimal, io, pickle
from typing import Any, Callable

PICKLE_MAX_DEPTH = 10_000  # nested containers/objects; tinygrad's files stay under ~200 (UOp graphs are flat tables)

class UnsafePickle(pickle.UnpicklingError):
  """The file asks for a callable we refuse to even stand in for, or breaks a limit."""

class Stub:
  """An inert stand-in for an object of a class named in the file: its module and name are on its type, what the
  file gave it is kept as data. It has no behaviour and never calls anything it holds."""
  __module_name__ = "?"
  __class_name__ = "?"
  def __new__(cls, *args: Any, **kwargs: Any) -> "Stub":
    self = object.__new__(cls)
    object.__setattr__(self, "_args", args)
    object.__setattr__(self, "_kwargs", kwargs)
    object.__setattr__(self, "_state", None)
    object.__setattr__(self, "_items", [])
    object.__setattr__(self, "_dictitems", [])
    return self
  def __init__(self, *args: Any, **kwargs: Any) -> None: pass
  def __setstate__(self, state: Any) -> None: object.__setattr__(self, "_state", state)
  def append(self, v: Any) -> None: self._items.append(v)
  def extend(self, vs: Any) -> None: self._items.extend(vs)
  def __setitem__(self, k: Any, v: Any) -> None: self._dictitems.append((k, v))
  def __setattr__(self, k: str, v: Any) -> None: raise AttributeError("stand-ins are read-only")
  # identity semantics: a file's object never gets to decide equality or hashing
  __eq__ = object.__eq__
  __hash__ = object.__hash__
  def __repr__(self) -> str: return f"<{type(self).__module_name__}.{type(self).__class_name__}>"

def stub_name(o: Any) -> str | None:
  """'module.Class' of a stand-in, None for anything else."""
  return f"{type(o).__module_name__}.{type(o).__class_name__}" if isinstance(o, Stub) else None

def fields(o: Stub) -> dict[str, Any]:
  """A stand-in's named state: a dataclass pickles {name: value} (or (None, {slot: value}) with __slots__)."""
  st = o._state
  out: dict[str, Any] = {}
  if isinstance(st, tuple) and len(st) == 2 and (st[0] is None or isinstance(st[0], dict)) and isinstance(st[1], dict):
    out.update(st[0] or {}); out.update(st[1])
  elif isinstance(st, dict): out.update(st)
  return {k: v for k, v in out.items() if isinstance(k, str)}

# *** what a name in the file resolves to ***

REFUSED_MODULES = {"os", "posix", "nt", "posixpath", "ntpath", "subprocess", "sys", "importlib", "runpy", "shutil", "socket",
                   "pickle", "_pickle", "marshal", "ctypes", "_ctypes", "code", "codeop", "types", "io", "_io", "pty", "signal",
                   "multiprocessing", "threading", "_thread", "webbrowser", "platform", "operator", "_operator", "functools",
                   "_functools", "itertools", "copyreg", "gc", "inspect", "pdb", "bdb", "tempfile", "pathlib", "glob", "asyncio",
                   "urllib", "http", "ftplib", "smtplib", "telnetlib", "xmlrpc", "sqlite3", "zipimport", "pkgutil", "site",
                   "sysconfig", "distutils", "setuptools", "pip", "timeit", "trace", "cProfile", "profile", "tkinter", "turtle",
                   "builtins", "__builtin__", "__main__", "uvicorn", "starlette", "numpy.lib", "torch", "dill", "cloudpickle"}

def _seq(kind: type) -> Callable[..., Any]:
  def build(x: Any = ()) -> Any:
    if not isinstance(x, (list, tuple, set, frozenset, dict, str, bytes, bytearray)):
      raise UnsafePickle(f"the file asks for builtins.{kind.__name__} of a {type(x).__name__}; only of a list, tuple, set or dict")
    return kind(x)
  return build

def _bytes(kind: type) -> Callable[..., Any]:
  def build(x: Any = b"", *enc: Any) -> Any:
    if isinstance(x, str) and enc: return kind(x.encode("latin1"))
    if not isinstance(x, (bytes, bytearray, list, tuple)):  # an int here would allocate that many bytes
      raise UnsafePickle(f"the file asks for builtins.{kind.__name__} of a {type(x).__name__}")
    return kind(x)
  return build

def _scalar(kind: type, limit: int = 10_000) -> Callable[..., Any]:
  def build(*args: Any) -> Any:
    if not all(isinstance(a, (int, float, str, bool, bytes)) and (not isinstance(a, (str, bytes)) or len(a) <= limit) for a in args):
      raise UnsafePickle(f"the file asks for builtins.{kind.__name__} of {[type(a).__name__ for a in args]}")
    return kind(*args)
  return build

def _codecs_encode(s: Any, encoding: str = "utf-8") -> bytes:  # how protocol 2 pickles bytes
  if not isinstance(s, str) or encoding != "latin1": raise UnsafePickle("the file asks for _codecs.encode other than of a str to latin1")
  return s.encode("latin1")

def _reconstructor(cls: Any, base: Any, state: Any = None) -> Any:  # copyreg._reconstructor: protocol 0/1 objects
  if isinstance(cls, type) and issubclass(cls, Stub): return cls()
  raise UnsafePickle(f"the file asks copyreg._reconstructor for {cls!r}")

def _slice(*args: Any) -> slice:
  if not all(a is None or isinstance(a, int) for a in args): raise UnsafePickle("the file asks for a slice of non-integers")
  return slice(*args)

class _DefaultDict(dict):
  """collections.defaultdict, without its factory: a missing key is never filled in by calling something from the file."""
  def __init__(self, factory: Any = None, *args: Any) -> None: super().__init__(*args)

ALLOWED: dict[tuple[str, str], Callable[..., Any]] = {
  **{("builtins", t.__name__): _seq(t) for t in (tuple, list, dict, set, frozenset)},
  **{("builtins", t.__name__): _bytes(t) for t in (bytes, bytearray)},
  **{("builtins", t.__name__): _scalar(t) for t in (int, float, complex, bool, str)},
  ("builtins", "slice"): _slice,
  ("decimal", "Decimal"): _scalar(decimal.Decimal),
  ("_codecs", "encode"): _codecs_encode,
  ("copyreg", "_reconstructor"): _reconstructor,
  ("builtins", "object"): Stub,  # copyreg._reconstructor's base argument
  ("collections", "OrderedDict"): _seq(dict),
  ("collections", "defaultdict"): _DefaultDict,
}

def refused(module: str, name: str) -> bool:
  """A module that can reach the system, the interpreter or other code, or a dunder name anywhere (`x.__class__`,
  `__import__`, `__builtins__`): the ways out of plain data."""
  return module.split(".")[0] in REFUSED_MODULES or module in REFUSED_MODULES or any(p.startswith("__") for p in (*module.split("."), *name.split(".")))

class SafeUnpickler(pickle.Unpickler):
  """pickle.Unpickler whose find_class gives stand-ins (see the module's docstring); records which names it stood in for."""
  def __init__(self, f: io.BufferedIOBase) -> None:
    super().__init__(f)
    self.stubs: dict[tuple[str, str], type] = {}

  def find_class(self, module: str, name: str) -> Any:
    if (got := ALLOWED.get((module, name))) is not None: return got
    if refused(module, name): raise UnsafePickle(f"refused: the file asks for {module}.{name}, which a trace has no reason to name")
    if (cls := self.stubs.get((module, name))) is None:
      cls = self.stubs[(module, name)] = type(name, (Stub,), {"__module_name__": module, "__class_name__": name, "__slots__": ()})
    return cls

  def persistent_load(self, pid: Any) -> Any: raise UnsafePickle(f"refused: the file asks for a persistent object {pid!r:.60}")

def check_depth(root: Any, limit: int = PICKLE_MAX_DEPTH) -> None:
  """Refuses an object graph nested deeper than limit (walked without recursion, each object once: shared parts of
  a DAG are not walked again, so a small file that expands exponentially costs no more than its size)."""
  seen: set[int] = set()
  nested = (list, tuple, set, frozenset, dict, Stub)
  stack: list[tuple[Any, int]] = [(root, 0)]
  while stack:
    o, d = stack.pop()
    if d > limit: raise UnsafePickle(f"refused: objects nested deeper than {limit}")
    if id(o) in seen: continue
    seen.add(id(o))
    if isinstance(o, dict): kids: Any = [*o.keys(), *o.values()]
    elif isinstance(o, Stub): kids = (o._args, o._kwargs, o._state, o._items, o._dictitems)
    else: kids = o
    stack.extend([(k, d + 1) for k in kids if isinstance(k, nested) and id(k) not in seen])  # atoms nest nothing

def loads(data: bytes) -> tuple[Any, dict[tuple[str, str], type]]:
  """The file's object (built of builtins and stand-ins) and the class names it stood in for. Raises UnsafePickle
  for a refused name or limit, pickle.UnpicklingError (or ValueError/EOFError) for a file that is not a whole pickle."""
  u = SafeUnpickler(io.BytesIO(data))
  try: obj = u.load()
  except UnsafePickle: raise
  except RecursionError: raise UnsafePickle("refused: objects nested deeper than the reader can follow") from None
  except (TypeError, AttributeError, IndexError, KeyError, MemoryError, OverflowError) as e:
    # e.g. a REDUCE whose callable is a plain value: the file is malformed, not something to run
    raise pickle.UnpicklingError(f"not a pickle this reader can rebuild: {type(e).__name__}: {e}") from None
  check_depth(obj)
  return obj, u.stubs
