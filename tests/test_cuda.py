"""The CUDA device. Everywhere: the renderer's source for the whole op suite compiles to PTX with the nvcc on the machine,
the GPU-to-host clock math, and clear errors without a GPU. With an NVIDIA GPU: results match numpy, a digits training
step runs, copies between host and GPUs, and GPU timestamps sit on the host clock where they belong.
(test_cuda_fake.py runs the runtime on an emulated driver; test_cuda_ops.py runs the op suite on a GPU.)"""
import importlib.util, itertools, json, os, pathlib, re, subprocess, sys
import numpy as np
import pytest
from tinygrad import Tensor, Device, GlobalCounters, nn, dtypes
from tinygrad.helpers import perf_ns, prod
from tinygrad.engine import realize as R
from tinygrad.engine.schedule import create_schedule, kernel_params
from tinygrad.renderer.cuda import THREADS, launch_dims, prelude
from tinygrad.runtime import cuda_driver as cu
from tinygrad.runtime.cuda_compiler import CUDACompileError, DEFAULT_ARCH, _nvrtc, find_nvcc, nvcc_ptx, nvrtc_ptx, ptx_arch
from tinygrad.runtime.cuda_timing import place_on_host

ROOT = pathlib.Path(__file__).resolve().parent.parent
NGPU, WHY = cu.probe()
gpu = pytest.mark.skipif(NGPU == 0, reason=f"needs an NVIDIA GPU: {WHY}")
two_gpus = pytest.mark.skipif(NGPU < 2, reason=f"needs two NVIDIA GPUs, this machine has {NGPU}")
# the op suite compiles with each CUDA compiler the machine has: NVRTC is tested wherever libnvrtc loads, with or without a GPU
COMPILERS = [pytest.param(nvcc_ptx, id="nvcc", marks=pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc (CUDA toolkit) on PATH or NVCC set")),
             pytest.param(nvrtc_ptx, id="nvrtc", marks=pytest.mark.skipif(_nvrtc() is None, reason="needs libnvrtc (a CUDA toolkit, or "
                                                                           "pip install nvidia-cuda-nvrtc-cu12; NVRTC_LIB names it)"))]

def digits():
  """examples/beautiful_digits.py as a module (its Model and make_train_step)."""
  spec = importlib.util.spec_from_file_location("beautiful_digits", ROOT / "examples" / "beautiful_digits.py")
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)  # type: ignore[union-attr]
  return mod

def run_py(code: str, **env) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env}, cwd=ROOT, timeout=300)

def cuda_sources(*tensors: Tensor) -> list[str]:
  """The CUDA source of every kernel that realizing these tensors would run (scheduled, rendered, not run)."""
  items, _ = create_schedule([t.uop for t in tensors])
  out = []
  for it in items:
    if it.kind != "kernel": continue
    ast = it.params_ast if it.params_ast is not None else kernel_params(it)[0]
    out.append(R.get_program(ast, "CUDA").src)
  return out

# ---------------------------------------------------------------- without a GPU

def test_no_driver_is_a_clear_error_and_cpu_stays_default():
  code = "from tinygrad import Device\nprint(Device.DEFAULT)\ntry: Device['CUDA']\nexcept RuntimeError as e: print('error:', e)"
  res = run_py(code, CUDA_LIB="/nonexistent/libcuda.so.1")
  assert res.returncode == 0, res.stderr
  default, err = res.stdout.splitlines()
  assert default == "CPU"
  assert err.startswith("error: device CUDA is not available: no NVIDIA driver: could not load libcuda"), err

@pytest.mark.skipif(NGPU > 0, reason="this machine has a GPU")
def test_without_a_gpu_cuda_raises_and_tensors_on_it_fail_clearly():
  with pytest.raises(RuntimeError, match="device CUDA is not available"): Device["CUDA"]
  with pytest.raises(RuntimeError, match="device CUDA:1 is not available"): (Tensor([1.0], device="CUDA:1") + 1).realize()
  assert Device.DEFAULT != "CUDA"

def test_gpu_times_on_the_host_clock():
  # the anchor event completed at host time 1_000_000 ns; three kernels launched at 1_010_000.. ran at `true` on the GPU;
  # the host saw them all finished at 1_200_000
  true = [(1_015_000, 1_050_000), (1_050_500, 1_120_000), (1_120_200, 1_190_000)]
  launches = [1_010_000, 1_011_000, 1_012_000]
  gpu = [((st - 1_000_000) / 1e6, (en - st) / 1e6, ln) for (st, en), ln in zip(true, launches)]
  def placed(anchor_ns: int) -> tuple[list[tuple[int, int]], int]:
    spans, worst = place_on_host(anchor_ns, gpu, 0, 1_200_000)
    assert all(a[0] <= a[1] <= b[0] for a, b in zip(spans, spans[1:])) and spans[-1][0] <= spans[-1][1]  # monotone on the stream
    assert all(ln <= st and en <= 1_200_000 for (st, en), ln in zip(spans, launches))  # inside the host interval that launched them
    return spans, worst
  # the host read its clock 3 us after the anchor completed (cuEventSynchronize's wake-up): all 3 us late, nothing to correct
  spans, worst = placed(1_003_000)
  assert spans == [(st + 3_000, en + 3_000) for st, en in true] and worst == 0
  # read 40 us late, the last kernel would end after the host saw it finish: it ends where the host saw it
  spans, worst = placed(1_040_000)
  assert spans[-1] == (1_160_200, 1_200_000) and worst == 30_000
  # read early, the first kernel would start before its launch: moved whole (the GPU's duration stays), and the next after it
  spans, worst = placed(990_000)
  assert spans[:2] == [(1_010_000, 1_045_000), (1_045_000, 1_114_500)] and worst == 5_000
  # a span starts no earlier than the previous span on the stream (from an earlier synchronize) ended
  assert place_on_host(1_000_000, [(0.001, 0.002, 0)], 1_005_000, 1_200_000)[0] == [(1_005_000, 1_007_000)]
  # float milliseconds far from the anchor still land within a microsecond
  spans, _ = place_on_host(0, [(float(np.float32(2000.123456)), 0.01, 0)], 0, 10**13)
  assert abs(spans[0][0] - 2_000_123_456) < 1_000

def test_launch_dims_cover_every_point():
  assert launch_dims(()) == (1, 1) and launch_dims((5, 3)) == (1, 15) and launch_dims((0,)) == (1, 1)
  for gs in [(THREADS,), (THREADS + 1,), (1000, 37), (7, 9, 11)]:
    blocks, threads = launch_dims(gs)
    assert threads <= THREADS and blocks * threads >= prod(gs) > (blocks - 1) * threads

def test_thread_index_visits_each_point_of_the_global_loops_once():
  from tinygrad.renderer.cuda import _thread_index_lines
  from tinygrad.uop.ops import UOp, Ops
  for sizes in [(7,), (3, 4), (3, 4, 5), (2, 1, 6, 3)]:
    ranges = [UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, n),), (i, "global")) for i, n in enumerate(sizes)]
    lines = _thread_index_lines(ranges)
    assert lines[ranges[0]][0].endswith(f"if (gid >= {prod(sizes)}) return;") and not any(lines[r][0] for r in ranges[1:])
    exprs = [lines[r][1].replace("/", "//") for r in ranges]  # C's division of non-negative ints is Python's //
    assert [tuple(eval(e, {"gid": g}) for e in exprs) for g in range(prod(sizes))] == list(itertools.product(*map(range, sizes)))

def test_ptx_arch_names():
  assert ptx_arch("sm_90") == ptx_arch("90") == ptx_arch("9.0") == ptx_arch("compute_90") == "compute_90"
  with pytest.raises(ValueError, match="bad CUDA architecture"): ptx_arch("hopper")
  assert cu.ptx_isa_for(12040) == "8.4" and cu.ptx_isa_for(12065) == "8.5" and cu.ptx_isa_for(13000) == "9.0" and cu.ptx_isa_for(11080) is None

def test_rendered_source_uses_threads_not_loops():
  a, b = Tensor.rand(33, 17), Tensor.rand(17, 9)
  srcs = cuda_sources(a @ b, (a.exp() + 1).relu(), a.sum(0), a.max(), a.half() * 2, (a > 0.5).where(a, a.bitcast(dtypes.int32).cast(dtypes.float32)))
  assert len(srcs) >= 6
  for s in srcs:
    assert re.match(r'extern "C" __global__ void __launch_bounds__\(\d+\) \w+\(', s), s
    assert "#pragma" not in s and "omp" not in s and "for (int gidx" not in s and "_Float16" not in s and "union" not in s
    assert ("blockIdx.x*blockDim.x+threadIdx.x" in s) == ("gidx0" in s)
  elementwise = next(s for s in srcs if "exp2f" in s)
  assert "if (gid >= 561) return;" in elementwise and "__restrict__" in elementwise  # 33*17 threads
  assert any("half" in s for s in srcs) and any("tg_bitcast<int>" in s for s in srcs)
  with pytest.raises(NotImplementedError, match="no vector types"):
    from tinygrad.codegen.linearize import Program
    from tinygrad.uop.ops import UOp, Ops
    v = UOp(Ops.DEFINE_GLOBAL, dtypes.float32.vec(4), (), (0, 4))
    Device.renderer("CUDA").render(Program("vec", [v], {}, [v], (), (), 0, 0))

def test_a_gpu_thread_keeps_a_small_register_tile():
  # a CPU core wants up to 128 accumulators in registers; a GPU thread shares its registers with thousands of others
  a, b = (Tensor(np.random.default_rng(i).random((256, 256), dtype=np.float32)) for i in (0, 1))  # host data: the schedule is the matmul alone
  src, = cuda_sources(a @ b)
  assert 2 <= len(re.findall(r"float acc\d+ = ", src)) <= 16, src

# the op suite: every kernel the numpy-checked suites run, collected by running them on CPU in a child process
SUITE = ["tests/test_ops.py", "tests/test_dtype.py", "tests/test_tensor_api.py"]  # run on every device: their CPU cases
SUITE_ALL = ["tests/test_tensor_api_more.py"]  # on the default device only: all of it
COLLECT = r"""
import json, sys, pytest
from tinygrad.engine import realize as R
out, suite, suite_all = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
# their pass/fail is those files' business: only the kernels they build matter here
pytest.main(["-q", "-p", "no:cacheprovider", "-k", "CPU", *suite])
pytest.main(["-q", "-p", "no:cacheprovider", *suite_all])
json.dump([R.get_program(ast, "CUDA").src for kind, ast in list(R._programs) if kind == "CPU"], open(out, "w"))
"""

def extra_sources() -> list[str]:
  """Kernels the suites above don't reach: conv, pooling, cumsum, gather, random, float16 math, a digits training step."""
  from tinygrad.nn.state import get_parameters
  Model = digits().Model
  x, w = Tensor.rand(2, 3, 9, 9), Tensor.rand(4, 3, 3, 3)
  h, i = Tensor.randn(16).half(), Tensor.randint(12, high=9)
  outs = [x.conv2d(w, padding=1), x.max_pool2d(), x.avg_pool2d(), x.softmax(-1), x.log_softmax(1), x.cumsum(2),
          x.reshape(-1)[i], Tensor.arange(12).reshape(3, 4).gather(1, i.reshape(3, 4) % 4), (h.exp() + h.log2() * h.sin()).sqrt(),
          h.reciprocal().max(), (h ** h).sum(), h.cast(dtypes.int64) * 3_000_000_000, x.cast(dtypes.uint8).cast(dtypes.bool),
          Tensor.arange(10).cast(dtypes.float64).exp2(), x.bitcast(dtypes.uint32) >> 3, x.std(1), x.argmax(1)]
  model = Model(8)
  opt = nn.optim.Adam(get_parameters(model), lr=0.001)
  with Tensor.train():
    opt.zero_grad()
    loss = model(Tensor.rand(16, 1, 8, 8)).sparse_categorical_crossentropy(Tensor.randint(16, high=10)).backward()
    step = [loss, *opt.schedule_step()]
  return cuda_sources(*outs) + cuda_sources(*step)

@pytest.fixture(scope="module")
def suite_sources(tmp_path_factory) -> list[str]:
  out = tmp_path_factory.mktemp("suite") / "suite.json"
  res = subprocess.run([sys.executable, "-c", COLLECT, str(out), ",".join(SUITE), ",".join(SUITE_ALL)], capture_output=True, text=True, cwd=ROOT, timeout=600)
  assert out.exists(), res.stdout[-3000:] + res.stderr[-3000:]
  # this process names its kernels independently of the child: prefix them so the two sets can share a translation unit
  extra = [re.sub(r"(__launch_bounds__\(\d+\) )(\w+)\(", r"\1x_\2(", s) for s in extra_sources()]
  return list(dict.fromkeys(json.loads(out.read_text()) + extra))

@pytest.mark.parametrize("to_ptx", COMPILERS)
def test_op_suite_compiles_to_ptx(to_ptx, suite_sources, tmp_path):
  srcs = suite_sources
  assert len(srcs) > 300
  assert all("__global__" in s and "#pragma" not in s for s in srcs)
  src = prelude(srcs) + "\n\n".join(srcs)
  (tmp_path / "suite.cu").write_text(src)
  try: ptx = to_ptx(src, DEFAULT_ARCH)  # one compiler call for all of them
  except CUDACompileError as e: pytest.fail(f"the op suite's CUDA source ({tmp_path / 'suite.cu'}) does not compile:\n{str(e)[:6000]}")
  names = re.findall(r"__global__ void __launch_bounds__\(\d+\) (\w+)\(", src)
  assert sorted(re.findall(rb"\.entry (\w+)\(", ptx)) == sorted(n.encode() for n in names)

@pytest.mark.parametrize("to_ptx", COMPILERS)
def test_compile_error_shows_the_compiler_log(to_ptx):
  with pytest.raises(CUDACompileError, match=r"failed[\s\S]*undefined_name[\s\S]*--- source ---"):
    to_ptx('extern "C" __global__ void broken(float* x) { x[0] = undefined_name; }', DEFAULT_ARCH)

# ---------------------------------------------------------------- with a GPU

@gpu
def test_gpu_device_opens():
  d = Device["CUDA"]
  assert re.fullmatch(r"sm_\d+", d.arch) or os.environ.get("CUDA_ARCH")
  assert Device.DEFAULT == "CUDA" or os.environ.get("DEV") or any(os.environ.get(k) for k in ("CPU", "PYTHON"))

@gpu
def test_copies_between_host_and_gpu():
  x = np.random.default_rng(0).standard_normal((257, 33)).astype(np.float32)
  t = Tensor(x).to("CUDA")
  assert t.device == "CUDA"
  np.testing.assert_array_equal(t.numpy(), x)
  np.testing.assert_array_equal(t.to("CPU").numpy(), x)
  np.testing.assert_array_equal((t.to("CPU:1") * 2).to("CUDA").numpy(), x * 2)
  assert Tensor.empty(0, device="CUDA").numpy().shape == (0,)

@gpu
def test_results_match_numpy_and_cpu():
  x = np.random.default_rng(1).standard_normal((300, 200)).astype(np.float32)
  outs = []
  for dev in ("CPU", "CUDA"):
    t = Tensor(x, device=dev)
    outs.append(((t.exp() * 2 - t).relu().sum(1) / 3 + (t @ t.T).max(0)).numpy())
  np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-4)

@gpu
def test_digits_training_step_on_cuda():
  from tinygrad.nn.state import get_parameters
  bd = digits()
  Model, make_train_step = bd.Model, bd.make_train_step
  rng = np.random.default_rng(0)
  X, Y = rng.standard_normal((64, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, 64).astype(np.int32)
  Tensor.manual_seed(0)
  model = Model(8)
  for p in get_parameters(model): p.to_("CUDA").realize()
  step = make_train_step(model, nn.optim.Adam(get_parameters(model), lr=0.01))
  xs, ys = Tensor(X, device="CUDA"), Tensor(Y, device="CUDA")
  losses = [step(xs, ys).item() for _ in range(6)]  # runs, captures, then replays on the GPU
  assert all(np.isfinite(losses)) and losses[-1] < losses[0], losses

@gpu
def test_gpu_spans_are_monotone_and_inside_the_host_interval():
  from profiler.events import Span, from_json
  from profiler.recorder import Recorder
  from tinygrad import tracing
  a = Tensor.rand(512, 512, device="CUDA").realize()
  Device["CUDA"].synchronize()
  got: list[dict] = []
  rec = Recorder("profile", sinks=[got.extend])
  tracing.tracer, GlobalCounters.time_sum_s = rec, 0.0
  try:
    st = perf_ns()
    for _ in range(5):
      a = (a @ a).relu().realize()
      a = (a / a.max() + 1).realize()  # a reduction and an elementwise kernel: several kernels per step
    Device["CUDA"].synchronize()
    en = perf_ns()
  finally: tracing.tracer = None; rec.close()
  spans = sorted((e for e in map(from_json, got) if isinstance(e, Span) and e.track == "CUDA" and e.cat == "kernel"), key=lambda s: s.start_ns)
  assert len(spans) >= 10
  for s, nxt in zip(spans, spans[1:]): assert s.start_ns <= s.end_ns <= nxt.start_ns
  assert st <= spans[0].start_ns and spans[-1].end_ns <= en
  assert GlobalCounters.time_sum_s == pytest.approx(sum(s.end_ns - s.start_ns for s in spans) * 1e-9, rel=1e-6)
  assert Device["CUDA"].clock_correction_ns < 200_000, "the anchor is far off: corrections should be microseconds"

@two_gpus
def test_second_gpu_and_peer_copies():
  x = np.arange(1000, dtype=np.float32)
  t = Tensor(x, device="CUDA:1")
  np.testing.assert_array_equal((t * 2).to("CUDA").numpy(), x * 2)
  np.testing.assert_array_equal((t.to("CUDA") + t.to("CUDA")).to("CUDA:1").numpy(), x * 2)
  assert Device["CUDA:1"].ctx.value != Device["CUDA"].ctx.value
