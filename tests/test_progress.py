"""What long work prints: DEBUG=2's line per schedule (as tinygrad's), kernel names coloured by axis kind, and the
progress bar over a schedule's new kernels (drawn only on a terminal, and only once it has taken a while)."""
import os, subprocess, sys, time
from tinygrad.terminal import tqdm, ansistrip
from tinygrad.engine.realize import colored_name

def run_py(code: str, **env) -> subprocess.CompletedProcess:
  e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG")}
  return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**e, **env}, timeout=300)

def test_debug2_prints_one_line_per_schedule_with_cache_state_and_the_users_line(tmp_path):
  code = "from tinygrad import Tensor\na = Tensor.ones(4, 4).contiguous().realize()\nfor _ in range(2): (a * 3).sum(1).realize()\n"
  res = run_py(code, DEBUG="2", DEV="CPU", TINYVIZ_CACHE=str(tmp_path))
  assert res.returncode == 0, res.stderr
  lines = [l for l in res.stdout.splitlines() if l.startswith("scheduled")]
  assert len(lines) == 3, res.stdout
  # the loop's first realize makes its schedule, the second finds it in the schedule cache
  assert "CACHE MISS" in lines[1] and "cache hit" in lines[2], lines
  assert all(l.split()[1] == "1" and l.split()[2] == "kernels" and " ms " in l for l in lines), lines
  assert lines[0].endswith("<string>:2") and lines[2].endswith("<string>:3"), lines
  # not a terminal: kernel lines carry no colour codes
  assert "\x1b[" not in res.stdout

def test_kernel_names_are_coloured_by_axis_kind():
  s = colored_name("r_128_32_3n1", ["global", "global", "reduce"])
  assert ansistrip(s) == "r_128_32_3n1"
  assert "\x1b[34m128\x1b[0m" in s and "\x1b[34m32\x1b[0m" in s and "\x1b[31m3\x1b[0m" in s  # blue globals, red reduce
  assert colored_name("E_4_4", ["global"]) == "E_4_4"  # kinds that don't fit the name: left plain

def test_a_delayed_bar_prints_nothing_for_quick_work_and_shows_slow_work(capsys):
  with tqdm(total=3, desc="codegen", delay=30) as bar:
    for _ in range(3): bar.update(1)
  assert capsys.readouterr().err == ""
  bar = tqdm(total=3, desc="codegen", delay=0.05, rate=1000)
  bar.update(1)
  assert capsys.readouterr().err == ""  # not yet: under the delay
  time.sleep(0.06)
  bar.update(2); bar.close()
  err = ansistrip(capsys.readouterr().err)
  assert "codegen" in err and "3/3" in err and "100%" in err, err
