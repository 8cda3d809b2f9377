"""A script's first run (empty kernel and plan caches: every kernel's plans searched and compiled) against the same
script run again (everything cached on disk), each as its own process, wall time: the small GPT of
tests/scripts/gpt_tinygrad_style.py (3 steps) and examples/beautiful_digits.py's first 3 training steps.
  python bench/first_run_bench.py [--root TREE] [--rounds N]
--root runs another checkout of the engine (a git worktree of an older commit) with this same bench, to compare."""
from __future__ import annotations
import argparse, os, pathlib, shutil, statistics, subprocess, sys, tempfile, time

HERE = pathlib.Path(__file__).resolve().parent.parent
DIGITS = ("import sys; sys.path.insert(0, 'examples'); import beautiful_digits as d; d.train(steps=3, log=lambda *a, **k: None)")
WORKLOADS = {"small GPT, 3 steps": ["tests/scripts/gpt_tinygrad_style.py"], "digits CNN, first 3 steps": ["-c", DIGITS]}

def run(root: pathlib.Path, args: list[str], cache: str) -> float:
  env = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG")}
  env.update(PYTHONPATH=str(root), TINYVIZ_CACHE=cache, STEPS="3", PROGRESS="0")
  st = time.perf_counter()
  res = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=900)
  if res.returncode != 0: raise RuntimeError(f"{args} failed in {root}:\n{res.stderr[-2000:]}")
  return time.perf_counter() - st

def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--root", default=str(HERE), help="the engine checkout to run (default: this one)")
  ap.add_argument("--rounds", type=int, default=2)
  a = ap.parse_args()
  root = pathlib.Path(a.root).resolve()
  for name, args in WORKLOADS.items():
    cold, warm = [], []
    for _ in range(a.rounds):
      cache = tempfile.mkdtemp(prefix="tinyviz-first-run-")
      try:
        cold.append(run(root, args, cache))
        warm.append(run(root, args, cache))
      finally: shutil.rmtree(cache, ignore_errors=True)
    c, w = statistics.median(cold), statistics.median(warm)
    print(f"{name:28s} first run {c:6.2f} s   cached {w:6.2f} s   first/cached {c / w:5.2f}x   "
          f"(runs: {', '.join(f'{x:.2f}' for x in cold)} | {', '.join(f'{x:.2f}' for x in warm)}; {root.name})", flush=True)

if __name__ == "__main__": main()
