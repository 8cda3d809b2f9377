"""The CPU device: C source compiled by the system C compiler into a shared library (cached on disk by source hash),
loaded with ctypes. The new kernels of a schedule are built by a few compiler calls running side by side."""
from __future__ import annotations
import atexit, ctypes, functools, hashlib, os, pathlib, re, shutil, struct, subprocess, tempfile, time
from typing import Any, Callable
from tinygrad.codegen.linearize import Program
from tinygrad.renderer.cstyle import CStyleRenderer, PRELUDE
from tinygrad.device import Buffer, host_allocator
from tinygrad.helpers import cache_dir, getenv, read_small, write_atomic

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

@functools.cache
def is_clang(cc: str) -> bool:
  if os.path.basename(cc).startswith("clang"): return True  # asking clang costs 25 ms of CPU; cc (GCC here) 1 ms
  try: return "clang" in subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60).stdout
  except (OSError, subprocess.SubprocessError): return False

@functools.cache
def compiler_flags(cc: str) -> tuple[str, ...]:
  """CFLAGS as this compiler takes them. Clang: without GCC's combiner param, with GCC's default contraction of a*b+c
  into one FMA (-ffp-contract=fast; clang's own default fuses only within one expression), and with GCC's OpenMP
  runtime where its own (libomp) is not installed (Debian's clang links -lomp for -fopenmp: every kernel failed)."""
  if not is_clang(cc): return tuple(CFLAGS)
  try: own_omp = os.path.isabs(subprocess.run([cc, "-print-file-name=libomp.so"], capture_output=True, text=True, timeout=60).stdout.strip())
  except (OSError, subprocess.SubprocessError): own_omp = True
  flags = [f for f in CFLAGS if f not in ("--param", "max-combine-insns=2")] + ["-ffp-contract=fast"]
  return tuple(f if own_omp or f != "-fopenmp" else "-fopenmp=libgomp" for f in flags)

# A library that is one scalar kernel (no vector types) this long is built by clang where the default compiler is GCC,
# clang is installed and CC names no compiler: GCC's RTL combiner grows with the square of a basic block's length, and
# such a kernel is one long block of unrolled scalar copies. The small GPT's loss gradient r_32_16_16n1 (56 KB, 128
# copies): GCC 3.2 s of CPU (the first run's longest compile), clang 0.3 s, and clang's code ran it in 3.4 us against
# GCC's 7.8 (the same output). It is the only such kernel of the digits CNN, MLP and small GPT steps. Not clang for
# every kernel: of their 248 kernels clang's code was slower for 48 (up to 4x; r_128_784_128, 18 KB of vector code, 1.6x).
LONG_KERNEL_CHARS = 40000

@functools.cache
def long_kernel_compiler() -> str:
  cc = find_compiler()
  if os.environ.get("CC") or is_clang(cc) or (clang := shutil.which("clang")) is None: return cc
  return clang

def compiler_for(srcs: list[str]) -> tuple[str, str | None]:
  """The compiler for a library of these kernels, and the one to build it with should that one fail (None: none). A
  kernel of EARLY_CHARS or more has a library to itself (CPUDevice.compile_soon)."""
  cc = find_compiler()
  if len(srcs) == 1 and len(srcs[0]) >= LONG_KERNEL_CHARS and "vector_size" not in srcs[0] and (long := long_kernel_compiler()) != cc:
    return long, cc
  return cc, None

# compiler processes for one schedule's new kernels: CPU_COMPILE_JOBS, else one per core this process may use
COMPILE_JOBS = max(0, getenv("CPU_COMPILE_JOBS", 0)) or len(os.sched_getaffinity(0))
MIN_KERNELS_PER_LIB = 4
MIN_SPLIT_CHARS = 6000  # a compiler start (~20 ms of CPU) is worth it for this much source when a core would wait
# while a schedule's codegen goes on (CPUDevice.compile_soon), a free compiler takes the kernels waiting, up to this much
# source (a kernel that long has a library to itself), once at least MIN_LIB_CHARS of it wait: a compiler start costs
# about 30 ms of CPU, as much as a 2-3 KB kernel; a kernel of 1-10 KB takes 20-250 ms
EARLY_CHARS = 24000
MIN_LIB_CHARS = 3000

class CompileError(RuntimeError): pass

def find_compiler() -> str:
  cc = os.environ.get("CC") or next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
  if cc is None or shutil.which(cc) is None:
    raise CompileError(f"no C compiler found{f' (CC={cc!r} is not on PATH)' if cc else ''}: install gcc or clang, set CC, or use DEV=PYTHON")
  return cc

def _lib_path(cc: str, src: str) -> pathlib.Path:
  # CFLAGS, not compiler_flags(cc): those follow from cc and what is installed, and a cached run asks clang nothing.
  # The CPU too: -march=native code from a cache shared between machines (a home folder on NFS) may not run on another
  return CACHE_DIR / f"{hashlib.sha256((cc + ' '.join(CFLAGS) + chr(0) + _cpu_model() + chr(0) + src).encode()).hexdigest()[:32]}.so"

# Which library holds a kernel: CACHE_DIR/kernels/<hash of compiler, flags, CPU, prelude and the kernel's source> is a file
# naming it. Which kernels share a library depends on how fast the compilers kept up with the codegen, so a later
# process, whose kernels come in other groups, finds each kernel's library through this index.
def _index_path(src: str) -> pathlib.Path:
  h = hashlib.sha256(_index_prefix(os.environ.get("CC"), tuple(CFLAGS)))
  h.update(src.encode())
  return CACHE_DIR / "kernels" / h.hexdigest()[:32]

@functools.cache
def _index_prefix(cc_env: str | None, flags: tuple[str, ...]) -> bytes:
  # find_compiler() once per CC: it searches PATH (shutil.which), and this is asked for every new kernel
  return f"{find_compiler()} {' '.join(flags)}\0{_cpu_model()}\0{PRELUDE}\0".encode()

def find_library(src: str) -> pathlib.Path | None:
  """The library on disk an earlier build put this kernel in, or None."""
  if (raw := read_small(_index_path(src))) is None: return None
  name = raw.decode(errors="replace")
  lib = CACHE_DIR / name
  return lib if name.endswith(".so") and os.sep not in name and lib.exists() else None

def remember_library(srcs: list[str], lib: pathlib.Path) -> None:
  """Index each kernel of a library just built (atomically: a parallel process reads a whole name or none)."""
  folder = CACHE_DIR / "kernels"
  folder.mkdir(parents=True, exist_ok=True)
  for src in srcs: write_atomic(_index_path(src), lib.name.encode())

@functools.cache
def _sweep_stale_tmp(age_s: float = 600) -> None:
  """Once per process: temp files a killed compile left in the cache (a live one, of a parallel process, is young)."""
  now = time.time()
  for p in CACHE_DIR.glob("*.so.tmp*"):  # a library, or its object (Build.obj)
    try:
      if now - p.stat().st_mtime > age_s: p.unlink()
    except OSError: pass

# GCC's driver links a library through collect2 and ld with its start files and default libraries (libm, libgomp,
# libpthread, libc, libgcc, libgcc_s): 9-11 ms of CPU a library, most of it ld reading libc's and libm's symbol tables.
# Where the compiler is GCC, a library's source is compiled to an object (-c: the same object byte for byte as the
# driver's) and ld links it directly: against libgcc's archive, libgomp, and libm and libc only where the object calls
# something other than OpenMP's runtime (--as-needed: each named in the library only where used, as the driver does).
# 2.5 ms, 7 ms with libm and libc. No start files: they run constructors, and a kernel library has none.
@functools.cache
def linker(cc: str) -> tuple[str, ...] | None:
  """ld and the libraries GCC's driver links a library against (libgcc's archive, libgomp, libm, libc), asked of the
  compiler once; None where its driver links (clang, or a part not found)."""
  if is_clang(cc): return None
  ask = lambda a: subprocess.run([cc, a], capture_output=True, text=True, timeout=60).stdout.strip()
  try:
    ld = ask("-print-prog-name=ld")
    parts = (ld if os.path.isabs(ld) else shutil.which(ld) or "", *map(ask, ("-print-libgcc-file-name", "-print-file-name=libgomp.so.1",
                                                                           "-print-file-name=libm.so.6", "-print-file-name=libc.so.6")))
  except (OSError, subprocess.SubprocessError): return None
  return parts if all(os.path.isabs(p) and os.path.exists(p) for p in parts) else None

def link_command(parts: tuple[str, ...], obj: str, out: str) -> list[str]:
  """ld's command line for a library of this object (parts: linker())."""
  ld, libgcc, gomp, libm, libc = parts
  calls = undefined_symbols(obj)
  libs = [gomp] + ([libm, libc] if calls is None or any(not n.startswith(("GOMP_", "omp_")) for n in calls) else [])
  return [ld, "-shared", "--eh-frame-hdr", "--hash-style=gnu", "-o", out, obj, libgcc, "--as-needed", *libs]

def undefined_symbols(path: str) -> set[str] | None:
  """The symbols an ELF64 object file uses but does not define; None where it is no such file."""
  try:
    data = pathlib.Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] not in (1, 2): return None
    e = "<" if data[5] == 1 else ">"
    (shoff,), (shentsize, shnum) = struct.unpack_from(e + "Q", data, 0x28), struct.unpack_from(e + "HH", data, 0x3a)
    secs = [struct.unpack_from(e + "IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    out = set()
    for _, kind, _, _, off, size, link, _, _, entsize in secs:
      if kind != 2: continue  # SHT_SYMTAB; its names are in section `link`
      names = secs[link][4]
      for o in range(off + entsize, off + size, entsize):  # entry 0 is the null symbol
        name, _, _, shndx = struct.unpack_from(e + "IBBH", data, o)
        if shndx == 0 and name: out.add(data[names + name:data.index(b"\0", names + name)].decode())
    return out
  except (OSError, struct.error, ValueError, IndexError): return None

class Build:
  """One compiler process building one library from C source, started now, or nothing when the library is cached on
  disk (under the hash of compiler, flags and source). With GCC the source is compiled to an object and ld links it
  (linker()); otherwise the compiler's driver does both. wait() returns the library's path."""
  def __init__(self, cc: str, src: str):
    self.cc, self.src, self.out = cc, src, _lib_path(cc, src)
    self.fallback: str | None = None  # the compiler that builds it should cc fail (start_libraries' clang: GCC)
    self.proc: subprocess.Popen | None = None
    self.tmp: str | None = None
    self.obj: str | None = None  # the object file, where ld links apart from the compiler
    self.linking = False  # self.proc is the link
    self.err: Any = None
    self.built = False  # compiled by this process (not found on disk)
    if self.out.exists(): return
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    _sweep_stale_tmp()
    with tempfile.NamedTemporaryFile(dir=CACHE_DIR, suffix=".so.tmp", delete=False) as tmp: self.tmp = tmp.name
    if linker(cc) is not None: self.obj = self.tmp + ".o"
    # errors to a file, not a pipe: a compiler with a full pipe would wait for a reader that waits for other compilers
    self.err = tempfile.TemporaryFile()
    try:
      with tempfile.TemporaryFile() as f:  # the source through a file: a pipe's writer would wait for each reader in turn
        f.write(src.encode()); f.seek(0)
        out = ["-c", "-o", self.obj] if self.obj else ["-o", self.tmp, "-lm"]
        self.proc = subprocess.Popen([cc, *compiler_flags(cc), "-x", "c", "-", *out], stdin=f, stdout=subprocess.DEVNULL, stderr=self.err)
    except BaseException: self.close(); raise
    _running.add(self)
  def done(self) -> bool:
    """Whether the build has ended; a compile to an object that ended well starts its link here."""
    if self.proc is None: return True
    if self.proc.poll() is None: return False
    if self.obj is None or self.linking or self.proc.returncode != 0: return True
    self._link(link_command(linker(self.cc), self.obj, self.tmp))  # type: ignore[arg-type]
    return False
  def _link(self, cmd: list[str]) -> None:
    self.linking = True
    self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err)
  def wait(self) -> pathlib.Path:
    if self.proc is None: return self.out
    try:
      if self.proc.wait() == 0 and not self.done(): self.proc.wait()  # done() starts the link of an object
      if self.proc.returncode != 0 and self.linking and self.proc.args[0] != self.cc:
        # ld refused the object (a linker other than GNU ld's options): the compiler's driver links it, as it would have
        self._link([self.cc, *compiler_flags(self.cc), self.obj, "-o", self.tmp, "-lm"])  # type: ignore[list-item]
        self.proc.wait()
      if self.proc.returncode != 0:
        if self.fallback is not None:  # clang on a long kernel: GCC builds it as it builds the others
          self.close(); self.proc = None
          self.out, self.built = Build(self.fallback, self.src).wait(), True
          return self.out
        self.err.seek(0)
        raise CompileError(compile_error_message(self.cc, self.err.read().decode(errors="replace"), self.src))
      os.replace(self.tmp, self.out)  # atomic: a parallel process never loads half a library
      self.built = True
    finally: self.close()
    self.proc = None
    return self.out
  def close(self) -> None:
    """Stops the compiler if it still runs and removes its temp files (a failed or abandoned build)."""
    if self.proc is not None and self.proc.poll() is None: self.proc.kill(); self.proc.wait()
    for f in (self.tmp, self.obj):
      if f is not None and os.path.exists(f): os.unlink(f)
    if self.err is not None: self.err.close()
    _running.discard(self)

_running: set[Build] = set()
atexit.register(lambda: [b.close() for b in list(_running)])  # a script that ends (or fails) mid-compile leaves no temp files

def compile_error_message(cc: str, err: str, src: str) -> str:
  """The compiler's error, naming the kernels its messages point into (a library holds several) and showing their
  source (the whole library's when no message names a line)."""
  lines = src.splitlines()
  starts = [(i + 1, m.group(1)) for i, l in enumerate(lines) if (m := re.match(r"(?:static\s+)?void\s+(\w+)\(", l))]
  bad = dict.fromkeys(next((n for st, n in reversed(starts) if st <= int(ln)), None) for ln in re.findall(r"<stdin>:(\d+):\d*:?\s*(?:fatal )?error", err))
  names = [n for n in bad if n is not None]
  if not names: return f"{cc} failed to compile a kernel:\n{err}\n--- source ---\n{src}"
  own = [l for st, n in starts if n in names for l in _function_lines(lines, st)]
  return f"{cc} failed to compile kernel{'s' if len(names) > 1 else ''} {', '.join(names)}:\n{err}\n--- source ---\n" + "\n".join(own)

def _function_lines(lines: list[str], start: int) -> list[str]:
  """The lines of the function that opens on line start (1-based): up to the next line that is only a closing brace."""
  out = []
  for l in lines[start - 1:]:
    out.append(l)
    if l == "}": break
  return out

def compile_many(srcs: list[str]) -> list[pathlib.Path]:
  """Compile each C source to a shared library, the compilers running side by side; libraries are cached on disk
  under the hash of source and flags."""
  cc = find_compiler()
  builds: dict[str, Build] = {}
  try:
    for src in srcs:
      if src not in builds: builds[src] = Build(cc, src)
    return [builds[src].wait() for src in srcs]
  finally:
    for b in builds.values(): b.close()

def compile_c(src: str) -> pathlib.Path:
  """Compile C source to a shared library (cached on disk)."""
  return compile_many([src])[0]

def compile_cost(src: str) -> float:
  """GCC's time for one kernel, in arbitrary units: it grows faster than the source (a kernel twice as long takes about
  2.8x as long; len ** 1.5 fit the CPU time of 47 libraries of the digits CNN and small GPT within 24% on average)."""
  return len(src) ** 1.5

def split_sources(srcs: list[str], parts: int) -> list[list[str]]:
  """Consecutive runs of kernels of about equal compile cost, one per compiler process (at most `parts`; at least
  MIN_KERNELS_PER_LIB each, as starting a compiler costs about as much as compiling a few small kernels, or fewer
  where each part still holds MIN_SPLIT_CHARS of source: the digits' 7 last test kernels, 23 KB, were one library
  that took 0.22 s on one core while the other waited)."""
  parts = max(1, min(parts, len(srcs), max(len(srcs) // MIN_KERNELS_PER_LIB, sum(map(len, srcs)) // MIN_SPLIT_CHARS)))
  costs = [compile_cost(s) for s in srcs]
  total, out, size = sum(costs), [[]], 0.0
  for s, c in zip(srcs, costs):
    if out[-1] and size >= total * len(out) / parts: out.append([])
    out[-1].append(s); size += c
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
  try: cc = find_compiler()
  except CompileError: return 4
  # the compiler's answer is kept on disk (22-25 ms of a compiler start saved in every process, cached runs too), under
  # what it depends on: the compiler (path, size, mtime), the flags and this CPU (-march=native follows it)
  try: st = os.stat(shutil.which(cc) or cc)
  except OSError: st = None
  key = hashlib.sha256(f"{cc}\0{st and (st.st_size, st.st_mtime_ns)}\0{' '.join(CFLAGS[:2])}\0{_cpu_model()}".encode()).hexdigest()[:32]
  known = CACHE_DIR / "vector_floats" / key
  try:
    if (got := int(read_small(known) or b"0")) in (4, 8, 16): return got
  except ValueError: pass
  try: macros = subprocess.run([cc, *CFLAGS[:2], "-dM", "-E", "-x", "c", os.devnull], capture_output=True, text=True, timeout=60).stdout
  except (OSError, subprocess.SubprocessError): return 4
  w = 16 if "__AVX512F__" in macros else 8 if "__AVX__" in macros else 4
  try:
    known.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(known, str(w).encode())
  except OSError: pass  # a read-only cache: asked again next time
  return w

@functools.cache
def _cpu_model() -> str:
  """This CPU's vendor, model and feature flags (Linux's /proc/cpuinfo, first core), or the platform's name: what
  -march=native builds for."""
  try:
    with open("/proc/cpuinfo", "rb") as f: head = f.read(16384).split(b"\n\n")[0]
    return hashlib.sha256(b"\n".join(l for l in head.splitlines() if l.split(b":")[0].strip() in (b"vendor_id", b"model name", b"flags", b"Features", b"CPU part"))).hexdigest()
  except OSError:
    import platform
    return platform.machine() + platform.processor()

def start_libraries(libs: list[tuple[list[str], Build | None]], jobs: int) -> None:
  """Start the libraries of libs not started yet (None), the costliest first (the one that ends last bounds the
  schedule's compile), while fewer than jobs of them are building."""
  waiting = sorted((i for i, (_, b) in enumerate(libs) if b is None), key=lambda i: -sum(map(compile_cost, libs[i][0])))
  running = sum(b is not None and not b.done() for _, b in libs)
  for i in waiting[:max(0, jobs - running)]: libs[i] = (libs[i][0], start_library(libs[i][0]))

def start_library(srcs: list[str]) -> Build:
  """The build of one library of these kernels (after the prelude), by the compiler compiler_for picks."""
  cc, fallback = compiler_for(srcs)
  b = Build(cc, PRELUDE + "\n\n".join(srcs))
  b.fallback = fallback
  return b

class CPURenderer(CStyleRenderer):
  fp8 = True  # fp8 as its bits, converted in C (renderer/fp8_c.py)
  @property
  def vector_floats(self) -> int: return native_vector_floats()

class CPUDevice:
  renderer = CPURenderer()
  allocator = host_allocator  # CPU buffers are host memory (tinygrad's Device[d].allocator)
  graph = None  # no graph runner: a TinyJit replay calls the compiled kernels directly (engine/jit.py)
  def __init__(self, name: str):
    self.name = name
    self._waiting: list[str] = []  # new kernels' sources, in order, not in a library yet
    self._libs: list[tuple[list[str], Build | None]] = []  # this schedule's libraries (None: not started yet)
    self._found: dict[str, pathlib.Path] = {}  # kernels an earlier build put in a library on disk (find_library)
    self._known: set[str] = set()  # every source above
  def compile_soon(self, p: Program) -> None:
    """A new program of the schedule being prepared: a compiler takes it while the schedule's other kernels are still
    generated (Python on one core, the compilers on the others). Whenever fewer compilers run than the cores left to
    them, the kernels waiting (at least MIN_LIB_CHARS of source, at most EARLY_CHARS) go into a library whose compiler
    starts at once. compile() waits for them."""
    if getattr(p, "fxn", None) is not None: return
    self._add(p.src)
    # one core is the codegen's; all of them once the compilers fall behind (a library's worth of source waits)
    self._start(COMPILE_JOBS if sum(map(len, self._waiting)) >= EARLY_CHARS else max(1, COMPILE_JOBS - 1))
  def _add(self, src: str) -> None:
    if src in self._known: return
    self._known.add(src)
    if (lib := find_library(src)) is not None: self._found[src] = lib
    else: self._waiting.append(src)
  def _start(self, jobs: int, final: bool = False) -> None:
    """Start libraries of the waiting kernels while fewer than jobs compilers run (final: all of them now, the short
    kernels split over one compiler per job by estimated cost)."""
    running = sum(b is not None and not b.done() for _, b in self._libs)
    if final:
      long, short = [s for s in self._waiting if len(s) >= EARLY_CHARS], [s for s in self._waiting if len(s) < EARLY_CHARS]
      self._libs += [([s], None) for s in long] + [(c, None) for c in (split_sources(short, COMPILE_JOBS) if short else [])]
      self._waiting = []
      start_libraries(self._libs, len(self._libs))
      return
    while running < jobs and (batch := self._next_batch()):
      self._libs.append((batch, start_library(batch)))
      running += 1
  def _next_batch(self) -> list[str] | None:
    """The waiting kernels a compiler takes next, in order: a long one alone, else the short ones up to EARLY_CHARS of
    source; None while fewer than MIN_LIB_CHARS wait."""
    if not self._waiting: return None
    if len(self._waiting[0]) >= EARLY_CHARS: return [self._waiting.pop(0)]
    n, size = 0, 0
    while n < len(self._waiting) and len(self._waiting[n]) < EARLY_CHARS and size + len(self._waiting[n]) <= EARLY_CHARS:
      size += len(self._waiting[n]); n += 1
    if size < MIN_LIB_CHARS and n == len(self._waiting): return None
    batch, self._waiting = self._waiting[:n], self._waiting[n:]
    return batch
  def compile(self, progs: list[Program]) -> float:
    """Compile and bind every program not yet compiled: the libraries compile_soon started, and the rest in a few
    libraries built side by side (one compiler call per core); returns the compile time in seconds."""
    todo = [p for p in progs if getattr(p, "fxn", None) is None]
    if not todo and not self._libs and not self._waiting: return 0.0
    st = time.perf_counter()
    for p in todo: self._add(p.src)
    libs, found = self._libs, self._found
    try:
      self._start(COMPILE_JOBS, final=True)
      lib_of: dict[str, Any] = {}
      loaded: dict[pathlib.Path, Any] = {}
      for srcs, b in libs:
        path = b.wait()  # type: ignore[union-attr]
        if b.built: remember_library(srcs, path)  # type: ignore[union-attr]
        lib = loaded[path] = loaded.get(path) or ctypes.CDLL(str(path))
        lib_of.update((src, lib) for src in srcs)
      for src, path in found.items():
        lib_of[src] = loaded[path] = loaded.get(path) or ctypes.CDLL(str(path))
      # an index entry naming a library without the kernel (a cache changed by hand): the kernel is built again
      if stale := [p.src for p in todo if p.src in found and not hasattr(lib_of[p.src], p.name)]:
        lib = ctypes.CDLL(str(compile_c(PRELUDE + "\n\n".join(dict.fromkeys(stale)))))
        lib_of.update((src, lib) for src in stale)
    finally:
      for _, b in libs:
        if b is not None: b.close()
      self._waiting, self._libs, self._found, self._known = [], [], {}, set()
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
