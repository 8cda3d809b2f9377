"""Small shared helpers: env vars (the engine's UI), math on shapes, timing."""
from __future__ import annotations
import os, functools, pathlib, time
from typing import Iterable, TypeVar, Any
T = TypeVar("T")

@functools.cache
def getenv(key: str, default: Any = 0) -> Any:
  """Read an env var, typed like its default (tinygrad's idiom: env vars are the UI)."""
  val = os.environ.get(key)
  if val is None: return default
  if isinstance(default, (int, float)) and not isinstance(default, bool):
    try: return type(default)(val)
    except ValueError: raise ValueError(f"env var {key}={val!r} must be a number like {default!r}") from None
  return val

class ContextVar:
  """An env-var setting that Context can change for a block; compares like the int it holds (DEBUG >= 2)."""
  _all: dict[str, ContextVar] = {}
  def __init__(self, key: str, default: int): self.key, self.value = key, getenv(key, default); ContextVar._all[key] = self
  def __bool__(self): return bool(self.value)
  def __ge__(self, x): return self.value >= x
  def __gt__(self, x): return self.value > x
  def __lt__(self, x): return self.value < x
  def __le__(self, x): return self.value <= x
  def __eq__(self, x): return self.value == x
  def __int__(self): return int(self.value)
  def __repr__(self): return f"{self.key}={self.value}"
  __hash__ = object.__hash__

DEBUG = ContextVar("DEBUG", 0)
TRAINING = ContextVar("TRAINING", 0)
# tinygrad's kernel search level: accepted (scripts set it with Context(BEAM=2) or the env var) and has no effect here,
# where every kernel's optimization plans are searched anyway (see docs/engine.md, "opt")
BEAM = ContextVar("BEAM", 0)

class Context:
  """with Context(DEBUG=2, TRAINING=1): ... sets those for the block (also usable as a decorator)."""
  def __init__(self, **kwargs: int): self.kwargs, self.old = kwargs, {}
  def __enter__(self):
    from tinygrad.tensor import Tensor
    for k, v in self.kwargs.items():
      if k not in ContextVar._all: raise KeyError(f"Context: unknown setting {k}; known: {', '.join(ContextVar._all)}")
      self.old[k] = ContextVar._all[k].value; ContextVar._all[k].value = v
    if "TRAINING" in self.kwargs: self.old_training, Tensor.training = Tensor.training, bool(self.kwargs["TRAINING"])
    return self
  def __exit__(self, *exc):
    from tinygrad.tensor import Tensor
    for k, v in self.old.items(): ContextVar._all[k].value = v
    if "TRAINING" in self.kwargs: Tensor.training = self.old_training
  def __call__(self, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kw):
      with Context(**self.kwargs): return fn(*args, **kw)
    return wrapper

def prod(x: Iterable[T], start: Any = 1) -> Any:
  for v in x: start = start * v
  return start
def argsort(x: list) -> list[int]: return sorted(range(len(x)), key=x.__getitem__)
def flatten(x: Iterable[Iterable[T]]) -> list[T]: return [v for sub in x for v in sub]
def dedup(x: Iterable[T]) -> list[T]: return list(dict.fromkeys(x))
def all_int(x: Iterable) -> bool: return all(isinstance(v, int) for v in x)
def ceildiv(a: int, b: int) -> int: return -(-a // b)
def strides_for_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
  out, acc = [], 1
  for s in reversed(shape): out.append(acc); acc *= s
  return tuple(reversed(out))
def normalize_axis(axis: int, ndim: int) -> int:
  if not -max(ndim, 1) <= axis < max(ndim, 1): raise IndexError(f"axis {axis} is out of range for a tensor with {ndim} dims")
  return axis + ndim if axis < 0 else axis
def perf_ns() -> int: return time.perf_counter_ns()

class GlobalCounters:
  """What ran since the last reset, as tinygrad users know it."""
  global_ops: int = 0
  global_mem: int = 0
  time_sum_s: float = 0.0
  kernel_count: int = 0
  mem_used: int = 0
  @staticmethod
  def reset() -> None: GlobalCounters.global_ops = GlobalCounters.global_mem = GlobalCounters.kernel_count = 0; GlobalCounters.time_sum_s = 0.0

def profile_marker(name: str) -> None:
  """A vertical line on the timeline (with VIZ or PROFILE set; free otherwise)."""
  from tinygrad import tracing
  if (t := tracing.tracer) is not None: t.marker(name, perf_ns())

def round_up(n: int, multiple: int) -> int: return ceildiv(n, multiple) * multiple

# what tinygrad scripts print with (`from tinygrad.helpers import colored, trange`), kept in their own file
from tinygrad.terminal import colored, ansistrip, ansilen, tqdm, trange, Timing  # noqa: E402, F401

def cache_dir(kind: str) -> pathlib.Path:
  """Where one kind of cached file lives (compiled kernels: `cpu`, `cuda`; `plans`; `downloads`): TINYVIZ_CACHE, else ~/.cache/tinyviz."""
  return pathlib.Path(os.environ.get("TINYVIZ_CACHE", pathlib.Path.home() / ".cache" / "tinyviz")) / kind

def fetch(url: str, name: str | None = None) -> pathlib.Path:
  """The file at url, downloaded once into cache_dir("downloads") (as `name`, else a hash of the url); tinygrad's
  helper of the same name. Raises OSError when it cannot be downloaded."""
  import hashlib, tempfile, urllib.request
  out = cache_dir("downloads") / (name or hashlib.sha256(url.encode()).hexdigest()[:32])
  if out.exists(): return out
  out.parent.mkdir(parents=True, exist_ok=True)
  with tempfile.NamedTemporaryFile(dir=out.parent, suffix=".part", delete=False) as f: tmp = f.name
  try:
    with urllib.request.urlopen(url, timeout=60) as r, open(tmp, "wb") as f:
      while chunk := r.read(1 << 20): f.write(chunk)
    os.replace(tmp, out)  # whole or not at all: an interrupted download leaves no file that looks complete
  finally:
    if os.path.exists(tmp): os.unlink(tmp)
  return out
