"""Each kernel's time in a jitted training step (the digits CNN of examples/beautiful_digits.py, or a 784-128-10 MLP;
batch 128, Adam), against the same step of another checkout of the engine (a worktree of an older commit), the two
run alternately, each round its own process. A kernel's figure is the median over its replays (every call of the
compiled function timed around it, so a parallel kernel counts its whole parallel region); the ratio is the other
tree's median / ours (above 1: ours is faster). Kernels are matched by name; a name only one tree has is listed apart.
  python bench/kernel_bench.py [--model cnn|mlp] [--against TREE] [--rounds N] [--steps N] [--top N] [--quick]
  python bench/kernel_bench.py --alone NAME [--against TREE] [--calls N]
Without --against it prints this tree's kernels alone. --alone NAME: that one kernel of the step, alone, where a
noisy host moves whole processes: each tree's C source for it (from a step run by that tree), both compiled here and
called alternately on the same buffers (random floats), N calls each; the medians, minimums and their ratio, and
whether the two give the same output. Caches: each tree its own, kept under TINYVIZ_CACHE (else
~/.cache/tinyviz), so a second run of the bench compiles nothing."""
from __future__ import annotations
import argparse, json, os, pathlib, statistics, subprocess, sys, time

HERE = pathlib.Path(__file__).resolve().parent.parent

WORKER = """
import collections, json, sys, time
sys.path.insert(0, "examples")
import numpy as np
from tinygrad.runtime import ops_cpu
times = collections.defaultdict(list)
bind = ops_cpu.CPUDevice.bind
def timed_bind(self, p, bufs):
  f, args = bind(self, p, bufs)
  ts = times[p.name]
  def run(*a):
    st = time.perf_counter_ns(); f(*a); ts.append(time.perf_counter_ns() - st)
  return run, args
ops_cpu.CPUDevice.bind = timed_bind  # TinyJit's replay calls what bind returns
sys.path.insert(0, "bench")
from tinygrad import Tensor, nn
from tinygrad.nn.state import get_parameters
from beautiful_digits import Model, make_train_step
from train_bench import MLP  # train_bench's models, so the two benches time the same steps
kind, steps = sys.argv[1], int(sys.argv[2])
model, shape = (Model(8), (1, 8, 8)) if kind == "cnn" else (MLP(), (1, 28, 28))
step = make_train_step(model, nn.optim.Adam(get_parameters(model), lr=1e-3))
rng = np.random.default_rng(0)
x, y = Tensor(rng.standard_normal((128, *shape), dtype=np.float32)).realize(), Tensor(rng.integers(0, 10, 128, dtype=np.int32)).realize()
for _ in range(steps): step(x, y)
step(x, y).item()
print("KERNELS " + json.dumps({k: v for k, v in times.items()}))
if len(sys.argv) > 3:  # --alone: the named kernel's C source and its buffers' sizes (output first)
  from tinygrad.engine import realize as R
  p = next((p for p in R._programs.values() if p.name == sys.argv[3]), None)
  print("SOURCE " + json.dumps(None if p is None else {"src": p.src, "sizes": [u.arg[1] for u in p.params]}))
"""

def _worker(tree: pathlib.Path, model: str, steps: int, cache: str, *extra: str) -> list[str]:
  env = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG")}
  env.update(PYTHONPATH=str(tree), TINYVIZ_CACHE=cache, PROGRESS="0")
  res = subprocess.run([sys.executable, "-c", WORKER, model, str(steps), *extra], cwd=tree, env=env, capture_output=True, text=True, timeout=900)
  if res.returncode != 0 or not any(l.startswith("KERNELS ") for l in res.stdout.splitlines()):
    raise RuntimeError(f"the {model} step failed in {tree}:\n{res.stderr[-2000:]}")
  return res.stdout.splitlines()

def run_tree(tree: pathlib.Path, model: str, steps: int, cache: str) -> dict[str, list[int]]:
  line = next(l for l in _worker(tree, model, steps, cache) if l.startswith("KERNELS "))
  return json.loads(line[len("KERNELS "):])

def kernel_source(tree: pathlib.Path, model: str, cache: str, name: str) -> dict:
  """The C source of kernel `name` as the tree makes it in the model's step, and its buffers' sizes in elements."""
  line = next(l for l in _worker(tree, model, 1, cache, name) if l.startswith("SOURCE "))
  if (got := json.loads(line[len("SOURCE "):])) is None: raise SystemExit(f"{tree.name} made no kernel named {name} in the {model} step")
  return got

def alone(trees: list[pathlib.Path], caches: dict, model: str, name: str, calls: int) -> None:
  """One kernel's C from each tree, compiled by this tree's CPU device, called alternately on the same buffers."""
  import ctypes, numpy as np
  sys.path.insert(0, str(HERE))
  from tinygrad.runtime.ops_cpu import compile_c
  from tinygrad.renderer.cstyle import PRELUDE
  got = [kernel_source(t, model, caches[t], name) for t in trees]
  if len({tuple(g["sizes"]) for g in got}) != 1: raise SystemExit(f"{name}'s buffers differ between the trees: {[g['sizes'] for g in got]}")
  fns = []
  for g in got:
    f = getattr(ctypes.CDLL(str(compile_c(PRELUDE + "\n\n" + g["src"]))), name)
    f.argtypes, f.restype = [ctypes.c_void_p] * len(g["sizes"]), None
    fns.append(f)
  rng = np.random.default_rng(0)
  bufs = [rng.standard_normal(n).astype(np.float32) for n in got[0]["sizes"]]
  ptrs = [b.ctypes.data for b in bufs]
  outs = []
  for f in fns:
    bufs[0][:] = 0; f(*ptrs); outs.append(bufs[0].copy())
  times: list[list[int]] = [[] for _ in fns]
  for _ in range(calls):
    for f, ts in zip(fns, times):
      st = time.perf_counter_ns(); f(*ptrs); ts.append(time.perf_counter_ns() - st)
  med, low = [statistics.median(ts) / 1e3 for ts in times], [min(ts) / 1e3 for ts in times]
  print(f"{name} alone, {calls} calls each (load {os.getloadavg()[0]:.1f}): {trees[0].name} median {med[0]:.1f} us, min {low[0]:.1f} us" +
        (f"; {trees[1].name} median {med[1]:.1f} us, min {low[1]:.1f} us; {trees[1].name}/{trees[0].name} {med[1] / med[0]:.2f}x median, {low[1] / low[0]:.2f}x min; "
         f"same output: {bool(np.allclose(outs[0], outs[1], rtol=1e-3, atol=1e-3, equal_nan=True))}" if len(fns) > 1 else ""))

def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--model", choices=("cnn", "mlp"), default="cnn")
  ap.add_argument("--against", default=None, help="another checkout of the engine, run alternately with this one")
  ap.add_argument("--rounds", type=int, default=3)
  ap.add_argument("--steps", type=int, default=200, help="replays of the step per round")
  ap.add_argument("--top", type=int, default=25, help="kernels listed, the slowest first")
  ap.add_argument("--quick", action="store_true", help="1 round of 20 steps (--alone: 20 calls)")
  ap.add_argument("--alone", metavar="NAME", default=None, help="time this one kernel alone, each tree's C called alternately")
  ap.add_argument("--calls", type=int, default=300, help="--alone: calls of each tree's kernel")
  a = ap.parse_args()
  if a.quick: a.rounds, a.steps, a.calls = 1, 20, 20
  trees = [HERE] + ([pathlib.Path(a.against).resolve()] if a.against else [])
  base = pathlib.Path(os.environ.get("TINYVIZ_CACHE", pathlib.Path.home() / ".cache" / "tinyviz"))
  caches = {t: str(base if i == 0 else base / "kernel_bench" / t.name) for i, t in enumerate(trees)}  # ours: the usual cache
  if a.alone: return alone(trees, caches, a.model, a.alone, a.calls)
  got: dict[pathlib.Path, dict[str, list[int]]] = {t: {} for t in trees}
  for r in range(a.rounds):
    for t in (trees if r % 2 == 0 else trees[::-1]):  # the order alternates: the first process of a round ran ~6% slower here
      for k, v in run_tree(t, a.model, a.steps, caches[t]).items(): got[t].setdefault(k, []).extend(v)
  med = {t: {k: statistics.median(v) / 1000 for k, v in d.items()} for t, d in got.items()}
  ours = med[HERE]
  total = sum(ours.values())
  print(f"{a.model} step, {a.rounds} round(s) x {a.steps} replays, median us per kernel (load {os.getloadavg()[0]:.1f})")
  other = med[trees[1]] if a.against else None
  for k in sorted(ours, key=lambda k: -ours[k])[:a.top]:
    if other is None: print(f"  {k:34s} {ours[k]:9.1f} us  {100 * ours[k] / total:5.1f}%")
    elif k in other: print(f"  {k:34s} {ours[k]:9.1f} us  against {other[k]:9.1f} us  {other[k] / ours[k]:5.2f}x")
    else: print(f"  {k:34s} {ours[k]:9.1f} us  (not in {trees[1].name})")
  print(f"  sum of medians {total:.0f} us over {len(ours)} kernels" + (f", against {sum(other.values()):.0f} us over {len(other)}: "
        f"{sum(other.values()) / total:.2f}x" if other else ""))
  if other and (only := sorted(set(other) - set(ours))): print(f"  only in {trees[1].name}: {', '.join(only)}")

if __name__ == "__main__": main()
