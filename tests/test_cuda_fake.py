"""The CUDA device's runtime (ops_cuda: contexts, memory, copies, launches, event timing) on an emulated driver, so it is
tested on every machine. FakeDriver stands in for libcuda at `cuda_driver.call`: device memory is host memory, a
kernel runs as the C the CPU device compiles from the same program, and an event reads the host clock when recorded.
What it cannot check (PTX, the real driver, GPU clocks) is tested in test_cuda.py on a machine with a GPU."""
import ctypes, gc, struct
import numpy as np
import pytest
from tinygrad import Tensor, Device, GlobalCounters, TinyJit, dtypes
from tinygrad.helpers import Context, perf_ns, prod
from tinygrad.engine import realize as R
from tinygrad.renderer.cstyle import CStyleRenderer, PRELUDE
from tinygrad.runtime import cuda_driver as cu, ops_cuda
from tinygrad.runtime.ops_cpu import compile_c
from profiler.events import Span, Kernel, from_json
from profiler.recorder import Recorder
from tinygrad import tracing

class FakeDriver:
  def __init__(self, ngpus: int):
    self.ngpus, self.handles, self.calls = ngpus, 0, []
    self.mem: dict[int, ctypes.Array] = {}
    self.events: dict[int, int] = {}
    self.functions: dict[int, tuple] = {}
    self.fail: dict[str, int] = {}  # call name -> CUresult to return once
  def _new(self) -> int: self.handles += 1; return self.handles
  def call(self, name: str, *a) -> None:
    self.calls.append(name)
    if (code := self.fail.pop(name, 0)): raise cu.CUDAError(f"{name} failed: fake error ({code})", code)
    getattr(self, name)(*a)
  def probe(self) -> tuple[int, str]: return self.ngpus, "" if self.ngpus else "the fake driver has no GPU"
  # ----- the calls ops_cuda makes
  def cuDeviceGet(self, out, idx): out._obj.value = idx
  def cuDevicePrimaryCtxRetain(self, out, dev): out._obj.value = 1000 + dev
  def cuDeviceGetAttribute(self, out, attr, dev): out._obj.value = {cu.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: 9}.get(attr, 0)
  def cuDriverGetVersion(self, out): out._obj.value = 12040
  def cuCtxSetCurrent(self, ctx): pass
  def cuCtxSynchronize(self): pass
  def cuMemAlloc_v2(self, out, n):
    buf = (ctypes.c_uint8 * n)()
    self.mem[ctypes.addressof(buf)] = buf
    out._obj.value = ctypes.addressof(buf)
  def cuMemFree_v2(self, ptr): del self.mem[ptr]
  def cuMemcpyHtoD_v2(self, d, s, n): ctypes.memmove(d, s, n)
  def cuMemcpyDtoH_v2(self, d, s, n): ctypes.memmove(d, s, n)
  def cuMemcpyDtoD_v2(self, d, s, n): ctypes.memmove(d, s, n)
  def cuMemcpyPeer(self, d, dctx, s, sctx, n): assert dctx.value != sctx.value; ctypes.memmove(d, s, n)
  def cuModuleLoadData(self, out, ptx): out._obj.value = self._new()
  def cuModuleGetFunction(self, out, mod, name):
    p = next(p for (kind, _), p in R._programs.items() if kind == "CUDA" and p.name == name.decode())
    lib = ctypes.CDLL(str(compile_c(PRELUDE + CStyleRenderer().render(p))))
    f = getattr(lib, p.name)
    f.argtypes, f.restype = [ctypes.c_void_p] * len(p.params), None
    out._obj.value = h = self._new()
    self.functions[h] = (f, p)
  def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shm, stream, params, extra):
    f, p = self.functions[fn.value]
    assert gx * bx >= prod(p.global_size) and gy == gz == by == bz == 1 and bx <= 256, "the launch must cover every point of the global loops"
    f(*[ctypes.cast(params[i], ctypes.POINTER(ctypes.c_uint64)).contents.value for i in range(len(p.params))])
  def cuEventCreate(self, out, flags): out._obj.value = self._new()
  def cuEventRecord(self, ev, stream): self.events[ev.value] = perf_ns()
  def cuEventSynchronize(self, ev): pass
  def cuEventElapsedTime_v2(self, out, a, b):  # float milliseconds, as the driver reports them
    out._obj.value = struct.unpack("f", struct.pack("f", (self.events[b.value] - self.events[a.value]) / 1e6))[0]

@pytest.fixture
def fake(monkeypatch):
  assert Device.DEFAULT  # decided by the real machine before the fake's GPUs appear (it is cached)
  drv = FakeDriver(2)
  monkeypatch.setattr(cu, "call", drv.call)
  monkeypatch.setattr(cu, "probe", drv.probe)
  monkeypatch.setattr(ops_cuda, "compile_cuda", lambda src, arch: src.encode())
  # a real GPU's devices, if any, step aside while the fake's are in use
  real_devices = dict(Device.opened)
  Device.opened.clear()
  yield drv
  gc.collect()  # CUDA buffers go back to the fake while it is installed
  Device.opened.clear(); Device.opened.update(real_devices)

def record(fn) -> list:
  got: list[dict] = []
  rec = Recorder("profile", sinks=[got.extend])
  tracing.tracer = rec
  try: fn()
  finally:
    tracing.tracer = None
    rec.close()
  return [from_json(d) for d in got]

def test_ops_on_the_fake_gpu_match_numpy(fake):
  a, b = np.random.default_rng(0).standard_normal((2, 33, 17)).astype(np.float32)
  ta, tb = Tensor(a, device="CUDA"), Tensor(b, device="CUDA")
  np.testing.assert_allclose((ta @ tb.T).numpy(), a @ b.T, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(ta.softmax(1).numpy(), np.exp(a) / np.exp(a).sum(1, keepdims=True), rtol=1e-5)
  np.testing.assert_allclose((ta > tb).where(ta, tb * 2).max(0).numpy(), np.where(a > b, a, b * 2).max(0))
  assert (ta.cast(dtypes.int32) + 3).tolist() == (a.astype(np.int32) + 3).tolist()
  assert ta.device == "CUDA" and any(n == "cuLaunchKernel" for n in fake.calls)

def test_copies_between_host_and_gpus(fake):
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  def run():
    t = Tensor(x).to("CUDA")
    u = (t * 2).to("CUDA:1")
    v = (u + 1).to("CPU")
    np.testing.assert_array_equal(v.numpy(), x * 2 + 1)
    np.testing.assert_array_equal(Tensor(x, device="CUDA:1").to("CUDA").numpy(), x)
  evs = record(run)
  copies = {(s.args["from"], s.args["to"]) for s in evs if isinstance(s, Span) and s.cat == "copy"}
  assert {("CUDA", "CUDA:1"), ("CUDA:1", "CPU"), ("CUDA:1", "CUDA")} <= copies
  assert all(s.track == s.args["to"] for s in evs if isinstance(s, Span) and s.cat == "copy")  # on the destination's track
  assert "cuMemcpyPeer" in fake.calls and "cuMemcpyDtoH_v2" in fake.calls and "cuMemcpyHtoD_v2" in fake.calls

def test_kernels_are_timed_by_events_without_a_sync_each(fake):
  x = np.random.default_rng(1).uniform(0, 0.1, (64, 64)).astype(np.float32)
  a = Tensor(x, device="CUDA").realize()
  Device["CUDA"].synchronize()
  GlobalCounters.reset()
  host: list[int] = []
  def run():
    host.append(perf_ns())
    b = ((a @ a).relu() + 1).sum(0)
    c = (b * 0.01).exp().realize()
    fake.calls.clear()
    d = (c + b).realize()
    assert "cuCtxSynchronize" not in fake.calls  # launches queue up; nothing waits for the GPU
    assert len(Device["CUDA"].pending) >= 3
    ref = (x @ x + 1).sum(0)
    np.testing.assert_allclose(d.numpy(), np.exp(ref * 0.01) + ref, rtol=1e-5)  # the readback synchronizes
    assert not Device["CUDA"].pending
    host.append(perf_ns())
  evs = record(run)
  spans = sorted((s for s in evs if isinstance(s, Span) and s.track == "CUDA" and s.cat == "kernel"), key=lambda s: s.start_ns)
  assert len(spans) >= 3
  for s, nxt in zip(spans, spans[1:]): assert s.start_ns <= s.end_ns <= nxt.start_ns  # monotone on the stream
  assert all(host[0] <= s.start_ns and s.end_ns <= host[1] for s in spans)  # inside the host interval that launched them
  assert GlobalCounters.time_sum_s == pytest.approx(sum(s.end_ns - s.start_ns for s in spans) * 1e-9, rel=1e-6, abs=1e-9)
  assert Device["CUDA"].clock_correction_ns < 5_000_000
  kernels = [e for e in evs if isinstance(e, Kernel) and e.device == "CUDA"]
  assert kernels and all("__global__" in k.src and k.local_size for k in kernels)

def test_pending_launches_are_bounded(fake, monkeypatch):
  monkeypatch.setattr(ops_cuda, "MAX_PENDING", 2)
  a = Tensor([1.0, 2.0], device="CUDA").realize()
  fake.calls.clear()
  for _ in range(3): a = (a * 2).realize()
  assert "cuCtxSynchronize" in fake.calls and len(Device["CUDA"].pending) < 2
  assert a.tolist() == [8.0, 16.0]

def test_jit_replays_on_the_gpu(fake):
  g = TinyJit(lambda x: (x * 2 + 1).sum(0))
  for i in range(4):
    x = np.full((3, 2), float(i), np.float32)
    assert g(Tensor(x, device="CUDA")).tolist() == list((x * 2 + 1).sum(0))

def test_jit_replays_random_numbers_on_the_gpu(fake):
  g = TinyJit(lambda x: x + Tensor.rand(4, device="CUDA"))
  outs = [g(Tensor.zeros(4, device="CUDA")).tolist() for _ in range(4)]
  assert len({tuple(o) for o in outs}) == 4

def test_device_memory_has_no_memoryview(fake):
  t = Tensor([1, 2, 3], device="CUDA").realize()
  buf = R.buffer_for(t.uop.base)
  with pytest.raises(RuntimeError, match="device memory"): buf.as_memoryview()
  assert struct.unpack("3i", buf.copyout()) == (1, 2, 3)
  buf.copyin(struct.pack("3i", 7, 8, 9))
  assert t.tolist() == [7, 8, 9]

def test_errors_name_the_call(fake):
  with pytest.raises(RuntimeError, match=r"this machine has 2 GPUs \(CUDA\.\.CUDA:1\)"): Device["CUDA:2"]
  fake.fail["cuMemAlloc_v2"] = cu.CUDA_ERROR_OUT_OF_MEMORY  # out of memory once: the cache is freed and it retries
  assert Tensor([5.0], device="CUDA").tolist() == [5.0]
  fake.fail["cuLaunchKernel"] = 700
  with pytest.raises(cu.CUDAError, match="cuLaunchKernel failed"): (Tensor([5.0], device="CUDA") * 3).realize()

def test_ptx_newer_than_the_driver_is_lowered(fake, monkeypatch):
  seen = []
  real = fake.cuModuleLoadData
  def load(out, ptx): seen.append(ptx); real(out, ptx)
  monkeypatch.setattr(fake, "cuModuleLoadData", load)
  fake.fail["cuModuleLoadData"] = cu.CUDA_ERROR_UNSUPPORTED_PTX_VERSION
  monkeypatch.setattr(ops_cuda, "compile_cuda", lambda src, arch: b"//\n.version 9.0\n.target sm_90\n" + src.encode())
  assert (Tensor([1.0], device="CUDA") + 1).tolist() == [2.0]
  assert len(seen) == 1 and b".version 8.4\n" in seen[0]

def test_debug2_prints_gpu_times(fake, capsys):
  with Context(DEBUG=2): (Tensor([1.0, 2.0], device="CUDA") * 2).realize()
  out = capsys.readouterr().out
  assert any(line.startswith("*** CUDA") and "E_2" in line for line in out.splitlines()), out

def test_an_idle_device_takes_a_fresh_anchor(fake):
  a = Tensor([1.0], device="CUDA").realize()
  d = Device["CUDA"]
  d.synchronize()
  d.anchor_ns -= 2_000_000_000  # as if idle for two seconds: float milliseconds from that anchor lose precision
  old = d.anchor_ev.value
  assert (a + 1).tolist() == [2.0]
  assert d.anchor_ev.value != old and perf_ns() - d.anchor_ns < 1_000_000_000
