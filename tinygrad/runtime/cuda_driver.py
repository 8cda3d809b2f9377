"""The CUDA driver API calls the CUDA device uses, as hand-written ctypes prototypes (no generated binding dump).
`call(name, *args)` runs one and raises CUDAError naming the call and the driver's error string when it fails.
`probe()` says, cheaply and without raising, whether a GPU is usable and why not."""
from __future__ import annotations
import ctypes, functools, os
from typing import Any

CUdevice, CUresult = ctypes.c_int, ctypes.c_int
CUcontext = CUmodule = CUfunction = CUevent = CUstream = ctypes.c_void_p
CUdeviceptr = ctypes.c_uint64
_P, _u, _sz = ctypes.POINTER, ctypes.c_uint, ctypes.c_size_t

# name -> argument types; each name may list fallbacks an older driver exports instead
PROTOTYPES: dict[str, list[Any]] = {
  "cuInit": [_u], "cuDriverGetVersion": [_P(ctypes.c_int)], "cuGetErrorString": [CUresult, _P(ctypes.c_char_p)],
  "cuDeviceGetCount": [_P(ctypes.c_int)], "cuDeviceGet": [_P(CUdevice), ctypes.c_int],
  "cuDeviceGetAttribute": [_P(ctypes.c_int), ctypes.c_int, CUdevice],
  "cuDevicePrimaryCtxRetain": [_P(CUcontext), CUdevice], "cuCtxSetCurrent": [CUcontext], "cuCtxSynchronize": [],
  "cuMemAlloc_v2": [_P(CUdeviceptr), _sz], "cuMemFree_v2": [CUdeviceptr],
  "cuMemcpyHtoD_v2": [CUdeviceptr, ctypes.c_void_p, _sz], "cuMemcpyDtoH_v2": [ctypes.c_void_p, CUdeviceptr, _sz],
  "cuMemcpyDtoD_v2": [CUdeviceptr, CUdeviceptr, _sz], "cuMemcpyPeer": [CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, _sz],
  "cuModuleLoadData": [_P(CUmodule), ctypes.c_char_p], "cuModuleGetFunction": [_P(CUfunction), CUmodule, ctypes.c_char_p],
  "cuLaunchKernel": [CUfunction, _u, _u, _u, _u, _u, _u, _u, CUstream, _P(ctypes.c_void_p), _P(ctypes.c_void_p)],
  "cuEventCreate": [_P(CUevent), _u], "cuEventRecord": [CUevent, CUstream], "cuEventSynchronize": [CUevent],
  "cuEventElapsedTime_v2": [_P(ctypes.c_float), CUevent, CUevent], "cuEventDestroy_v2": [CUevent],
}
FALLBACK = {"cuEventElapsedTime_v2": "cuEventElapsedTime"}  # drivers before 12.8 export only the first version

CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 2, 222
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 75, 76

class CUDAError(RuntimeError):
  def __init__(self, msg: str, code: int): super().__init__(msg); self.code = code

LIB_NAMES = ("libcuda.so.1", "libcuda.so")

@functools.cache
def _load() -> tuple[ctypes.CDLL | None, str]:
  """The driver library, or None and why not."""
  errs = []
  for name in ([os.environ["CUDA_LIB"]] if os.environ.get("CUDA_LIB") else LIB_NAMES):
    try: lib = ctypes.CDLL(name)
    except OSError as e: errs.append(str(e)); continue
    return lib, ""
  return None, "no NVIDIA driver: could not load libcuda (" + "; ".join(errs) + ")"

@functools.cache
def _fn(name: str) -> Any:
  lib, why = _load()
  if lib is None: raise RuntimeError(why)
  try: f = getattr(lib, name)
  except AttributeError:
    if name not in FALLBACK: raise
    f = getattr(lib, FALLBACK[name])
  f.argtypes, f.restype = PROTOTYPES[name], CUresult
  return f

def error_string(code: int) -> str:
  s = ctypes.c_char_p()
  try: ok = _fn("cuGetErrorString")(code, ctypes.byref(s)) == 0 and s.value
  except (RuntimeError, AttributeError): ok = False
  return s.value.decode() if ok and s.value else f"CUresult {code}"

def call(name: str, *args: Any) -> None:
  if (res := _fn(name)(*args)) != 0: raise CUDAError(f"{name} failed: {error_string(res)} ({res})", res)

def get_int(name: str, *args: Any) -> int:
  """A call whose first argument is an int it fills in."""
  v = ctypes.c_int()
  call(name, ctypes.byref(v), *args)
  return v.value

@functools.cache
def probe() -> tuple[int, str]:
  """(number of GPUs, why there are none); never raises, so picking the default device is safe everywhere."""
  if _load()[0] is None: return 0, _load()[1]
  try:
    call("cuInit", 0)
    n = get_int("cuDeviceGetCount")
  except (CUDAError, AttributeError, RuntimeError) as e: return 0, f"the NVIDIA driver loaded but has no usable GPU: {e}"
  return n, "" if n else "the NVIDIA driver reports no GPU"

# the PTX ISA each driver version reads (PTX from a newer compiler is lowered to this; see ops_cuda.load_module)
PTX_ISA = {12000: "8.0", 12010: "8.1", 12020: "8.2", 12030: "8.3", 12040: "8.4", 12050: "8.5", 12060: "8.5", 12080: "8.7",
           12090: "8.8", 13000: "9.0"}
def ptx_isa_for(driver_version: int) -> str | None:
  known = [v for v in PTX_ISA if v <= driver_version]
  return PTX_ISA[max(known)] if known else None
