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
