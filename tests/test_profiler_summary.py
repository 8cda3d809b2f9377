import os, subprocess, sys
from profiler.events import Kernel, Span
from profiler.load import load
from profiler.recorder import Recorder
from profiler.summary import format_summary, summarize
from viz.server.cli import main as cli_main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH = os.path.join(ROOT, "tests", "fixtures", "torch_cpu_trace.json")

def kernel_trace() -> list:
  ks = [Kernel(1, "matmul", "CPU", "", (1,), (1,), 2_000_000, 1_000_000, None, []),
        Kernel(2, "add", "CUDA", "", (1,), (1,), 1000, 12_000, None, [])]
  return ks + [Span("CPU", "matmul", 0, 1000, "kernel", {"kernel": 1}), Span("CPU", "matmul", 500, 1500, "kernel", {"kernel": 1}),
               Span("CUDA", "add", 0, 100, "kernel", {"kernel": 2}), Span("CPU", "compile matmul", 0, 5000, "compile", {}),
               Span("CPU/copy", "copy", 0, 300, "copy", {})]

def test_kernels_by_total_time_with_rates():
  s = summarize(kernel_trace())
  assert not s.all_spans
  mm, add = s.kernels
  assert (mm.name, mm.count, mm.total_ns, mm.mean_ns) == ("matmul", 2, 2000, 1000)
  assert mm.gflops == 2000.0 and mm.gbs == 1000.0  # 4e6 FLOP in 2000 ns; 2e6 B in 2000 ns
  assert add.gflops == 10.0 and add.gbs == 120.0
  cpu = next(d for d in s.devices if d.device == "CPU")
  assert (cpu.count, cpu.total_ns, cpu.busy_ns) == (2, 2000, 1500)  # overlapping kernels: busy counts the union
  assert cpu.other_ns == {"compile": 5000, "copy": 300}

def test_table_text():
  text = format_summary(summarize(kernel_trace()))
  lines = text.splitlines()
  assert lines[0] == "top 2 of 2 kernels by total time"
  assert lines[3].split()[:5] == ["matmul", "CPU", "2", "2.00", "us"] and lines[3].split()[-2:] == ["2000.00", "1000.00"]
  assert "compile 5.00 us, copy 300 ns" in text

def test_summary_of_a_torch_trace_counts_all_spans():
  s = summarize(load(TORCH).events)
  assert s.all_spans and s.kernels[0].total_ns >= s.kernels[-1].total_ns
  assert any(r.name == "aten::addmm" and r.count == 6 for r in s.kernels)  # 2 training steps and 1 inference, 2 layers each

def test_cli_summary_and_export(tmp_path, capsys):
  ours = str(tmp_path / "t.jsonl")
  rec = Recorder("profile", path=ours)
  for e in kernel_trace():
    if isinstance(e, Kernel): rec.kernel(e.name, e.device, e.src, e.global_size, e.local_size, e.flops, e.bytes, 0, [])
    else: rec.span(e.track, e.name, e.start_ns, e.end_ns, e.cat, e.args)
  rec.close()
  assert cli_main(["summary", ours]) == 0
  out = capsys.readouterr().out
  assert "matmul" in out and "2000.00" in out
  chrome = str(tmp_path / "t.json")
  assert cli_main(["export", ours, "--chrome", chrome]) == 0
  assert cli_main(["summary", chrome]) == 0
  assert "2000.00" in capsys.readouterr().out  # FLOPs survive the export through kernel_info
  assert cli_main(["summary", str(tmp_path / "missing")]) == 1
  assert cli_main(["export", ours]) == 2
  # a plain `tinyviz FILE` is the viewer (it serves until Ctrl+C: tests/test_server_files.py); one it cannot open is an error
  assert cli_main([str(tmp_path / "missing.json"), "--no-browser"]) == 1 and "missing.json" in capsys.readouterr().err

def test_python_dash_m_summary():
  out = subprocess.run([sys.executable, "-m", "profiler.summary", TORCH + ".gz"], cwd=ROOT, capture_output=True, text=True)
  assert out.returncode == 0 and "aten::addmm" in out.stdout and out.stderr == ""

def test_nested_spans_have_self_time():
  from profiler.events import Span
  from profiler.summary import summarize
  spans = [Span("python/t1", "step", 0, 100, "cpu_op"), Span("python/t1", "aten::mm", 10, 70, "cpu_op"),
           Span("python/t1", "aten::add", 80, 90, "cpu_op"), Span("python/t2", "step", 0, 50, "cpu_op")]
  s = summarize(spans)
  by = {r.name: r for r in s.kernels}
  assert (by["step"].total_ns, by["step"].self_ns) == (150, 80)
  assert (by["aten::mm"].total_ns, by["aten::mm"].self_ns) == (60, 60)

JAX = os.path.join(ROOT, "tests", "fixtures", "jax_trace.json")

def test_summary_json_per_name_and_device(capsys):
  import json
  assert cli_main(["summary", JAX, "--json"]) == 0
  d = json.loads(capsys.readouterr().out)
  assert d["duration_ns"] == 2_700_000 and d["all_spans"]  # 1000 µs .. 3700 µs in the fixture
  by = {(r["name"], r["device"]): r for r in d["rows"]}
  pjit = by[("PjitFunction(step)", "/host:CPU")]  # four steps of 300 µs, each holding a 200 µs ExecuteHelper
  assert (pjit["count"], pjit["total_ns"], pjit["self_ns"]) == (4, 1_200_000, 400_000)
  dot = by[("dot.3", "/device:GPU:0")]  # on two device threads, four steps each
  assert (dot["count"], dot["total_ns"], dot["self_ns"]) == (8, 720_000, 720_000)
  assert sum(r["self_ns"] for r in d["rows"]) <= sum(r["total_ns"] for r in d["rows"])
  assert cli_main(["summary", JAX, "--jsn"]) == 2

def test_pytorch_self_times_per_thread_fit_in_its_busy_time(tmp_path):
  """A trace recorded now with the installed torch profiler: per thread, self times sum to at most the time the thread
  was busy (the union of its spans), while plain durations, nested, sum to more."""
  import torch  # installed with the test extras: a missing torch fails here, it does not skip
  from torch.profiler import profile, ProfilerActivity, record_function
  from profiler.summary import self_times, _busy
  model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
  with profile(activities=[ProfilerActivity.CPU]) as prof:
    for i in range(2):
      with record_function(f"step_{i}"): model(torch.randn(4, 8)).sum().backward()
  path = str(tmp_path / "torch.json")
  prof.export_chrome_trace(path)
  spans = [e for e in load(path).events if isinstance(e, Span)]
  selfs = self_times([(s.track, s.start_ns, s.end_ns) for s in spans])
  by_thread: dict[str, list[int]] = {}
  for i, s in enumerate(spans): by_thread.setdefault(s.track, []).append(i)
  nested = False
  for track, idx in by_thread.items():
    busy = _busy([(spans[i].start_ns, spans[i].end_ns) for i in idx])
    assert sum(selfs[i] for i in idx) <= busy, track
    nested |= sum(spans[i].end_ns - spans[i].start_ns for i in idx) > busy
  assert nested, "the trace has nested spans (else the test shows nothing)"
