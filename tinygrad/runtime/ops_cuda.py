"""The CUDA device: kernels rendered as CUDA C, compiled to PTX (cuda_compiler), loaded and launched through the driver
API (cuda_driver). `CUDA:n` is GPU n with its own (primary) context; everything runs in order on its default stream.

Kernels and copies are timed by the GPU, without stalling it: each gets a start and an end event, and the host reads
them when the device synchronizes (`synchronize()`, a copy to the host, every MAX_PENDING launches, at exit), then
places them on the host clock (cuda_timing) and hands each (start, end) to the callback the engine gave at launch."""
from __future__ import annotations
import atexit, ctypes, time
from typing import Any, Callable
from tinygrad.helpers import DEBUG, getenv, perf_ns
from tinygrad.codegen.linearize import Program
from tinygrad.renderer.cuda import CUDARenderer, launch_dims, prelude
from tinygrad.runtime import cuda_driver as cu
from tinygrad.runtime.cuda_compiler import compile_cuda, compiler
from tinygrad.runtime.cuda_timing import place_on_host
from tinygrad.device import Buffer, LRUAllocator, Device

MAX_PENDING = 1024  # timed launches the host lets run ahead before it synchronizes to read their events
Done = Callable[..., None]  # called as done(*args, start_ns, end_ns)

def lower_ptx_version(ptx: bytes, isa: str) -> bytes:
  return b"\n".join(b".version " + isa.encode() if ln.startswith(b".version ") else ln for ln in ptx.split(b"\n"))

class CUDAAllocator(LRUAllocator):
  def __init__(self, dev: CUDADevice): super().__init__(); self.dev = dev
  def _alloc(self, nbytes: int) -> int:
    self.dev.use()
    ptr = cu.CUdeviceptr()
    try: cu.call("cuMemAlloc_v2", ctypes.byref(ptr), max(nbytes, 1))
    except cu.CUDAError as e:
      if e.code == cu.CUDA_ERROR_OUT_OF_MEMORY: raise MemoryError(f"{self.dev.name}: out of GPU memory allocating {nbytes} bytes") from e
      raise
    return ptr.value
  def _free(self, ptr: int) -> None:
    try: self.dev.use(); cu.call("cuMemFree_v2", ptr)
    except cu.CUDAError: pass  # at interpreter exit the driver may already be shutting down
  def copyin(self, ptr: int, host_addr: int, nbytes: int) -> None: self.dev.use(); cu.call("cuMemcpyHtoD_v2", ptr, host_addr, nbytes)
  def copyout(self, host_addr: int, ptr: int, nbytes: int) -> None:
    self.dev.synchronize()
    cu.call("cuMemcpyDtoH_v2", host_addr, ptr, nbytes)

class CUDADevice:
  renderer = CUDARenderer()
  graph = None  # no CUDA graph runner yet: a TinyJit replay launches kernel by kernel (engine/jit.py graph_class)
  def __init__(self, name: str):
    n, why = cu.probe()
    if n == 0: raise RuntimeError(f"device {name} is not available: {why}")
    idx = int(name.partition(":")[2] or 0)
    if idx >= n: raise RuntimeError(f"device {name} is not available: this machine has {n} GPU{'s' if n > 1 else ''} (CUDA{'..CUDA:' + str(n - 1) if n > 1 else ''})")
    self.name, self.cu_device = name, cu.get_int("cuDeviceGet", idx)
    self.ctx = cu.CUcontext()
    cu.call("cuDevicePrimaryCtxRetain", ctypes.byref(self.ctx), self.cu_device)
    major = cu.get_int("cuDeviceGetAttribute", cu.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.cu_device)
    minor = cu.get_int("cuDeviceGetAttribute", cu.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.cu_device)
    self.arch = getenv("CUDA_ARCH", f"sm_{major}{minor}")
    self.allocator = CUDAAllocator(self)
    self.kernels: dict[str, tuple[Any, int, int]] = {}  # program name -> (function, blocks, threads per block)
    self.modules: list[Any] = []
    self.free_events: list[Any] = []
    self.pending: list[tuple[Any, Any, int, Done, tuple]] = []  # (start event, end event, host ns at launch, done, args)
    self.last_end_ns, self.clock_correction_ns = 0, 0  # the largest correction place_on_host made (how good the anchor is)
    self.anchor_ev: Any = None
    self.use()
    self._anchor()
    atexit.register(self._sync_at_exit)

  def use(self) -> None:
    """Make this GPU's context current (cheap; done before every call so a library switching devices can't misdirect us)."""
    cu.call("cuCtxSetCurrent", self.ctx)

  # ----- compile
  def compile(self, progs: list[Program]) -> float:
    """Compile every program not yet loaded on this GPU in one compiler call and load them as one module."""
    todo = list({p.name: p for p in progs if p.name not in self.kernels}.values())
    if not todo: return 0.0
    st = time.perf_counter()
    srcs = list(dict.fromkeys(p.src for p in todo))
    mod = self._load_module(compile_cuda(prelude(srcs) + "\n\n".join(srcs), self.arch))
    for p in todo:
      fn = cu.CUfunction()
      cu.call("cuModuleGetFunction", ctypes.byref(fn), mod, p.name.encode())
      self.kernels[p.name] = (fn, *launch_dims(p.global_size))
    return time.perf_counter() - st

  def _load_module(self, ptx: bytes) -> Any:
    self.use()
    mod = cu.CUmodule()
    try: cu.call("cuModuleLoadData", ctypes.byref(mod), ptx)
    except cu.CUDAError as e:
      # PTX from a compiler newer than the driver: our kernels use no new instructions, so say the version it reads
      isa = cu.ptx_isa_for(cu.get_int("cuDriverGetVersion"))
      if e.code != cu.CUDA_ERROR_UNSUPPORTED_PTX_VERSION or isa is None:
        raise cu.CUDAError(f"{e} (PTX for {self.arch} from {compiler()}; CUDA_ARCH overrides the architecture)", e.code) from e
      if DEBUG >= 1: print(f"{self.name}: the driver reads PTX {isa}, older than the compiler's; loading it as {isa}")
      cu.call("cuModuleLoadData", ctypes.byref(mod), lower_ptx_version(ptx, isa))
    self.modules.append(mod)
    return mod

  # ----- run, timed by events
  def _event(self) -> Any:
    if self.free_events: return self.free_events.pop()
    ev = cu.CUevent()
    cu.call("cuEventCreate", ctypes.byref(ev), 0)
    return ev

  def _timed(self, fn: Callable[[], None], done: Done, args: tuple) -> None:
    self.use()
    ev0, ev1 = self._event(), self._event()
    launch_ns = perf_ns()
    if not self.pending and launch_ns - self.anchor_ns > 1_000_000_000: self._anchor(); launch_ns = perf_ns()  # idle a while: a fresh anchor
    cu.call("cuEventRecord", ev0, None)
    fn()
    cu.call("cuEventRecord", ev1, None)
    self.pending.append((ev0, ev1, launch_ns, done, args))
    if len(self.pending) >= MAX_PENDING or DEBUG >= 2: self.synchronize()  # DEBUG=2 prints each kernel as it runs

  def launch(self, p: Program, bufs: list[Buffer], done: Done, args: tuple) -> None:
    """Run a compiled program; done(*args, start_ns, end_ns) is called with its GPU times when the device synchronizes."""
    fn, blocks, threads = self.kernels[p.name]
    ptrs = (ctypes.c_uint64 * len(bufs))(*[b.ptr for b in bufs])
    params = (ctypes.c_void_p * len(bufs))(*[ctypes.addressof(ptrs) + 8 * i for i in range(len(bufs))])
    self._timed(lambda: cu.call("cuLaunchKernel", fn, blocks, 1, 1, threads, 1, 1, 0, None, params, None), done, args)

  def transfer(self, dst: Buffer, src: Buffer, done: Done, args: tuple) -> None:
    """Copy src to dst where at least one is on this GPU (dst's GPU when both are), timed like a kernel."""
    n = dst.nbytes
    if n == 0: now = perf_ns(); done(*args, now, now); return
    d, s = dst.ptr, src.ptr
    if src.is_host: fn = lambda: cu.call("cuMemcpyHtoD_v2", d, s, n)
    elif dst.is_host: fn = lambda: cu.call("cuMemcpyDtoH_v2", d, s, n)
    elif src.device == dst.device: fn = lambda: cu.call("cuMemcpyDtoD_v2", d, s, n)
    else:
      sctx = Device[src.device].ctx
      fn = lambda: cu.call("cuMemcpyPeer", d, self.ctx, s, sctx, n)
    self._timed(fn, done, args)
    if dst.is_host: self.synchronize()  # the copy to the host has finished, and everything queued before it: read the events now

  # ----- synchronize and read the events
  def _anchor(self) -> None:
    """A fresh anchor event and the host time it completed at (the GPU is idle here, so it completes at once)."""
    ev = self._event()
    cu.call("cuEventRecord", ev, None)
    cu.call("cuEventSynchronize", ev)
    if self.anchor_ev is not None: self.free_events.append(self.anchor_ev)
    self.anchor_ns, self.anchor_ev = perf_ns(), ev

  def _elapsed_ms(self, a: Any, b: Any) -> float:
    ms = ctypes.c_float()
    cu.call("cuEventElapsedTime_v2", ctypes.byref(ms), a, b)
    return ms.value

  def synchronize(self) -> None:
    """Wait for the GPU, then hand every pending kernel and copy its start and end on the host clock."""
    self.use()
    cu.call("cuCtxSynchronize")
    if not self.pending: return
    observed = perf_ns()
    pending, self.pending = self.pending, []
    gpu = [(self._elapsed_ms(self.anchor_ev, ev0), self._elapsed_ms(ev0, ev1), launch_ns) for ev0, ev1, launch_ns, _, _ in pending]
    spans, worst = place_on_host(self.anchor_ns, gpu, self.last_end_ns, observed)
    self.clock_correction_ns = max(self.clock_correction_ns, worst)
    self.last_end_ns = spans[-1][1]
    for ev0, ev1, _, _, _ in pending: self.free_events += [ev0, ev1]
    self._anchor()  # elapsed times are float milliseconds: precise only near their anchor
    for (st, en), (_, _, _, done, args) in zip(spans, pending): done(*args, st, en)

  def _sync_at_exit(self) -> None:
    try: self.synchronize()
    except Exception: pass  # the driver may be gone; the spans are lost, nothing else
