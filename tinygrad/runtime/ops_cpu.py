"""The CPU device: C source compiled by the system C compiler into a shared library (cached on disk by source hash),
loaded with ctypes. The new kernels of a schedule are built by a few compiler calls running side by side."""
from __future__ import annotations
import ctypes, functools, hashlib, os, pathlib, shutil, subprocess, tempfile, time
from typing import Callable
from tinygrad.codegen.linearize import Program
from tinygrad.renderer.cstyle import CStyleRenderer, PRELUDE
from tinygrad.device import Buffer
from tinygrad.helpers import cache_dir, getenv

# OpenMP threads that spin between parallel kernels steal the core the serial kernels run on (measured: a digits
# training step 2.4x slower); passive waiting costs only a wake-up per parallel kernel. Read when libgomp loads.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

CACHE_DIR = cache_dir("cpu")
# -O2, not -O3: GCC 12's -O3 with AVX2 miscompiles a select inside a nested loop whose inner trip count is not a
# multiple of the vector width (`(x < -1).where(0, y)` over a 4x6 tensor: wrong from the second row on; its masked
# epilogue). -O2 vectorizes the same loops only where no epilogue is needed, and was as fast on our kernels, whose
# hot loops use explicit vector types (tests/test_cpu_codegen.py keeps the case)
# --param max-combine-insns=2: GCC's RTL combiner also tries every 3 and 4 instructions that feed each other, which on
# a big unrolled kernel takes most of its compile (the small GPT's loss gradient, 128 copies: 6.4 -> 2.7 s) and made
# no difference to the code: every one of 195 kernels (digits CNN, small GPT, MLP, matmuls) compiled to the same machine
# code (objdump) with it as without it
CFLAGS = ["-O2", "-march=native", "-fPIC", "-shared", "-fopenmp", "-fwrapv", "-fno-math-errno", "--param", "max-combine-insns=2"]

# compiler processes for one schedule's new kernels: CPU_COMPILE_JOBS, else one per core this process may use
COMPILE_JOBS = max(0, getenv("CPU_COMPILE_JOBS", 0)) or len(os.sched_getaffinity(0))
MIN_KERNELS_PER_LIB = 4

class CompileError(RuntimeError): pass

def find_compiler() -> str:
  cc = os.environ.get("CC") or next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
  if cc is None or shutil.which(cc) is None:
    raise CompileError(f"no C compiler found{f' (CC={cc!r} is not on PATH)' if cc else ''}: install gcc or clang, set CC, or use DEV=PYTHON")
  return cc

def _lib_path(cc: str, src: str) -> pathlib.Path:
  return CACHE_DIR / f"{hashlib.sha256((cc + ' '.join(CFLAGS) + chr(0) + src).encode()).hexdigest()[:32]}.so"

@functools.cache
def _sweep_stale_tmp(age_s: float = 600) -> None:
  """Once per process: temp files a killed compile left in the cache (a live one, of a parallel process, is young)."""
  now = time.time()
  for p in CACHE_DIR.glob("*.so.tmp"):
    try:
      if now - p.stat().st_mtime > age_s: p.unlink()
    except OSError: pass

def compile_many(srcs: list[str]) -> list[pathlib.Path]:
  """Compile each C source to a shared library, the compilers running side by side; libraries are cached on disk
  under the hash of source and flags."""
  cc = find_compiler()
  outs = [_lib_path(cc, src) for src in srcs]
  todo = [(src, out) for src, out in dict(zip(srcs, outs)).items() if not out.exists()]
  if not todo: return outs
  CACHE_DIR.mkdir(parents=True, exist_ok=True)
  _sweep_stale_tmp()
  running = []
  try:
    for src, out in todo:
      with tempfile.NamedTemporaryFile(dir=CACHE_DIR, suffix=".so.tmp", delete=False) as tmp: tmp_path = tmp.name
      with tempfile.TemporaryFile() as f:  # the source through a file: a pipe's writer would wait for each reader in turn
        f.write(src.encode()); f.seek(0)
        proc = subprocess.Popen([cc, *CFLAGS, "-x", "c", "-", "-o", tmp_path, "-lm"], stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
      running.append((proc, src, out, tmp_path))
    for proc, src, out, tmp_path in running:
      _, err = proc.communicate()
      if proc.returncode != 0: raise CompileError(f"{cc} failed to compile a kernel:\n{err.decode(errors='replace')}\n--- source ---\n{src}")
      os.replace(tmp_path, out)  # atomic: a parallel process never loads half a library
  finally:
    for proc, _, _, tmp_path in running:
      if proc.poll() is None: proc.kill(); proc.wait()
      if os.path.exists(tmp_path): os.unlink(tmp_path)
  return outs

def compile_c(src: str) -> pathlib.Path:
  """Compile C source to a shared library (cached on disk)."""
  return compile_many([src])[0]

def split_sources(srcs: list[str], parts: int) -> list[list[str]]:
  """Consecutive runs of kernels of about equal total length, one per compiler process (at most `parts`; at least
  MIN_KERNELS_PER_LIB each, as starting a compiler costs about as much as compiling a few small kernels)."""
  parts = max(1, min(parts, len(srcs) // MIN_KERNELS_PER_LIB))
  total, out, size = sum(map(len, srcs)), [[]], 0
  for s in srcs:
    if out[-1] and size >= total * len(out) / parts: out.append([])
    out[-1].append(s); size += len(s)
  return out

@functools.cache
def compiler_problem() -> str | None:
  """Why the CPU device can't build kernels here (no compiler, a compiler that fails, a kernel cache folder it can't
  write), in one line; None when a probe kernel compiles."""
  try: compile_c("int tinyviz_probe(void) { return 1; }"); return None
  except (CompileError, OSError) as e: return (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
def compiler_works() -> bool: return compiler_problem() is None

@functools.cache
def native_vector_floats() -> int:
  """Floats in one vector register of the CPU the compiler targets (-march=native): 16 with AVX-512, 8 with AVX, 4
  otherwise (SSE, NEON). Wider GCC vectors than the registers are split into slow code (a floatx16 matmul on an AVX2
  Zen 2 ran at 1.2 GFLOPS, its accumulators moved through the stack every step). CPU_VECTOR_WIDTH overrides."""
  if (w := getenv("CPU_VECTOR_WIDTH", 0)) in (4, 8, 16): return w
  try:
    macros = subprocess.run([find_compiler(), *CFLAGS[:2], "-dM", "-E", "-x", "c", os.devnull], capture_output=True, text=True, timeout=60).stdout
  except (CompileError, OSError, subprocess.SubprocessError): return 4
  return 16 if "__AVX512F__" in macros else 8 if "__AVX__" in macros else 4

class CPURenderer(CStyleRenderer):
  @property
  def vector_floats(self) -> int: return native_vector_floats()

class CPUDevice:
  renderer = CPURenderer()
  graph = None  # no graph runner: a TinyJit replay calls the compiled kernels directly (engine/jit.py)
  graph = None  # no graph runner: a TinyJit replay calls the compiled kernels directly (engine/jit.py)
  def __init__(self, name: str): self.name = name
  def compile(self, progs: list[Program]) -> float:
    """Compile and bind every program not yet compiled, in a few libraries built side by side (one compiler call per
    core); returns the compile time in seconds."""
    todo = [p for p in progs if getattr(p, "fxn", None) is None]
    if not todo: return 0.0
    st = time.perf_counter()
    chunks = split_sources(list(dict.fromkeys(p.src for p in todo)), COMPILE_JOBS)
    libs = [ctypes.CDLL(str(path)) for path in compile_many([PRELUDE + "\n\n".join(c) for c in chunks])]
    lib_of = {src: lib for c, lib in zip(chunks, libs) for src in c}
    for p in todo:
      fxn = getattr(lib_of[p.src], p.name)
      fxn.argtypes, fxn.restype = [ctypes.c_void_p] * len(p.params), None
      p.fxn = fxn  # type: ignore[attr-defined]
    return time.perf_counter() - st
  def run(self, p: Program, bufs: list[Buffer]) -> None: p.fxn(*[b.ptr for b in bufs])  # type: ignore[attr-defined]
  def bind(self, p: Program, bufs: list[Buffer]) -> tuple[Callable, list[int]]:
    """The compiled function and its arguments, for a caller that runs it many times (TinyJit's replay)."""
    return p.fxn, [b.ptr for b in bufs]  # type: ignore[attr-defined]
  def synchronize(self) -> None: pass
