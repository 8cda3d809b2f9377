"""The CPU device: C source compiled by the system C compiler into a shared library (cached on disk by source hash),
loaded with ctypes. One compiler call builds all new kernels of a schedule."""
from __future__ import annotations
import ctypes, functools, hashlib, os, pathlib, shutil, subprocess, tempfile, time
from tinygrad.codegen.linearize import Program
from tinygrad.renderer.cstyle import CStyleRenderer, PRELUDE
from tinygrad.device import Buffer
from tinygrad.helpers import cache_dir

# OpenMP threads that spin between parallel kernels steal the core the serial kernels run on (measured: a digits
# training step 2.4x slower); passive waiting costs only a wake-up per parallel kernel. Read when libgomp loads.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

CACHE_DIR = cache_dir("cpu")
CFLAGS = ["-O3", "-march=native", "-fPIC", "-shared", "-fopenmp", "-fwrapv", "-fno-math-errno"]

class CompileError(RuntimeError): pass

def find_compiler() -> str:
  cc = os.environ.get("CC") or next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
  if cc is None or shutil.which(cc) is None:
    raise CompileError(f"no C compiler found{f' (CC={cc!r} is not on PATH)' if cc else ''}: install gcc or clang, set CC, or use DEV=PYTHON")
  return cc

def compile_c(src: str) -> pathlib.Path:
  """Compile C source to a shared library; the library is cached on disk under the hash of source and flags."""
  cc = find_compiler()
  key = hashlib.sha256((cc + " ".join(CFLAGS) + "\0" + src).encode()).hexdigest()[:32]
  out = CACHE_DIR / f"{key}.so"
  if out.exists(): return out
  CACHE_DIR.mkdir(parents=True, exist_ok=True)
  with tempfile.NamedTemporaryFile(dir=CACHE_DIR, suffix=".so.tmp", delete=False) as tmp: tmp_path = tmp.name
  try:
    res = subprocess.run([cc, *CFLAGS, "-x", "c", "-", "-o", tmp_path, "-lm"], input=src.encode(), capture_output=True)
    if res.returncode != 0: raise CompileError(f"{cc} failed to compile a kernel:\n{res.stderr.decode(errors='replace')}\n--- source ---\n{src}")
    os.replace(tmp_path, out)  # atomic: a parallel process never loads half a library
  finally:
    if os.path.exists(tmp_path): os.unlink(tmp_path)
  return out

@functools.cache
def compiler_works() -> bool:
  try: compile_c("int tinyviz_probe(void) { return 1; }"); return True
  except (CompileError, OSError): return False

class CPUDevice:
  renderer = CStyleRenderer()
  def __init__(self, name: str): self.name = name
  def compile(self, progs: list[Program]) -> float:
    """Render, compile in one call and bind every program not yet compiled; returns the compile time in seconds."""
    todo = [p for p in progs if getattr(p, "fxn", None) is None]
    if not todo: return 0.0
    st = time.perf_counter()
    srcs = dict.fromkeys(p.src for p in todo)
    lib = ctypes.CDLL(str(compile_c(PRELUDE + "\n\n".join(srcs))))
    for p in todo:
      fxn = getattr(lib, p.name)
      fxn.argtypes, fxn.restype = [ctypes.c_void_p] * len(p.params), None
      p.fxn = fxn  # type: ignore[attr-defined]
    return time.perf_counter() - st
  def run(self, p: Program, bufs: list[Buffer]) -> None: p.fxn(*[b.ptr for b in bufs])  # type: ignore[attr-defined]
  def synchronize(self) -> None: pass
