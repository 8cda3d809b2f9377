"""Which C compiler builds a CPU library: CC=clang works (with GCC's OpenMP runtime where clang's own is missing), and
a library that is one long kernel is built by clang beside a default GCC, by GCC again should clang refuse it."""
import ctypes, os, shutil, subprocess, sys, pathlib
import numpy as np, pytest
from tinygrad.runtime import ops_cpu
from tinygrad.renderer.cstyle import PRELUDE

ROOT = pathlib.Path(__file__).resolve().parent.parent
CLANG = shutil.which("clang")
pytestmark = pytest.mark.skipif(not ops_cpu.compiler_works(), reason="no working C compiler")
needs_clang = pytest.mark.skipif(CLANG is None or not ops_cpu.is_clang(CLANG), reason="no clang")
needs_gcc_default = pytest.mark.skipif("CC" in os.environ or ops_cpu.is_clang(ops_cpu.find_compiler()), reason="default compiler is not GCC")

@needs_clang
def test_cc_clang_builds_and_runs_kernels(tmp_path):
  code = ("import numpy as np; from tinygrad import Tensor; from tinygrad.runtime import ops_cpu\n"
          "assert ops_cpu.compiler_problem() is None, ops_cpu.compiler_problem()\n"
          "a = np.arange(96, dtype=np.float32).reshape(8, 12) / 10\n"
          "np.testing.assert_allclose((Tensor(a).exp() @ Tensor(a.T)).relu().sum(1).numpy(), (np.exp(a) @ a.T).sum(1), rtol=1e-4)\n"
          "print('ok', Tensor([1.0, 2.0]).device)")
  e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG", "DEV")}
  res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                       env={**e, "CC": "clang", "TINYVIZ_CACHE": str(tmp_path)})
  assert res.returncode == 0, res.stderr[-3000:]
  assert res.stdout.split() == ["ok", "CPU"]  # CPU, not the PYTHON fallback a failing compiler leads to

def long_kernel(body: str, n: int) -> str:
  """One kernel of n statements: longer than ops_cpu.LONG_KERNEL_CHARS."""
  src = "void long_k(float* restrict data0, const float* restrict data1) {\n" + body + "".join(f"  data0[{i}] = data1[{i}]*2.0f + {i}.0f;\n" for i in range(n)) + "}"
  assert len(src) >= ops_cpu.LONG_KERNEL_CHARS
  return src

def build_one(src: str) -> tuple[ops_cpu.Build, ctypes.CDLL]:
  libs: list = [([src], None)]
  ops_cpu.start_libraries(libs, 1)
  b = libs[0][1]
  lib = ctypes.CDLL(str(b.wait()))
  return b, lib

def run_long_k(lib: ctypes.CDLL, n: int) -> np.ndarray:
  x, out = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
  lib.long_k.argtypes, lib.long_k.restype = [ctypes.c_void_p] * 2, None
  lib.long_k(out.ctypes.data, x.ctypes.data)
  return out

@needs_clang
@needs_gcc_default
def test_a_long_kernel_is_built_by_clang(tmp_path, monkeypatch):
  monkeypatch.setattr(ops_cpu, "CACHE_DIR", tmp_path)
  b, lib = build_one(long_kernel("", 1500))
  assert ops_cpu.is_clang(b.cc) and b.out == ops_cpu._lib_path(b.cc, b.src)  # clang built it, no fallback
  np.testing.assert_array_equal(run_long_k(lib, 1500), np.arange(1500, dtype=np.float32) * 3)
  # a short one, and a long one of vector code, stay with GCC
  vec = "typedef float floatx8 __attribute__((vector_size(32)));\n" + long_kernel("", 1500)
  assert ops_cpu.compiler_for([vec]) == (ops_cpu.find_compiler(), None)
  libs: list = [(["void short_k(float* restrict data0) { data0[0] = 1.0f; }"], None)]
  ops_cpu.start_libraries(libs, 1)
  assert libs[0][1].cc == ops_cpu.find_compiler()
  libs[0][1].wait()

@needs_clang
@needs_gcc_default
def test_a_long_kernel_clang_refuses_is_built_by_gcc(tmp_path, monkeypatch):
  """A nested function is GCC's C only: clang fails on it, and GCC then builds the library."""
  monkeypatch.setattr(ops_cpu, "CACHE_DIR", tmp_path)
  b, lib = build_one(long_kernel("  float twice(float v) { return 2.0f*v; }\n  data0[0] = twice(1.0f);\n", 1500).replace("data0[0] = data1[0]*2.0f + 0.0f;", "data0[0] += data1[0]*2.0f + 0.0f;"))
  np.testing.assert_array_equal(run_long_k(lib, 1500), np.arange(1500, dtype=np.float32) * 3 + np.eye(1, 1500, dtype=np.float32)[0] * 2)
  assert ops_cpu.is_clang(b.cc) and b.out == ops_cpu._lib_path(ops_cpu.find_compiler(), b.src)  # GCC's library
  assert not list(tmp_path.glob("*.tmp"))

def test_the_prelude_needs_no_header(tmp_path, monkeypatch):
  """The kernels' prelude declares what it uses: NAN, INFINITY and the classification macros behave as <math.h>'s."""
  monkeypatch.setattr(ops_cpu, "CACHE_DIR", tmp_path)
  assert "#include" not in PRELUDE
  src = ("void cls(float* restrict data0, const float* restrict data1) {\n"
         "  for (int i = 0; i < 6; i++) { float v = data1[i];\n"
         "    data0[4*i] = isnan(v); data0[4*i+1] = isinf(v) ? (v > 0 ? 1.0f : -1.0f) : 0.0f; data0[4*i+2] = isfinite(v); data0[4*i+3] = signbit(v) != 0; }\n"
         "  data0[24] = NAN; data0[25] = INFINITY; data0[26] = exp2f(data1[5]); data0[27] = sqrtf(data1[5]); data0[28] = (bool)2 + true;\n}")
  lib = ctypes.CDLL(str(ops_cpu.compile_c(PRELUDE + src)))
  x = np.array([1.5, -0.0, np.inf, -np.inf, np.nan, 4.0], np.float32)
  out = np.zeros(29, np.float32)
  lib.cls.argtypes, lib.cls.restype = [ctypes.c_void_p] * 2, None
  lib.cls(out.ctypes.data, x.ctypes.data)
  want = [[np.isnan(v), np.sign(v) if np.isinf(v) else 0, np.isfinite(v), np.signbit(v)] for v in x]
  np.testing.assert_array_equal(out[:24].reshape(6, 4), np.array(want, np.float32))
  assert np.isnan(out[24]) and out[25] == np.inf and out[26] == 16 and out[27] == 2 and out[28] == 2

@needs_gcc_default
def test_gcc_compiles_an_object_that_ld_links_into_a_library_that_loads_alone(tmp_path):
  """GCC compiles each library to an object and ld links it (not the driver's link step): the library names libgomp, so
  its parallel loops run in a process that had not loaded it, and its math calls resolve."""
  assert ops_cpu.linker(ops_cpu.find_compiler()) is not None
  code = ("import ctypes, numpy as np; from tinygrad import Tensor; from tinygrad.runtime import ops_cpu\n"
          "maps = lambda: open('/proc/self/maps').read()\n"
          "assert 'libgomp' not in maps()\n"
          "a = np.random.default_rng(0).random((512, 512), dtype=np.float32)\n"
          "np.testing.assert_allclose((Tensor(a) @ Tensor(a)).numpy(), a @ a, rtol=1e-4)\n"
          "np.testing.assert_allclose(Tensor(a[:4]).exp2().numpy(), np.exp2(a[:4]), rtol=1e-5)\n"
          "assert 'libgomp' in maps(), 'no parallel kernel ran'\n"
          "print('ok', Tensor([1.0]).device)")
  e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG", "DEV", "CC", "OMP_NUM_THREADS")}
  res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300, env={**e, "TINYVIZ_CACHE": str(tmp_path)})
  assert res.returncode == 0, res.stderr[-3000:]
  assert res.stdout.split() == ["ok", "CPU"]
  assert not list((tmp_path / "cpu").glob("*.tmp*"))  # no object or temp library left behind

@needs_gcc_default
def test_libm_and_libc_are_linked_only_where_an_object_calls_them(tmp_path, monkeypatch):
  monkeypatch.setattr(ops_cpu, "CACHE_DIR", tmp_path)
  parts = ops_cpu.linker(ops_cpu.find_compiler())
  libm, libc = parts[3], parts[4]
  for body, calls in (("data0[0] = exp2f(data0[1]);", {"exp2f"}), ("data0[0] = 1.0f;", set())):
    b = ops_cpu.Build(ops_cpu.find_compiler(), PRELUDE + "void k(float* restrict data0) { " + body + " }")
    assert b.obj is not None and b.proc.wait() == 0
    assert ops_cpu.undefined_symbols(b.obj) == calls
    cmd = ops_cpu.link_command(parts, b.obj, b.tmp)
    assert (libm in cmd and libc in cmd) == bool(calls)
    out = np.array([0, 3], np.float32)
    lib = ctypes.CDLL(str(b.wait()))
    lib.k.argtypes, lib.k.restype = [ctypes.c_void_p], None
    lib.k(out.ctypes.data)
    assert out[0] == (8 if calls else 1)

@needs_gcc_default
def test_a_library_ld_refuses_is_linked_by_the_compilers_driver(tmp_path, monkeypatch):
  monkeypatch.setattr(ops_cpu, "CACHE_DIR", tmp_path)
  parts = ops_cpu.linker(ops_cpu.find_compiler())
  monkeypatch.setattr(ops_cpu, "linker", lambda c: (shutil.which("false"), *parts[1:]))  # an ld that fails
  lib = ctypes.CDLL(str(ops_cpu.compile_c(PRELUDE + "int twice(int x) { return 2 * x; }")))
  assert lib.twice(21) == 42
  assert not list(tmp_path.glob("*.tmp*"))

@needs_clang
def test_clang_links_through_its_driver():
  assert ops_cpu.linker(CLANG) is None
