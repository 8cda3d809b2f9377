"""Runs every benchmark once at its smallest size, so that a benchmark that no longer runs is caught by the tests
(tests/test_bench_smoke.py runs this; it checks that each one exits 0 and prints its figure, never how fast).
  python bench/smoke.py [NAME...]        all of them, or the named ones (e.g. engine_bench keepalive_bench)
gpu_bench and gpu_check.sh need an NVIDIA GPU and are left to `bash bench/gpu_check.sh` on such a machine."""
from __future__ import annotations
import os, shutil, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
# each benchmark's smallest run; (name, command, a word its output must hold)
SMOKE: list[tuple[str, list[str], str]] = [
  ("engine_bench", [PY, "bench/engine_bench.py", "--quick"], "numpy"),
  ("train_bench", [PY, "bench/train_bench.py", "--quick"], "steps/s"),
  ("capture_bench", [PY, "bench/capture_bench.py", "--quick", "--reps", "1"], "VIZ=-1"),
  ("server_bench", [PY, "bench/server_bench.py", "--quick"], "events/s"),
  ("keepalive_bench", [PY, "bench/keepalive_bench.py", "10"], "kept-alive"),
  ("hardening_bench", [PY, "bench/hardening_bench.py", "--quick"], "json.load"),
  ("load_bench", [PY, "bench/load_bench.py", "--spans", "2000", "--runs", "1"], "json"),
  ("timeline_bench", [PY, "bench/timeline_bench.py", "--spans", "5000"], "ms"),
  ("render_bench", [PY, "bench/render_bench.py", "200"], "ms"),
  ("layout_bench", ["node", "bench/layout_bench.mjs", "200"], "ms"),
  ("function_bench", [PY, "bench/function_bench.py", "--quick"], "x"),
  ("multi_bench", [PY, "bench/multi_bench.py", "--quick"], "x"),
  ("scatter_bench", [PY, "bench/scatter_bench.py", "--quick"], "numpy"),
  ("first_run_bench", [PY, "bench/first_run_bench.py", "--rounds", "1"], "first/cached"),
  ("kernel_bench", [PY, "bench/kernel_bench.py", "--quick", "--top", "3"], "sum of medians"),
  ("kernel_bench_alone", [PY, "bench/kernel_bench.py", "--alone", "r_128_10_256", "--quick"], "calls each"),
]

def run(name: str, cmd: list[str], want: str) -> tuple[bool, str]:
  if not (ROOT / cmd[1]).exists(): return False, f"{cmd[1]} is missing"
  if shutil.which(cmd[0]) is None and not os.path.exists(cmd[0]): return False, f"{cmd[0]} is not installed"
  env = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG")}
  env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
  env["BROWSER"] = "none"
  try: p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
  except subprocess.TimeoutExpired: return False, "did not finish in 900 s"
  out = p.stdout + p.stderr
  if p.returncode != 0: return False, f"exit {p.returncode}:\n{out[-3000:]}"
  if want not in out: return False, f"printed no {want!r}:\n{out[-3000:]}"
  return True, p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""

def main(names: list[str]) -> int:
  todo = [s for s in SMOKE if not names or s[0] in names]
  if names and len(todo) != len(names): print(f"unknown: {sorted(set(names) - {s[0] for s in SMOKE})}"); return 2
  bad = 0
  for name, cmd, want in todo:
    t = time.monotonic()
    ok, msg = run(name, cmd, want)
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name} ({time.monotonic() - t:.0f} s): {msg}", flush=True)
  return 1 if bad else 0

if __name__ == "__main__": sys.exit(main(sys.argv[1:]))
