"""Devices and buffers. CPU and PYTHON keep buffers in host memory, CUDA in GPU memory; `CPU:1` and `CUDA:1` are second,
separate devices."""
from __future__ import annotations
import ctypes, ctypes.util, os, functools, sys, weakref, threading
from typing import Any
from tinygrad.dtype import DType
from tinygrad.helpers import getenv, GlobalCounters, perf_ns
from tinygrad import tracing

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
_libc.malloc.restype, _libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
_libc.free.argtypes = [ctypes.c_void_p]
_libc.posix_memalign.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_size_t]

class LRUAllocator:
  """Freed blocks are kept by size and handed out again, so a re-run does not pay for fresh memory (and on a GPU does
  not pay for cuMemFree, which synchronizes). Subclasses say how to get and release a block."""
  def __init__(self):
    self.cache: dict[int, list[int]] = {}; self.cached_bytes = 0; self.lock = threading.Lock()
    self.limit = getenv("ALLOC_CACHE_MB", 1024) << 20  # read once: a bad value fails here, by name, not in every free
  def _alloc(self, nbytes: int) -> int: raise NotImplementedError
  def _free(self, ptr: int) -> None: raise NotImplementedError
  def alloc(self, nbytes: int) -> int:
    with self.lock:  # a device queue's thread frees the buffers its last kernel held
      if (lst := self.cache.get(nbytes)): self.cached_bytes -= nbytes; return lst.pop()
    try: return self._alloc(nbytes)
    except MemoryError: self.free_cache(); return self._alloc(nbytes)
  def free(self, ptr: int, nbytes: int) -> None:
    with self.lock:
      if self.cached_bytes + nbytes <= self.limit: self.cache.setdefault(nbytes, []).append(ptr); self.cached_bytes += nbytes; return
    self._free(ptr)
  def free_cache(self) -> None:
    for lst in self.cache.values():
      for p in lst: self._free(p)
    self.cache.clear(); self.cached_bytes = 0

class HostAllocator(LRUAllocator):
  """64-byte aligned host memory."""
  def _alloc(self, nbytes: int) -> int:
    p = ctypes.c_void_p()
    if _libc.posix_memalign(ctypes.byref(p), 64, max(nbytes, 64)) != 0 or not p.value: raise MemoryError(f"could not allocate {nbytes} bytes")
    return p.value
  def _free(self, ptr: int) -> None: _libc.free(ptr)

host_allocator = HostAllocator()
mem_used: dict[str, int] = {}

def _report_mem(device: str) -> None:
  if (t := tracing.tracer) is not None: t.counter(device, "memory", perf_ns(), mem_used[device])

HOST_KINDS = ("CPU", "PYTHON")  # devices whose buffers are host memory; the others (CUDA) have their own allocator

class Buffer:
  """`size` elements of `dtype` on `device`, allocated on first use: host memory for CPU and PYTHON, the device's own
  memory otherwise (read and written through copyin / copyout, which have no host memoryview to offer)."""
  def __init__(self, device: str, size: int, dtype: DType):
    if size < 0: raise ValueError(f"buffer size must be >= 0, got {size}")
    self.device, self.size, self.dtype, self.nbytes = device, size, dtype, size * dtype.itemsize
    self.is_host = device.partition(":")[0] in HOST_KINDS
    self._ptr: int | None = None
  @property
  def is_allocated(self) -> bool: return self._ptr is not None
  @property
  def allocator(self) -> Any: return host_allocator if self.is_host else Device[self.device].allocator
  def ensure_allocated(self) -> Buffer:
    if self._ptr is None:
      alloc = self.allocator
      self._ptr = alloc.alloc(self.nbytes)
      self._free = weakref.finalize(self, _release, alloc, self._ptr, self.nbytes, self.device)
      mem_used[self.device] = mem_used.get(self.device, 0) + self.nbytes
      GlobalCounters.mem_used += self.nbytes
      _report_mem(self.device)
    return self
  def deallocate(self) -> None:
    """Gives the memory back now (TinyJit's free_intermediates); the next use allocates it again, contents undefined."""
    if self._ptr is not None: self._free(); self._ptr = None
  @property
  def ptr(self) -> int: return self.ensure_allocated()._ptr  # type: ignore[return-value]
  def as_memoryview(self) -> memoryview:
    if not self.is_host: raise RuntimeError(f"a {self.device} buffer is device memory and has no memoryview: use copyout() / copyin()")
    return memoryview((ctypes.c_uint8 * self.nbytes).from_address(self.ptr)).cast("B") if self.nbytes else memoryview(b"")
  def copyin(self, data: bytes | bytearray | memoryview) -> Buffer:
    mv = memoryview(data).cast("B")
    if mv.nbytes != self.nbytes: raise ValueError(f"copyin of {mv.nbytes} bytes into a buffer of {self.nbytes} bytes")
    if not self.nbytes: return self
    if self.is_host: self.as_memoryview()[:] = mv
    else:
      addr, keep = _host_address(mv, copy=mv.readonly)
      self.allocator.copyin(self.ptr, addr, self.nbytes)
      del keep
    return self
  def copyout(self) -> bytes:
    if self.is_host: return bytes(self.as_memoryview())
    out = bytearray(self.nbytes)
    if self.nbytes: self.allocator.copyout(_host_address(memoryview(out))[0], self.ptr, self.nbytes)
    return bytes(out)
  def __repr__(self): return f"<Buffer {self.device} {self.size} {self.dtype}>"

def _host_address(mv: memoryview, copy: bool = False) -> tuple[int, Any]:
  """The address of a memoryview's bytes, and the ctypes object that keeps them alive (a copy for read-only memory)."""
  arr = (ctypes.c_uint8 * mv.nbytes).from_buffer_copy(mv) if copy else (ctypes.c_uint8 * mv.nbytes).from_buffer(mv)
  return ctypes.addressof(arr), arr

def _release(alloc: LRUAllocator, ptr: int, nbytes: int, device: str) -> None:
  alloc.free(ptr, nbytes)
  mem_used[device] -= nbytes
  GlobalCounters.mem_used -= nbytes
  try: _report_mem(device)
  except Exception: pass  # at interpreter exit the tracer may be gone

class _Device:
  """`Device["CPU"]` gives the device object; `Device.DEFAULT` the one tensors go to when none is named."""
  KNOWN = ("CPU", "PYTHON", "CUDA")
  def __init__(self): self.opened: dict[str, Any] = {}  # name as asked for -> the open device
  def canonicalize(self, device: str | tuple[str, ...] | list[str] | None) -> Any:
    """'cpu:0' -> 'CPU'; a tuple or list of names (a multi-device tensor's devices) -> a tuple of canonical names."""
    if device is None: return self.DEFAULT
    if isinstance(device, (tuple, list)):
      devs = tuple(self.canonicalize(d) for d in device)
      if not devs: raise ValueError("a multi-device tensor needs at least one device, got an empty tuple")
      return devs if len(devs) > 1 else devs[0]
    if not isinstance(device, str): raise TypeError(f"device must be a string like 'CPU', got {type(device).__name__}")
    d = device.upper()
    base, _, idx = d.partition(":")
    if base in ("CLANG", "LLVM"): base = "CPU"
    if base not in self.KNOWN: raise ValueError(f"unknown device {device!r}: this engine has {', '.join(self.KNOWN)}")
    if idx and not idx.isdigit(): raise ValueError(f"bad device index in {device!r}: expected e.g. 'CPU:1'")
    return base if not idx or idx == "0" else f"{base}:{idx}"
  def _cls(self, device: str) -> Any:
    base = self.canonicalize(device).partition(":")[0]
    if base == "CPU":
      from tinygrad.runtime.ops_cpu import CPUDevice
      return CPUDevice
    if base == "PYTHON":
      from tinygrad.runtime.ops_python import PythonDevice
      return PythonDevice
    from tinygrad.runtime.ops_cuda import CUDADevice
    return CUDADevice
  def __getitem__(self, device: str) -> Any:
    if (dev := self.opened.get(device)) is not None: return dev  # the hot path: any spelling seen before
    d = self.canonicalize(device)
    dev = self.opened[device] = self.opened[d] = self.opened.get(d) or self._cls(d)(d)
    return dev
  def renderer(self, device: str) -> Any:
    """The renderer of a device's kind, without opening the device: CUDA source renders on a machine with no GPU."""
    return self._cls(device).renderer
  @functools.cached_property
  def DEFAULT(self) -> str:
    if (dev := os.environ.get("DEV")): return self.canonicalize(dev)
    for name in ("CPU", "PYTHON", "CUDA"):
      if getenv(name, 0): return name
    from tinygrad.runtime.cuda_driver import probe
    if probe()[0] > 0: return "CUDA"
    from tinygrad.runtime.ops_cpu import compiler_problem, CACHE_DIR
    if (why := compiler_problem()) is None: return "CPU"
    # the fallback runs everything about 190x slower: say so once, with why, instead of leaving a user to guess
    print(f"tinyviz: the default device is PYTHON, an interpreter ~190x slower than CPU, because the CPU device can't build "
          f"kernels: {why} (kernel cache: {CACHE_DIR}, set by TINYVIZ_CACHE). DEV=PYTHON picks it without this note.", file=sys.stderr)
    return "PYTHON"

Device = _Device()

# the storage behind each BUFFER UOp of the tensor graph; it lives as long as the UOp
buffers: "weakref.WeakKeyDictionary[Any, Buffer]" = weakref.WeakKeyDictionary()

class HostQueue:
  """One in-order queue of work on its own thread: a host device's kernels ("CPU:1") or the copies into it ("CPU:1/copy").
  Queues run side by side (a compiled kernel releases the GIL while it runs); an item waits only for the items of
  other queues it names (the writers of what it reads), so CPU:1 never waits for CPU:0 unless it reads its output.
  A batch of items goes in at once (submit_batch), numbered from 1 within the batch: the caller's thread then only
  waits, and holds no GIL the queues need."""
  def __init__(self, name: str):
    self.name, self.base, self.submitted, self.done, self.error = name, 0, 0, 0, None
    self._items: list = []
    self._cv = threading.Condition()
    threading.Thread(target=self._loop, name=f"tinygrad-{name}", daemon=True).start()
  def start_batch(self) -> None:
    """Number the next batch's items from here (call on every queue of a batch before submitting to any)."""
    self.base = self.submitted
  def submit_batch(self, items: list[tuple[Any, list[tuple[HostQueue, int]]]]) -> None:
    """Queue each fn() to run after each (queue, k) in its deps has finished the k-th item of this batch."""
    with self._cv:
      self._items.extend((fn, deps, self.submitted + i + 1) for i, (fn, deps) in enumerate(items))
      self.submitted += len(items)
      self._cv.notify_all()
  def wait(self, n: int) -> None:
    if self.done >= n: return
    with self._cv:
      while self.done < n: self._cv.wait()
  def synchronize(self) -> None:
    """Wait for everything queued so far; an error raised by an item is raised here, in the caller's thread."""
    self.wait(self.submitted)
    if (e := self.error) is not None: self.error = None; raise e
  def _loop(self) -> None:
    while True:
      with self._cv:
        while not self._items: self._cv.wait()
        batch, self._items = self._items, []
      for fn, deps, n in batch:
        for q, k in deps: q.wait(q.base + k)
        try: fn()
        except BaseException as e: self.error = self.error or e  # noqa: BLE001  (re-raised by synchronize)
        with self._cv:
          self.done = n
          self._cv.notify_all()
      del batch, fn

_queues: dict[str, HostQueue] = {}
def host_queue(name: str) -> HostQueue:
  if (q := _queues.get(name)) is None: q = _queues[name] = HostQueue(name)
  return q

def is_dtype_supported(dtype: DType, device: str | tuple[str, ...] | None = None) -> bool:
  """Can tensors of dtype live and compute on device (default: Device.DEFAULT; a tuple: on all of them)? Every device here
  (CPU, PYTHON, CUDA) has every dtype this engine defines (bool, ints up to 64 bits, float16/32/64); a vector dtype or void
  is not a tensor dtype. A device name this engine does not have is an error, not False."""
  from tinygrad.dtype import dtypes
  devs = Device.canonicalize(device)
  for d in devs if isinstance(devs, tuple) else (devs,): Device._cls(d)  # the device kind exists (CUDA needs no GPU to answer)
  # fp8: PYTHON computes in it, the CPU's C converts its bits (renderer/fp8_c.py); CUDA's renderer has no fp8 yet
  if dtype in dtypes.fp8s: return all(d.partition(":")[0] in ("PYTHON", "CPU") for d in (devs if isinstance(devs, tuple) else (devs,)))
  return isinstance(dtype, DType) and dtype.count == 1 and dtype in dtypes.all
