"""Devices, the C compiler and its cache, DEBUG output, and the on-ramp example."""
import os, pathlib, subprocess, sys
import numpy as np, pytest
from tinygrad import Tensor, Device
from tinygrad.runtime import ops_cpu

ROOT = pathlib.Path(__file__).resolve().parent.parent

def run_py(code: str, **env) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env}, cwd=ROOT, timeout=300)

def test_default_device_is_cpu_with_a_compiler():
  from tinygrad.runtime.cuda_driver import probe
  assert Device.DEFAULT == ("CUDA" if probe()[0] > 0 else "CPU")  # a GPU, when the machine has one, comes first

def test_ramp_example_runs_as_written():
  for dev in ("CPU", "PYTHON"):
    res = subprocess.run([sys.executable, str(ROOT / "examples" / "ramp.py")], capture_output=True, text=True, env={**os.environ, "DEV": dev}, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"Device.DEFAULT: {dev}" in res.stdout and "sum of (t+3+4)*2 = 76" in res.stdout

def test_dev_env_picks_the_device():
  assert run_py("from tinygrad import Device; print(Device.DEFAULT)", DEV="PYTHON").stdout.strip() == "PYTHON"
  assert run_py("from tinygrad import Device; print(Device.DEFAULT)", PYTHON="1").stdout.strip() == "PYTHON"
  res = run_py("from tinygrad import Tensor; Tensor([1]).realize()", DEV="TPU")
  assert res.returncode != 0 and "unknown device 'TPU'" in res.stderr

def test_missing_compiler_is_a_clear_error(tmp_path):
  code = "from tinygrad import Tensor; (Tensor([1.0, 2.0], device='CPU') * 3).realize()"
  res = run_py(code, CC="/nonexistent/cc", TINYVIZ_CACHE=str(tmp_path))
  assert res.returncode != 0 and "no C compiler found" in res.stderr and "DEV=PYTHON" in res.stderr
  # with no working compiler the default falls back to the interpreter
  res = run_py("from tinygrad import Device, Tensor; print(Device.DEFAULT, (Tensor([1, 2]) * 3).tolist())", CC="/nonexistent/cc", TINYVIZ_CACHE=str(tmp_path))
  assert res.stdout.split() == ["PYTHON", "[3,", "6]"], res.stderr

def test_debug2_prints_one_line_per_kernel_and_debug4_the_source():
  res = run_py("from tinygrad import Tensor; a = Tensor.rand(8, 8); (a * 2 + 1).sum(1).realize()", DEBUG="2", DEV="CPU")
  lines = [l for l in res.stdout.splitlines() if l.startswith("***")]
  kernel_lines = [l for l in lines if "r_8_8" in l]
  assert len(kernel_lines) == 1 and "GFLOPS" in kernel_lines[0] and "GB/s" in kernel_lines[0] and "CPU" in kernel_lines[0]
  res = run_py("from tinygrad import Tensor; (Tensor([1.0, 2.0]) + 1).realize()", DEBUG="4", DEV="CPU")
  assert "void E_2(float* restrict data0, const float* restrict data1)" in res.stdout

def built_libraries(monkeypatch) -> list[str]:
  """The source of every library a compiler is started for from now on."""
  calls: list[str] = []
  real = ops_cpu.Build.__init__
  def init(self, cc, src):
    real(self, cc, src)
    if self.proc is not None: calls.append(src)
  monkeypatch.setattr(ops_cpu.Build, "__init__", init)
  return calls

def test_new_kernels_of_a_schedule_compile_in_one_call(tmp_path, monkeypatch):
  monkeypatch.setattr(ops_cpu, "CACHE_DIR", tmp_path)
  a = Tensor.rand(5, 7, device="CPU").realize()
  calls = built_libraries(monkeypatch)
  libs_before = set(tmp_path.glob("*.so"))
  b = (a * 3.5 - 1.25)
  c = (b.max(1, keepdim=True) + b).sum(0)  # two kernels (the max, then the sum), both new and short: one library
  c.realize()
  assert [src.count("void r_") for src in calls] == [2]
  assert len(set(tmp_path.glob("*.so")) - libs_before) == 1
  # a second process with the same kernels hits the disk cache: no new library
  code = "from tinygrad import Tensor; a = Tensor.rand(5, 7, device='CPU'); b = (a * 3.5 - 1.25); (b.max(1, keepdim=True) + b).sum(0).realize()"
  assert run_py(code, TINYVIZ_CACHE=str(tmp_path.parent / "x")).returncode == 0

def test_many_new_kernels_compile_in_libraries_built_side_by_side(tmp_path, monkeypatch):
  """A schedule with many new kernels is split among compiler processes (one per job), and every kernel still runs."""
  monkeypatch.setattr(ops_cpu, "CACHE_DIR", tmp_path)
  monkeypatch.setattr(ops_cpu, "COMPILE_JOBS", 3)
  xs = [Tensor.rand(3, 5 + i, device="CPU").realize() for i in range(14)]
  calls = built_libraries(monkeypatch)
  outs = [(x * (i + 1)).sum(1) for i, x in enumerate(xs)]  # 14 different reduction kernels in one schedule
  Tensor.realize_all(outs)
  assert len(calls) >= 2, [src.count("void r_") for src in calls]  # several compilers, each kernel built once
  assert sum(src.count("void r_") for src in calls) == 14
  for i, (x, o) in enumerate(zip(xs, outs)): np.testing.assert_allclose(o.numpy(), x.numpy().sum(1) * (i + 1), rtol=1e-5)

def test_split_sources_balances_by_length_and_keeps_order():
  srcs = [f"k{i}" + "x" * (1000 if i == 0 else 10) for i in range(9)]
  assert ops_cpu.split_sources(srcs, 2) == [srcs[:1], srcs[1:]]  # the long kernel alone, the short ones together
  assert ops_cpu.split_sources(srcs, 8) == [srcs[:1], srcs[1:]]  # at most len // MIN_KERNELS_PER_LIB parts
  assert ops_cpu.split_sources(srcs[:3], 4) == [srcs[:3]]
  even = ["x" * 10] * 12
  assert [len(c) for c in ops_cpu.split_sources(even, 3)] == [4, 4, 4]
  # few kernels but long ones: split while each part keeps MIN_SPLIT_CHARS of source, never more parts than kernels
  big = ["y" * ops_cpu.MIN_SPLIT_CHARS] * 3
  assert [len(c) for c in ops_cpu.split_sources(big, 2)] == [2, 1] and ops_cpu.split_sources(big, 8) == [[b] for b in big]
  assert ops_cpu.split_sources(["z" * (ops_cpu.MIN_SPLIT_CHARS // 2)] * 3, 2) == [["z" * (ops_cpu.MIN_SPLIT_CHARS // 2)] * 3]

def test_compile_error_names_the_compiler_and_shows_source(tmp_path, monkeypatch):
  monkeypatch.setattr(ops_cpu, "CACHE_DIR", tmp_path)
  with pytest.raises(ops_cpu.CompileError, match="failed to compile"):
    ops_cpu.compile_c("void broken( { }")

def test_cpu_and_python_devices_agree():
  x = np.random.default_rng(0).standard_normal((6, 10)).astype(np.float32)
  outs = []
  for dev in ("CPU", "PYTHON"):
    t = Tensor(x, device=dev)
    outs.append(((t.exp() * 2 - t).relu().sum(1) / 3 + (t @ t.T).max(0)).numpy())
  np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)

def test_separate_cpu_devices_and_copies():
  a = Tensor([1.0, 2.0, 3.0], device="CPU:1")
  assert a.device == "CPU:1"
  b = a.to("CPU") * 2
  assert b.device == "CPU" and b.tolist() == [2.0, 4.0, 6.0]
  with pytest.raises(ValueError, match="different devices"): (a + Tensor([1.0, 2.0, 3.0], device="CPU")).realize()
