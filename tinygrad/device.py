"""Devices and buffers. CPU and PYTHON both keep buffers in host memory; `CPU:1` is a second, separate device."""
from __future__ import annotations
import ctypes, ctypes.util, os, functools, weakref
from typing import Any
from tinygrad.dtype import DType
from tinygrad.helpers import getenv, GlobalCounters, perf_ns
from tinygrad import tracing

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
_libc.malloc.restype, _libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
_libc.free.argtypes = [ctypes.c_void_p]
_libc.posix_memalign.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_size_t]

class HostAllocator:
  """64-byte aligned host memory with a small cache of freed blocks, so a re-run does not pay for fresh pages."""
  def __init__(self): self.cache: dict[int, list[int]] = {}; self.cached_bytes = 0
  def alloc(self, nbytes: int) -> int:
    if (lst := self.cache.get(nbytes)): self.cached_bytes -= nbytes; return lst.pop()
    p = ctypes.c_void_p()
    if _libc.posix_memalign(ctypes.byref(p), 64, max(nbytes, 64)) != 0 or not p.value:
      self.free_cache()
      if _libc.posix_memalign(ctypes.byref(p), 64, max(nbytes, 64)) != 0 or not p.value: raise MemoryError(f"could not allocate {nbytes} bytes")
    return p.value
  def free(self, ptr: int, nbytes: int) -> None:
    if self.cached_bytes + nbytes <= getenv("ALLOC_CACHE_MB", 1024) << 20: self.cache.setdefault(nbytes, []).append(ptr); self.cached_bytes += nbytes
    else: _libc.free(ptr)
  def free_cache(self) -> None:
    for lst in self.cache.values():
      for p in lst: _libc.free(p)
    self.cache.clear(); self.cached_bytes = 0

host_allocator = HostAllocator()
mem_used: dict[str, int] = {}

def _report_mem(device: str) -> None:
  if (t := tracing.tracer) is not None: t.counter(device, "memory", perf_ns(), mem_used[device])

class Buffer:
  """`size` elements of `dtype` on `device`, allocated on first use."""
  def __init__(self, device: str, size: int, dtype: DType):
    if size < 0: raise ValueError(f"buffer size must be >= 0, got {size}")
    self.device, self.size, self.dtype, self.nbytes = device, size, dtype, size * dtype.itemsize
    self._ptr: int | None = None
  @property
  def is_allocated(self) -> bool: return self._ptr is not None
  def ensure_allocated(self) -> Buffer:
    if self._ptr is None:
      self._ptr = host_allocator.alloc(self.nbytes)
      weakref.finalize(self, _release, self._ptr, self.nbytes, self.device)
      mem_used[self.device] = mem_used.get(self.device, 0) + self.nbytes
      GlobalCounters.mem_used += self.nbytes
      _report_mem(self.device)
    return self
  @property
  def ptr(self) -> int: return self.ensure_allocated()._ptr  # type: ignore[return-value]
  def as_memoryview(self) -> memoryview:
    return memoryview((ctypes.c_uint8 * self.nbytes).from_address(self.ptr)).cast("B") if self.nbytes else memoryview(b"")
  def copyin(self, data: bytes | bytearray | memoryview) -> Buffer:
    mv = memoryview(data).cast("B")
    if mv.nbytes != self.nbytes: raise ValueError(f"copyin of {mv.nbytes} bytes into a buffer of {self.nbytes} bytes")
    if self.nbytes: self.as_memoryview()[:] = mv
    return self
  def copyout(self) -> bytes: return bytes(self.as_memoryview())
  def __repr__(self): return f"<Buffer {self.device} {self.size} {self.dtype}>"

def _release(ptr: int, nbytes: int, device: str) -> None:
  host_allocator.free(ptr, nbytes)
  mem_used[device] -= nbytes
  GlobalCounters.mem_used -= nbytes
  try: _report_mem(device)
  except Exception: pass  # at interpreter exit the tracer may be gone

class _Device:
  """`Device["CPU"]` gives the device object; `Device.DEFAULT` the one tensors go to when none is named."""
  KNOWN = ("CPU", "PYTHON", "CUDA")
  def canonicalize(self, device: str | None) -> str:
    if device is None: return self.DEFAULT
    if not isinstance(device, str): raise TypeError(f"device must be a string like 'CPU', got {type(device).__name__}")
    d = device.upper()
    base, _, idx = d.partition(":")
    if base in ("CLANG", "LLVM"): base = "CPU"
    if base not in self.KNOWN: raise ValueError(f"unknown device {device!r}: this engine has {', '.join(self.KNOWN)}")
    if idx and not idx.isdigit(): raise ValueError(f"bad device index in {device!r}: expected e.g. 'CPU:1'")
    return base if not idx or idx == "0" else f"{base}:{idx}"
  @functools.cache
  def __getitem__(self, device: str) -> Any:
    d = self.canonicalize(device)
    base = d.partition(":")[0]
    if base == "CPU":
      from tinygrad.runtime.ops_cpu import CPUDevice
      return CPUDevice(d)
    if base == "PYTHON":
      from tinygrad.runtime.ops_python import PythonDevice
      return PythonDevice(d)
    raise RuntimeError(f"device {d} is not available on this machine (no NVIDIA driver found)")
  @functools.cached_property
  def DEFAULT(self) -> str:
    if (dev := os.environ.get("DEV")): return self.canonicalize(dev)
    for name in ("CPU", "PYTHON"):
      if getenv(name, 0): return name
    from tinygrad.runtime.ops_cpu import compiler_works
    return "CPU" if compiler_works() else "PYTHON"

Device = _Device()

# the storage behind each BUFFER UOp of the tensor graph; it lives as long as the UOp
buffers: "weakref.WeakKeyDictionary[Any, Buffer]" = weakref.WeakKeyDictionary()
