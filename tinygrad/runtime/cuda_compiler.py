"""CUDA C to PTX: NVRTC (libnvrtc through ctypes) when it loads, else `nvcc --ptx`. PTX is cached on disk under the hash
of compiler, architecture and source, like the CPU device's libraries. CUDA_COMPILER=nvrtc|nvcc picks one, NVCC names
the nvcc binary, NVRTC_LIB the library."""
from __future__ import annotations
import ctypes, ctypes.util, functools, glob, hashlib, os, pathlib, shutil, subprocess, sys, tempfile
from typing import Any
from tinygrad.helpers import cache_dir

CACHE_DIR = cache_dir("cuda")
DEFAULT_ARCH = "compute_80"  # for compiling with no GPU to ask (tests): Ampere, which every nvcc from CUDA 11 to 13 targets

class CUDACompileError(RuntimeError): pass

def ptx_arch(arch: str) -> str:
  """'sm_90', '90', '9.0' or 'compute_90' -> 'compute_90': PTX is for a virtual architecture; the driver finishes it."""
  digits = arch.rsplit("_", 1)[-1].replace(".", "")
  if not digits[:2].isdigit(): raise ValueError(f"bad CUDA architecture {arch!r}: expected e.g. sm_90 or compute_90")
  return f"compute_{digits}"

def _cuda_homes() -> list[str]:
  return [h for h in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda") if h]

@functools.cache
def _nvrtc() -> ctypes.CDLL | None:
  names = [os.environ["NVRTC_LIB"]] if os.environ.get("NVRTC_LIB") else [
    *filter(None, [ctypes.util.find_library("nvrtc")]), "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
    *[p for h in _cuda_homes() for p in sorted(glob.glob(f"{h}/lib64/libnvrtc.so*"))],
    # the nvidia-cuda-nvrtc wheels that PyTorch installs
    *[p for d in sys.path for p in sorted(glob.glob(f"{d}/nvidia/cuda_nvrtc/lib/libnvrtc.so*") + glob.glob(f"{d}/nvidia/cu1*/lib/libnvrtc.so*"))]]
  for name in names:
    try: lib = ctypes.CDLL(name)
    except OSError: continue
    P, vp, sz = ctypes.POINTER, ctypes.c_void_p, ctypes.c_size_t
    for fn, args in {"nvrtcCreateProgram": [P(vp), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, vp, vp],
                     "nvrtcCompileProgram": [vp, ctypes.c_int, P(ctypes.c_char_p)], "nvrtcGetPTXSize": [vp, P(sz)],
                     "nvrtcGetPTX": [vp, ctypes.c_char_p], "nvrtcGetProgramLogSize": [vp, P(sz)], "nvrtcGetProgramLog": [vp, ctypes.c_char_p],
                     "nvrtcDestroyProgram": [P(vp)]}.items():
      getattr(lib, fn).argtypes, getattr(lib, fn).restype = args, ctypes.c_int
    lib.nvrtcGetErrorString.argtypes, lib.nvrtcGetErrorString.restype = [ctypes.c_int], ctypes.c_char_p
    return lib
  return None

def find_nvcc() -> str | None:
  for c in (os.environ.get("NVCC"), shutil.which("nvcc"), *[f"{h}/bin/nvcc" for h in _cuda_homes()]):
    if c and os.path.isfile(c) and os.access(c, os.X_OK): return c
  return None

def compiler() -> str:
  """'nvrtc' or 'nvcc': what compiles CUDA here."""
  want = os.environ.get("CUDA_COMPILER", "")
  if want not in ("", "nvrtc", "nvcc"): raise CUDACompileError(f"CUDA_COMPILER={want!r}: expected nvrtc or nvcc")
  why = []
  if want != "nvcc":
    if _nvrtc() is not None: return "nvrtc"
    why.append("libnvrtc did not load (set NVRTC_LIB or CUDA_HOME)")
  if want != "nvrtc":
    if find_nvcc() is not None: return "nvcc"
    why.append("no nvcc on PATH (set NVCC or CUDA_HOME)")
  raise CUDACompileError("no CUDA compiler: " + "; ".join(why))

def _nvrtc_check(lib: Any, res: int, what: str, prog: Any = None, src: str = "") -> None:
  if res == 0: return
  log = ""
  if prog is not None:
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetProgramLog(prog, buf)
    log = buf.value.decode(errors="replace")
  raise CUDACompileError(f"NVRTC {what} failed: {lib.nvrtcGetErrorString(res).decode()}\n{log}" + (f"--- source ---\n{src}" if src else ""))

def nvrtc_ptx(src: str, arch: str) -> bytes:
  lib = _nvrtc()
  assert lib is not None
  prog = ctypes.c_void_p()
  _nvrtc_check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"kernels.cu", 0, None, None), "nvrtcCreateProgram")
  try:
    opts = [f"--gpu-architecture={arch}".encode()]
    _nvrtc_check(lib, lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts)), "nvrtcCompileProgram", prog, src)
    n = ctypes.c_size_t()
    _nvrtc_check(lib, lib.nvrtcGetPTXSize(prog, ctypes.byref(n)), "nvrtcGetPTXSize", prog)
    buf = ctypes.create_string_buffer(n.value)
    _nvrtc_check(lib, lib.nvrtcGetPTX(prog, buf), "nvrtcGetPTX", prog)
    return buf.value
  finally: lib.nvrtcDestroyProgram(ctypes.byref(prog))

def nvcc_ptx(src: str, arch: str) -> bytes:
  nvcc = find_nvcc()
  assert nvcc is not None
  with tempfile.TemporaryDirectory() as d:
    cu, ptx = os.path.join(d, "kernels.cu"), os.path.join(d, "kernels.ptx")
    pathlib.Path(cu).write_text(src)
    res = subprocess.run([nvcc, "--ptx", f"-arch={arch}", "-o", ptx, cu], capture_output=True, text=True)
    if res.returncode != 0: raise CUDACompileError(f"{nvcc} --ptx failed to compile a kernel:\n{res.stderr}{res.stdout}\n--- source ---\n{src}")
    return pathlib.Path(ptx).read_bytes()

def compile_cuda(src: str, arch: str = DEFAULT_ARCH) -> bytes:
  """PTX for a CUDA C translation unit (cached on disk)."""
  which, arch = compiler(), ptx_arch(arch)
  key = hashlib.sha256(f"{which} {arch}\0{src}".encode()).hexdigest()[:32]
  out = CACHE_DIR / f"{key}.ptx"
  if out.exists(): return out.read_bytes()
  ptx = nvrtc_ptx(src, arch) if which == "nvrtc" else nvcc_ptx(src, arch)
  CACHE_DIR.mkdir(parents=True, exist_ok=True)
  with tempfile.NamedTemporaryFile(dir=CACHE_DIR, suffix=".ptx.tmp", delete=False) as tmp: tmp.write(ptx)
  os.replace(tmp.name, out)  # atomic: a parallel process never reads half a file
  return ptx
