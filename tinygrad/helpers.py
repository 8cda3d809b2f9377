"""Small shared helpers: env vars (the engine's UI), math on shapes, timing."""
from __future__ import annotations
import os, functools, pathlib, sys, time
from typing import Iterable, Sequence, TypeVar, Any
T = TypeVar("T")

@functools.cache
def _env(key: str, default: Any) -> Any:
  val = os.environ.get(key)
  if val is None: return default
  if isinstance(default, (int, float)) and not isinstance(default, bool):
    try: return type(default)(val)
    except ValueError: raise ValueError(f"env var {key}={val!r} must be a number like {default!r}") from None
  return val

def getenv(key: str, default: Any = 0) -> Any:
  """Read an env var, typed like its default (tinygrad's idiom: env vars are the UI). A setting that is a ContextVar
  (NOOPT, JIT, DEBUG, ...) reads its current value, so `with Context(NOOPT=1):` reaches code that asks getenv."""
  if (cv := ContextVar._all.get(key)) is not None: return cv.value
  return _env(key, default)

OSX, WIN = sys.platform == "darwin", sys.platform == "win32"

class ContextVar:
  """An env-var setting that Context can change for a block; compares like the value it holds (DEBUG >= 2).
  lacks: this engine has no such mode (IMAGE, FLOAT16, ...): the value stays at its default (0), which is what tinygrad
  code asking `if IMAGE:` should see here; setting it otherwise raises, saying why. live: (get, set) of engine state
  the setting stands for (TRAINING: Tensor.training), set on Context's entry and put back on its exit."""
  _all: dict[str, ContextVar] = {}
  def __new__(cls, key: str, *args: Any, **kwargs: Any) -> ContextVar:
    # one setting, one object: ContextVar("DEBUG", 0) anywhere (another module, inside a Context) is the same DEBUG
    return ContextVar._all[key] if key in ContextVar._all else super().__new__(cls)
  def __init__(self, key: str, default: Any, lacks: str | None = None, live: tuple[Any, Any] | None = None):
    if ContextVar._all.get(key) is self: return  # made before: keeps its value
    self.key, self.default, self.lacks, self.live = key, default, lacks, live
    # a bad value of a setting read at import (DEBUG=abc) stops the script with one line naming it, as VIZ's does
    try: self.value = _env(key, default)
    except ValueError as e: raise SystemExit(f"tinygrad: {e}") from None
    if (why := self.refuses(self.value)) is not None:
      print(f"tinygrad: {key}={self.value} is ignored: {why}", file=sys.stderr)
      self.value = default
    ContextVar._all[key] = self
  def refuses(self, v: Any) -> str | None:
    """Why value v can't be set (None: it can). lacks may be a function of the value: a mode this engine has for some values."""
    if self.lacks is None or v == self.default: return None
    return self.lacks(v) if callable(self.lacks) else self.lacks
  def __bool__(self): return bool(self.value)
  def __ge__(self, x): return self.value >= x
  def __gt__(self, x): return self.value > x
  def __lt__(self, x): return self.value < x
  def __le__(self, x): return self.value <= x
  def __eq__(self, x): return self.value == x
  def __int__(self): return int(self.value)
  def __repr__(self): return f"{self.key}={self.value}"
  __hash__ = object.__hash__
  def tolist(self, obj: Any = None) -> list:
    """A comma-separated value as a list of names, or of obj's attributes by those names (EMULATED_DTYPES.tolist(dtypes))."""
    names = [s.strip() for s in str(self.value).split(",") if s.strip()]
    return names if obj is None else [getattr(obj, n) for n in names]

def _training(v=None):
  from tinygrad.tensor import Tensor
  if v is None: return Tensor.training
  Tensor.training = bool(v)
def _default_dtype(attr: str):
  def get_set(v=None):
    from tinygrad.dtype import dtypes, to_dtype
    if v is None: return getattr(dtypes, attr)
    setattr(dtypes, attr, to_dtype(v))
  return get_set

# settings with an effect here
DEBUG = ContextVar("DEBUG", 0)
TRAINING = ContextVar("TRAINING", 0, live=(_training, _training))
NOOPT = ContextVar("NOOPT", 0)  # kernels as lowered: no loop merging, upcasts or vector lanes (codegen/opts.py)
JIT = ContextVar("JIT", 1)      # JIT=0: TinyJit runs the Python function every call
DEFAULT_FLOAT = ContextVar("DEFAULT_FLOAT", "float32", live=(_default_dtype("default_float"), _default_dtype("default_float")))
DEFAULT_INT = ContextVar("DEFAULT_INT", "int32", live=(_default_dtype("default_int"), _default_dtype("default_int")))
# what the import saw (the profiler reads them once, then): a Context cannot change them
VIZ, PROFILE = ContextVar("VIZ", ""), ContextVar("PROFILE", "")  # "": not parsed here (VIZ=false is fine)
VIZ.value = PROFILE.value = 0  # tinygrad/__init__.py puts profiler.settings' reading here, the one reader
VIZ.lacks = PROFILE.lacks = "VIZ and PROFILE are read once, when tinygrad is imported: set them in the environment"
# tinygrad's kernel-search and scheduling knobs: accepted (scripts and tinygrad's tests set them) with no effect here,
# where they could only change speed: every kernel's plans are searched and remembered anyway (BEAM, IGNORE_BEAM_CACHE),
# there are no tensor cores, local memory, winograd or split reductions to switch, and results do not depend on them
BEAM, IGNORE_BEAM_CACHE, CACHELEVEL = ContextVar("BEAM", 0), ContextVar("IGNORE_BEAM_CACHE", 0), ContextVar("CACHELEVEL", 2)
USE_TC, TC_SELECT, TC_OPT = ContextVar("TC", 1), ContextVar("TC_SELECT", -1), ContextVar("TC_OPT", 0)
WINO, NOLOCALS, SPLIT_REDUCEOP = ContextVar("WINO", 0), ContextVar("NOLOCALS", 0), ContextVar("SPLIT_REDUCEOP", 1)
DEVECTORIZE, TRANSCENDENTAL, DISABLE_FAST_IDIV = ContextVar("DEVECTORIZE", 1), ContextVar("TRANSCENDENTAL", 1), ContextVar("DISABLE_FAST_IDIV", 1)
NO_MEMORY_PLANNER, LRU, JIT_BATCH_SIZE = ContextVar("NO_MEMORY_PLANNER", 0), ContextVar("LRU", 1), ContextVar("JIT_BATCH_SIZE", 32)
RING, ALL2ALL, ALLREDUCE_CAST = ContextVar("RING", 1), ContextVar("ALL2ALL", 0), ContextVar("ALLREDUCE_CAST", 1)
CAPTURING, TRACEMETA, NO_COLOR = ContextVar("CAPTURING", 1), ContextVar("TRACEMETA", 1), ContextVar("NO_COLOR", 0)
SPEC, CHECK_OOB, PCONTIG, FUSE_OPTIM = ContextVar("SPEC", 1), ContextVar("CHECK_OOB", 0), ContextVar("PCONTIG", 0), ContextVar("FUSE_OPTIM", 0)
IGNORE_OOB = ContextVar("IGNORE_OOB", 1)  # an older tinygrad's switch for its z3 bounds proof of symbolic indexing (none here)
ALLOW_DEVICE_USAGE, MAX_BUFFER_SIZE, MAX_KERNEL_BUFFERS = ContextVar("ALLOW_DEVICE_USAGE", 1), ContextVar("MAX_BUFFER_SIZE", 0), ContextVar("MAX_KERNEL_BUFFERS", 0)
USE_ATOMICS, ALLOW_TF32, CCACHE, SCACHE = ContextVar("USE_ATOMICS", 0), ContextVar("ALLOW_TF32", 0), ContextVar("CCACHE", 1), ContextVar("SCACHE", 1)
# modes this engine does not have: 0 here, truthfully (tinygrad's tests skip on `if IMAGE:`), and setting them raises
IMAGE = ContextVar("IMAGE", 0, lacks="this engine has no image buffers (tinygrad's OpenCL/QCOM image mode)")
FLOAT16 = ContextVar("FLOAT16", 0, lacks="this engine has no FLOAT16 mode (cast the model yourself: .half())")
OPENPILOT_HACKS = ContextVar("OPENPILOT_HACKS", 0, lacks="this engine has no openpilot mode")
CPU_LLVM = ContextVar("CPU_LLVM", 0, lacks="the CPU device compiles C with the system C compiler; there is no LLVM backend")
AMD_LLVM = ContextVar("AMD_LLVM", 0, lacks="this engine has no AMD device")
EMULATE = ContextVar("EMULATE", "", lacks="this engine emulates no other device")
def _emulated(v: Any) -> str | None:
  # bfloat16 and the fp8s are always emulated here (stored as their bits, computed in float: renderer/cstyle.py, fp8_c.py),
  # so asking for that is what happens anyway; the other dtypes run natively, with no emulated path to switch to
  native = [n for n in str(v).split(",") if n.strip() and n.strip() not in _ALWAYS_EMULATED]
  return f"{', '.join(n.strip() for n in native)} run natively here: only {', '.join(_ALWAYS_EMULATED)} are emulated (always)" if native else None
_ALWAYS_EMULATED = ("bfloat16", "fp8e4m3", "fp8e5m2", "fp8e4m3fnuz", "fp8e5m2fnuz")
EMULATED_DTYPES = ContextVar("EMULATED_DTYPES", "", lacks=_emulated)
VALIDATE_WITH_CPU = ContextVar("VALIDATE_WITH_CPU", 0, lacks="this engine does not re-run kernels on CPU to check them")
CI = bool(_env("CI", ""))

class _Dev(ContextVar):
  """DEV, the device asked for (DEV=CPU, DEV=CUDA:1); tinygrad's tests read DEV.device / DEV.interface off it. This
  engine picks no interface, renderer or arch by name: those are ''. Device.DEFAULT reads DEV once, so Context can't
  change it."""
  @property
  def device(self) -> str: return str(self.value).partition(":")[0].upper()
  interface = renderer = arch = ""
DEV = _Dev("DEV", "")
DEV.lacks = "DEV is read once, by Device.DEFAULT: set it in the environment (or pass device= to a tensor)"

class Context:
  """with Context(DEBUG=2, TRAINING=1): ... sets those for the block (also usable as a decorator). An unknown name is a
  KeyError; a mode this engine lacks (IMAGE=1, ...) a ValueError saying so."""
  def __init__(self, **kwargs: Any):
    for k, v in kwargs.items():
      if k not in ContextVar._all: raise KeyError(f"Context: unknown setting {k}; known: {', '.join(sorted(ContextVar._all))}")
      if (cv := ContextVar._all[k]).lacks is not None and v != cv.value and (why := cv.refuses(v)) is not None:
        raise ValueError(f"Context({k}={v!r}): {why}")
    self.kwargs, self.stack = kwargs, []
  def __enter__(self):
    old = {}
    for k, v in self.kwargs.items():
      cv = ContextVar._all[k]
      old[k] = (cv.value, cv.live[0]() if cv.live else None)
      cv.value = v
      if cv.live: cv.live[1](v)
    self.stack.append(old)  # a stack: the same Context object may be entered again inside itself (as a decorator)
    return self
  def __exit__(self, *exc):
    for k, (v, live) in self.stack.pop().items():
      cv = ContextVar._all[k]
      cv.value = v
      if cv.live: cv.live[1](live)
  def __call__(self, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kw):
      with self: return fn(*args, **kw)
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
def round_down(n: int, multiple: int) -> int: return n // multiple * multiple
def next_power2(x: int) -> int: return 1 if x == 0 else 1 << (x - 1).bit_length()
def cdiv(x: int, y: int) -> int:
  """Division rounding toward zero, as C does (0 for y == 0, as tinygrad's symbolic math takes it)."""
  return 0 if y == 0 else abs(x) // abs(y) * (-1 if (x < 0) != (y < 0) else 1)
def cmod(x: int, y: int) -> int: return x - cdiv(x, y) * y

# tinygrad's small sequence helpers (tinygrad code and tests import them from here)
def all_same(items: Sequence) -> bool: return all(x == items[0] for x in items)  # True for an empty sequence
def argfix(*x: Any) -> tuple:
  """f(1, 2), f((1, 2)) and f([1, 2]) all mean the shape (1, 2); anything else after a tuple is an error."""
  if x and isinstance(x[0], (tuple, list)):
    if len(x) != 1: raise ValueError(f"bad arguments {x}: a shape is either one tuple/list or several ints")
    return tuple(x[0])
  return x
def make_tuple(x: int | Sequence[int], cnt: int) -> tuple[int, ...]: return (x,) * cnt if isinstance(x, int) else tuple(x)
def to_tuple(x: Any) -> tuple: return x if isinstance(x, tuple) else (x,)
def fully_flatten(x: Any) -> list:
  """Every leaf of nested lists/tuples (and numpy arrays), in order."""
  if isinstance(x, (list, tuple)) or (hasattr(x, "shape") and hasattr(x, "tolist") and getattr(x, "shape", ()) != ()):
    return [v for sub in (x.tolist() if hasattr(x, "tolist") else x) for v in fully_flatten(sub)]
  return [x]
def partition(itr: Iterable[T], fxn: Any) -> tuple[list[T], list[T]]:
  yes: list[T] = []; no: list[T] = []
  for v in itr: (yes if fxn(v) else no).append(v)
  return yes, no
def unwrap(x: T | None) -> T:
  if x is None: raise ValueError("unwrap: the value is None")
  return x
def get_single_element(x: Sequence[T]) -> T:
  if len(x) != 1: raise ValueError(f"expected one element, got {len(x)}: {x!r}")
  return x[0]
class MergeError(ValueError, AssertionError):
  """Two values for one key: a ValueError, and the AssertionError tinygrad raises."""
def merge_dicts(ds: Iterable[dict]) -> dict:
  """One dict of all; a key given two different values is an error (tinygrad's merge of variable bindings)."""
  out: dict = {}
  for d in ds:
    for k, v in d.items():
      if k in out and out[k] != v: raise MergeError(f"merge_dicts: {k!r} is both {out[k]!r} and {v!r}")
      out[k] = v
  return out
def get_child(obj: Any, key: str) -> Any:
  """obj.a.0.b for key 'a.0.b': attributes, list indices (digits) and dict keys, as state-dict names walk a model."""
  for k in key.split("."):
    if k.isnumeric() and not isinstance(obj, dict): obj = obj[int(k)]
    elif isinstance(obj, dict): obj = obj[k]
    else: obj = getattr(obj, k)
  return obj
def strip_parens(fst: str) -> str:
  """'(a+b)' -> 'a+b', only when the outer parentheses match each other ('(int)(1+2)' is kept)."""
  if not (fst[:1] == "(" and fst[-1:] == ")"): return fst
  depth = 0
  for c in fst[1:-1]:
    depth += (c == "(") - (c == ")")
    if depth < 0: return fst
  return fst[1:-1] if depth == 0 else fst
def mv_address(mv: memoryview) -> int:
  """The address of a writable memoryview's first byte (for Tensor.from_blob)."""
  import ctypes
  return ctypes.addressof(ctypes.c_char.from_buffer(mv))
def pluralize(st: str, cnt: int) -> str: return f"{cnt} {st}" + ("" if cnt == 1 else "s")
def to_function_name(s: str) -> str:
  """s as a C identifier: letters, digits and _ kept, every other character as its hex code."""
  import string
  return "".join(c if c in string.ascii_letters + string.digits + "_" else f"{ord(c):02X}" for c in ansistrip(s))
def time_to_str(t: float, w: int = 8) -> str:
  return next((f"{t * d:{w}.2f}{pr}" for d, pr in ((1, "s "), (1e3, "ms")) if t > 10 / d), f"{t * 1e6:{w}.2f}us")
def size_to_str(s: int) -> str:
  return next((f"{s / d:.2f} {pr}" for d, pr in ((1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB")) if s >= d), f"{s} B")

# what tinygrad scripts print with (`from tinygrad.helpers import colored, trange`), kept in their own file
from tinygrad.terminal import colored, ansistrip, ansilen, tqdm, trange, Timing  # noqa: E402, F401
# older tinygrad had the dtypes here (its beautiful_mnist / beautiful_cartpole examples import them from helpers)
from tinygrad.dtype import DType, dtypes  # noqa: E402, F401

def cache_dir(kind: str) -> pathlib.Path:
  """Where one kind of cached file lives (compiled kernels: `cpu`, `cuda`; `plans`; `downloads`): TINYVIZ_CACHE, else ~/.cache/tinyviz."""
  return pathlib.Path(os.environ.get("TINYVIZ_CACHE", pathlib.Path.home() / ".cache" / "tinyviz")) / kind

# The caches' small files (a plan's name, a program, a kernel's library) through os's calls, not pathlib's
# read_text/write_text: a first run reads and writes hundreds of them, and pathlib's io stack per file (buffers,
# encodings) cost about as much as the system calls themselves
def read_small(path: str | os.PathLike) -> bytes | None:
  """A small file's bytes, or None where it can't be read (missing, a folder, no permission)."""
  try: fd = os.open(path, os.O_RDONLY)
  except OSError: return None
  try:
    out = b""
    while chunk := os.read(fd, 1 << 16): out += chunk
    return out
  except OSError: return None
  finally: os.close(fd)

def write_atomic(path: str | os.PathLike, data: bytes) -> None:
  """Writes data to path through a temp file of this process beside it, renamed over it: a parallel reader sees the
  whole old file or the whole new one. Raises OSError (a read-only cache: callers decide)."""
  tmp = f"{os.fspath(path)}.{os.getpid()}.tmp"
  fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
  try:
    view = memoryview(data)
    while view: view = view[os.write(fd, view):]
  finally: os.close(fd)
  try: os.replace(tmp, path)
  except OSError:
    os.unlink(tmp); raise

def fetch(url: str, name: str | pathlib.Path | None = None, subdir: str | None = None, gunzip: bool = False,
          allow_caching: bool = True) -> pathlib.Path:
  """The file at url, downloaded once into cache_dir("downloads")[/subdir] (as `name`, else a hash of the url; gunzip:
  stored decompressed); tinygrad's helper of the same name. A url that cannot be downloaded (no network, HTTP error)
  raises OSError naming the url and why; a file:// url is read from disk."""
  import gzip, hashlib, tempfile, urllib.error, urllib.request
  if name is not None and pathlib.Path(name).is_absolute(): out = pathlib.Path(name)
  else: out = cache_dir("downloads") / (subdir or "") / (name or hashlib.sha256(url.encode()).hexdigest()[:32])
  if out.exists() and allow_caching: return out
  out.parent.mkdir(parents=True, exist_ok=True)
  with tempfile.NamedTemporaryFile(dir=out.parent, suffix=".part", delete=False) as f: tmp = f.name
  try:
    try:
      with urllib.request.urlopen(url, timeout=60) as r, open(tmp, "wb") as f:
        src = gzip.GzipFile(fileobj=r) if gunzip else r
        while chunk := src.read(1 << 20): f.write(chunk)
    except (urllib.error.URLError, OSError, ValueError) as e:
      why = e.reason if isinstance(e, urllib.error.URLError) else e
      raise OSError(f"fetch: could not download {url}: {why} (no network? put the file at {out} and it is used as is)") from e
    os.replace(tmp, out)  # whole or not at all: an interrupted download leaves no file that looks complete
  finally:
    if os.path.exists(tmp): os.unlink(tmp)
  return out

def temp(x: str, append_user: bool = False) -> str:
  """A path in the system's temp folder (tinygrad's tests write scratch files there); append_user: suffixed with the
  user name, so two users do not share it."""
  import getpass, tempfile
  return str(pathlib.Path(tempfile.gettempdir()) / (f"{x}.{getpass.getuser()}" if append_user else x))
