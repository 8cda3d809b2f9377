"""A script's first run (empty kernel, plan and program caches: every kernel's plans searched and compiled) against the
same script run again (everything cached on disk), each as its own process: the small GPT of
tests/scripts/gpt_tinygrad_style.py (3 steps) and examples/beautiful_digits.py's first 3 training steps. Prints wall
time and CPU time (the process's and its compilers', user + system: the figure that moves least with the machine's load).
  python bench/first_run_bench.py [--root TREE] [--against BASE] [--rounds N]
--root runs another checkout of the engine (a git worktree of an older commit) with this same bench; --against BASE
runs BASE too, alternating with --root in every round (interleaved), and prints both."""
from __future__ import annotations
import argparse, os, pathlib, resource, shutil, statistics, subprocess, sys, tempfile, time

HERE = pathlib.Path(__file__).resolve().parent.parent
DIGITS = ("import sys; sys.path.insert(0, 'examples'); import beautiful_digits as d; d.train(steps=3, log=lambda *a, **k: None)")
WORKLOADS = {"small GPT, 3 steps": ["tests/scripts/gpt_tinygrad_style.py"], "digits CNN, first 3 steps": ["-c", DIGITS]}
TARGET_S = {"small GPT, 3 steps": 5.0, "digits CNN, first 3 steps": 2.0}  # issue 21: a first run's wall time at most this

def run(root: pathlib.Path, args: list[str], cache: str) -> tuple[float, float]:
  """(wall seconds, CPU seconds of the process and everything it started)."""
  env = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG")}
  env.update(PYTHONPATH=str(root), TINYVIZ_CACHE=cache, STEPS="3", PROGRESS="0")
  r0, st = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
  res = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=900)
  wall, r1 = time.perf_counter() - st, resource.getrusage(resource.RUSAGE_CHILDREN)
  if res.returncode != 0: raise RuntimeError(f"{args} failed in {root}:\n{res.stderr[-2000:]}")
  return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--root", default=str(HERE), help="the engine checkout to run (default: this one)")
  ap.add_argument("--against", default=None, help="another checkout run alternately with --root (interleaved)")
  ap.add_argument("--rounds", type=int, default=2)
  a = ap.parse_args()
  roots = [pathlib.Path(r).resolve() for r in ([a.against] if a.against else []) + [a.root]]
  for name, args in WORKLOADS.items():
    got: dict[pathlib.Path, list[tuple[tuple[float, float], tuple[float, float]]]] = {r: [] for r in roots}
    for _ in range(a.rounds):
      for root in roots:
        cache = tempfile.mkdtemp(prefix="tinyviz-first-run-")
        try: got[root].append((run(root, args, cache), run(root, args, cache)))
        finally: shutil.rmtree(cache, ignore_errors=True)
    for root in roots:
      runs = got[root]
      cw, cc = statistics.median(c[0] for c, _ in runs), statistics.median(c[1] for c, _ in runs)
      ww, wc = statistics.median(w[0] for _, w in runs), statistics.median(w[1] for _, w in runs)
      print(f"{name:28s} first run {cw:6.2f} s ({cc:6.2f} s CPU; target <= {TARGET_S[name]:.0f} s: {'met' if cw <= TARGET_S[name] else 'NOT met'})   "
            f"cached {ww:6.2f} s ({wc:5.2f} s CPU)   first/cached {cw / ww:5.2f}x   "
            f"(runs, wall/CPU: {', '.join(f'{c[0]:.2f}/{c[1]:.2f}' for c, _ in runs)} | {', '.join(f'{w[0]:.2f}/{w[1]:.2f}' for _, w in runs)}; "
            f"{root.name}, load {os.getloadavg()[0]:.1f})", flush=True)

if __name__ == "__main__": main()
