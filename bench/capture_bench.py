"""Capture overhead: a script's time with VIZ=-1 (everything captured to a trace file, no server) and with PROFILE=1
(timeline only), as ratios to the same script with neither set, side by side in one run; and what the engine's hook
costs when neither is set. With TINYGRAD_VENV (a virtualenv where the real tinygrad is installed; its CPU device
needs clang: on PATH or TINYGRAD_CC), the same scripts run on tinygrad too, so its VIZ figure stands beside ours.
  python bench/capture_bench.py [--quick] [--reps N]
  TINYGRAD_VENV=/tmp/tgvenv TINYGRAD_CC=/path/to/clang python bench/capture_bench.py
Workloads: the digits training run of examples/beautiful_digits.py (its train(), on the scikit-learn digits handed to
it as IDX files so that tinygrad's virtualenv needs no scikit-learn), a matmul script, and `import tinygrad` alone.
Each figure is the median of N whole-process runs (interpreter start, imports and the trace's last flush at exit
included), interleaved, as wall time and as CPU time of all the process's threads. The encoding of the biggest
captured trace is timed against the stdlib json module too. docs/performance.md has figures."""
from __future__ import annotations
from typing import Any
import argparse, json, os, pathlib, resource, shutil, statistics, subprocess, sys, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODES = {"none": {}, "PROFILE=1": {"PROFILE": "1"}, "VIZ=-1": {"VIZ": "-1"}}
TARGETS = {"PROFILE=1": 1.02, "VIZ=-1": 1.2}

# *** workloads: run in a fresh process with this file as the script, on whichever tinygrad that python imports ***

def digits(steps: int) -> None:
  sys.path.insert(0, str(ROOT / "examples"))
  from tinygrad import Tensor
  if not hasattr(Tensor, "train"):  # tinygrad >= 0.12 spells `with Tensor.train():` as `with Context(TRAINING=1):`
    from tinygrad.helpers import Context
    Tensor.train = staticmethod(lambda mode=True: Context(TRAINING=int(mode)))  # type: ignore[attr-defined]
  from beautiful_digits import train
  train(steps=steps, bs=128, lr=0.002, log=lambda *a, **k: None)

def matmul(reps: int) -> None:
  import numpy as np
  from tinygrad import Tensor
  rng = np.random.default_rng(0)
  for n in (128, 256, 512, 1024):
    an, bn = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    a, b = Tensor(an).realize(), Tensor(bn).realize()
    for _ in range(reps): c = (a @ b).realize()
    np.testing.assert_allclose(c.numpy(), an @ bn, rtol=1e-3, atol=1e-3)

def startup(_: int) -> None:
  import tinygrad  # noqa: F401  the hook installs the recorder here; it is closed at exit

def hook_calls(steps: int) -> dict[str, int]:
  """How often a digits run (the first in its process) passes each hook site, counted by cProfile."""
  import cProfile, pstats
  prof = cProfile.Profile()
  prof.runcall(digits, steps)
  calls: dict[str, int] = {}
  for (file, _, fn), (_, ncalls, *_rest) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
    if str(ROOT / "tinygrad") in file: calls[fn] = calls.get(fn, 0) + ncalls
  # every __enter__/__exit__ and every function named wrapper in the engine counts: an upper bound
  checks = sum(calls.get(f, 0) for f in ("exec_kernel", "exec_copy", "get_program", "realize_all", "run_schedule", "_report_mem",
                                          "profile_marker", "__enter__", "__exit__"))
  return {"graph_rewrite": calls.get("graph_rewrite", 0), "wrapper": calls.get("wrapper", 0), "checks": checks}

def hook_cost(steps: int) -> dict[str, float]:
  """With neither VIZ nor PROFILE set: the time each hook site adds per call (the engine's code with the check against
  the same code without it, in this process) and the time of a digits run (the first in this process)."""
  import timeit
  from tinygrad import tracing
  from tinygrad.tensor import _tensor_call
  from tinygrad.uop.ops import UOp, PatternMatcher, graph_rewrite, _rewrite
  from tinygrad.uop.symbolic import symbolic
  assert tracing.tracer is None
  st = time.perf_counter()
  digits(steps)
  run_s = time.perf_counter() - st
  def per_call(a, b, n: int = 20000) -> float:
    """ns that `a` takes over `b`: the best of 7 timings of each, interleaved"""
    ta, tb = zip(*((timeit.timeit(a, number=n), timeit.timeit(b, number=n)) for _ in range(7)))
    return max(0.0, (min(ta) - min(tb)) / n * 1e9)
  x = UOp.variable("x", 0, 9)
  small, empty = x * 1 + 0, PatternMatcher([])
  def check(): return tracing.tracer is not None
  def nothing(): return False
  def plain(self): return self
  wrapped = _tensor_call(plain)
  return {"run_s": run_s,
          # on a rewrite with nothing to do, where the hook's few ns are not lost in the rewrite's own noise
          "graph_rewrite_ns": per_call(lambda: graph_rewrite(x, empty), lambda: _rewrite(x, empty, None, False, None)),
          "small_rewrite_ns": timeit.timeit(lambda: _rewrite(small, symbolic, None, False, None), number=20000) / 20000 * 1e9,
          "tensor_call_ns": per_call(lambda: wrapped(x), lambda: plain(x)), "check_ns": per_call(check, nothing)}

# *** the driver ***

def write_digits_idx(folder: pathlib.Path) -> None:
  """The scikit-learn digits as MNIST-style IDX files, the format examples/beautiful_digits.py reads from MNIST_DIR, at
  MNIST's 28x28 (each pixel 3x3, a 2-pixel border): real tinygrad's mnist() reshapes whatever it reads to 28x28."""
  import numpy as np
  from sklearn.datasets import load_digits
  d = load_digits()
  X = np.pad(np.kron(np.round(d.images * (255 / 16)), np.ones((3, 3))), ((0, 0), (2, 2), (2, 2))).astype(np.uint8)
  Y = d.target.astype(np.uint8)
  n = int(len(X) * 0.8)
  def idx(name: str, a) -> None:
    (folder / name).write_bytes(bytes([0, 0, 8, a.ndim]) + b"".join(s.to_bytes(4, "big") for s in a.shape) + a.tobytes())
  idx("train-images-idx3-ubyte", X[:n]); idx("train-labels-idx1-ubyte", Y[:n])
  idx("t10k-images-idx3-ubyte", X[n:]); idx("t10k-labels-idx1-ubyte", Y[n:])

MNIST_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"

def seed_tinygrad_downloads(xdg: pathlib.Path, digits: pathlib.Path) -> None:
  """Real tinygrad's mnist() fetches its four files (this machine may have no network): put the digits IDX files where
  its download cache keeps them, $XDG_CACHE_HOME/tinygrad/downloads/<md5 of the url>.gunzip (decompressed), as one
  online run would have left them."""
  import hashlib
  d = xdg / "tinygrad" / "downloads"
  d.mkdir(parents=True, exist_ok=True)
  for f in digits.iterdir():
    (d / (hashlib.md5(f"{MNIST_URL}{f.name}.gz".encode()).hexdigest() + ".gunzip")).write_bytes(f.read_bytes())

class Engine:
  def __init__(self, name: str, python: str, env: dict[str, str], cwd: str):
    self.name, self.python, self.env, self.cwd = name, python, env, cwd
  def run(self, workload: str, arg: int, mode: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its threads and children)"""
    env = {**self.env, **MODES[mode]}
    ru, st = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    r = subprocess.run([self.python, str(pathlib.Path(__file__).resolve()), "--worker", workload, str(arg)], env=env, cwd=self.cwd,
                       capture_output=True, text=True)
    wall, ru2 = time.perf_counter() - st, resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0: raise RuntimeError(f"{self.name} {workload} {mode} failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}")
    return wall, ru2.ru_utime + ru2.ru_stime - ru.ru_utime - ru.ru_stime

def clean_env(tmp: pathlib.Path) -> dict[str, str]:
  env = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG", "PYTHONPATH", "TINYVIZ_TRACE")}
  return {**env, "TINYVIZ_TRACE_DIR": str(tmp / "traces"), "MNIST_DIR": str(tmp / "digits")}

def tinygrad_engine(tmp: pathlib.Path, base: dict[str, str]) -> tuple[Engine | None, str]:
  venv = os.environ.get("TINYGRAD_VENV")
  if not venv: return None, "tinygrad: skipped (set TINYGRAD_VENV to a virtualenv with tinygrad installed to compare)"
  python = str(pathlib.Path(venv) / "bin" / "python")
  cc = os.environ.get("TINYGRAD_CC") or shutil.which("clang")
  if cc is None: return None, "tinygrad: skipped (its CPU device needs clang: put it on PATH or set TINYGRAD_CC)"
  env = {**base, "CC": cc, "VIRTUAL_ENV": venv, "PATH": f"{pathlib.Path(venv) / 'bin'}{os.pathsep}{base.get('PATH', '')}",
         "XDG_CACHE_HOME": str(tmp / "xdg")}
  seed_tinygrad_downloads(tmp / "xdg", tmp / "digits")
  # run outside the repo: its tinygrad/ folder must not shadow the installed package
  r = subprocess.run([python, "-c", "import tinygrad, importlib.metadata as m; print(tinygrad.__file__, m.version('tinygrad'))"],
                     env=env, cwd=str(tmp), capture_output=True, text=True)
  if r.returncode != 0 or str(ROOT) in r.stdout: return None, f"tinygrad: skipped ({venv} has no usable tinygrad: {r.stderr.strip()[-300:]})"
  return Engine(f"tinygrad {r.stdout.split()[-1]}", python, env, str(tmp)), ""

def measure(engines: list[Engine], workloads: dict[str, int], reps: int) -> dict[tuple[str, str, str], list[tuple[float, float]]]:
  runs = [(e, w, m) for e in engines for w in workloads for m in MODES]
  for e, w, m in runs:
    if m == "none": e.run(w, workloads[w], m)  # warm the compile caches on disk: every timed run then finds them full
  times: dict[tuple[str, str, str], list[tuple[float, float]]] = {(e.name, w, m): [] for e, w, m in runs}
  for i in range(reps):  # interleaved, so that a busy spell on the machine hits every configuration alike
    for e, w, m in runs: times[(e.name, w, m)].append(e.run(w, workloads[w], m))
    print(f"\rrun {i + 1}/{reps}", end="", file=sys.stderr, flush=True)
  print("", file=sys.stderr)
  return times

def report(engines: list[Engine], workloads: dict[str, int], reps: int, times: dict, why: str) -> None:
  print(f"capture overhead: whole process, median of {reps} interleaved runs, as wall time | CPU time (all threads); "
        "ratio = time / time with neither set")
  print(f"{'workload':26s} {'engine':16s} {'neither':>15s} {'PROFILE=1':>15s} {'VIZ=-1':>15s}")
  labels = {"startup": "import + install + close", "digits": f"digits ({workloads['digits']} steps)",
            "matmul": f"matmul (4 sizes x {workloads['matmul']})"}
  for w in workloads:
    for e in engines:
      wall = {m: statistics.median(t[0] for t in times[(e.name, w, m)]) for m in MODES}
      cpu = {m: statistics.median(t[1] for t in times[(e.name, w, m)]) for m in MODES}
      if w == "startup":  # a fixed cost: what it adds, not a ratio
        cols = "".join(f" {(wall[m] - wall['none']) * 1e3:+6.0f}ms|{(cpu[m] - cpu['none']) * 1e3:+5.0f}ms" for m in ("PROFILE=1", "VIZ=-1"))
      else: cols = "".join(f" {wall[m] / wall['none']:6.2f}x|{cpu[m] / cpu['none']:5.2f}x " for m in ("PROFILE=1", "VIZ=-1"))
      print(f"{labels[w]:26s} {e.name:16s} {wall['none']:6.2f}s|{cpu['none']:6.2f}s{cols}")
  if why: print(why)
  print(f"targets (ours): PROFILE=1 <= {TARGETS['PROFILE=1']}x, VIZ=-1 <= {TARGETS['VIZ=-1']}x, hook < 2% with neither set")

def report_hook(env: dict[str, str], steps: int) -> None:
  def worker(name: str) -> dict:
    r = subprocess.run([sys.executable, __file__, "--worker", name, str(steps)], env=env, cwd=str(ROOT), capture_output=True, text=True)
    if r.returncode != 0: raise RuntimeError(f"{name} worker failed:\n{r.stderr[-4000:]}")
    return json.loads(r.stdout.splitlines()[-1])
  hook, calls = worker("hook"), worker("calls")
  cost_s = (calls["graph_rewrite"] * hook["graph_rewrite_ns"] + calls["wrapper"] * hook["tensor_call_ns"] + calls["checks"] * hook["check_ns"]) * 1e-9
  print(f"hook with neither set: graph_rewrite +{hook['graph_rewrite_ns']:.0f} ns/call (a small symbolic rewrite takes "
        f"{hook['small_rewrite_ns'] / 1e3:.0f} us), Tensor call span wrapper +{hook['tensor_call_ns']:.0f} ns/call, "
        f"other checks +{hook['check_ns']:.0f} ns")
  print(f"  digits ({steps} steps): {calls['graph_rewrite']} graph_rewrites, {calls['wrapper']} wrapped Tensor calls, {calls['checks']} "
        f"other checks in {hook['run_s']:.2f} s: {cost_s / hook['run_s'] * 100:.3f}% of the run")

def main() -> None:
  ap = argparse.ArgumentParser()
  ap.add_argument("--quick", action="store_true", help="fewer repetitions and smaller workloads")
  ap.add_argument("--reps", type=int, default=None)
  ap.add_argument("--worker", nargs=2, metavar=("WORKLOAD", "ARG"), help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.worker:
    name, arg = args.worker[0], int(args.worker[1])
    if name in ("hook", "calls"): print(json.dumps((hook_cost if name == "hook" else hook_calls)(arg)))
    else: {"startup": startup, "digits": digits, "matmul": matmul}[name](arg)
    return
  reps = args.reps or (3 if args.quick else 5)
  workloads = {"startup": 0, "digits": 5 if args.quick else 10, "matmul": 5 if args.quick else 10}
  with tempfile.TemporaryDirectory(prefix="capture_bench") as t:
    tmp = pathlib.Path(t)
    (tmp / "digits").mkdir()
    write_digits_idx(tmp / "digits")
    base = clean_env(tmp)
    engines = [Engine("tinyviz", sys.executable, {**base, "PYTHONPATH": str(ROOT)}, str(ROOT))]
    tg, why = tinygrad_engine(tmp, base)
    if tg is not None: engines.append(tg)
    times = measure(engines, workloads, reps)
    report(engines, workloads, reps, times, why)
    report_hook(engines[0].env, workloads["digits"])
    report_encode(tmp / "traces")

def report_encode(traces: pathlib.Path, reps: int = 3) -> None:
  """What the flush thread's encoding of the biggest captured trace costs: ours (profiler.tracefile.encode_lines: msgspec,
  from the event Structs) against the stdlib json module encoding the same events' dicts (to_json), as the recorder
  did before issue 16 (then to_json itself was Python too, so the peer is if anything faster than the old code)."""
  from profiler.load import load
  from profiler.events import to_json_batch
  from profiler.tracefile import encode_lines
  digits = sorted(traces.glob("*.tinyviz.jsonl"), key=lambda p: p.stat().st_size)
  if not digits: return print("encoding: no trace was written")
  events = load(str(digits[-1])).events
  stdlib = json.JSONEncoder(separators=(",", ":"), allow_nan=False, default=str)
  def peer() -> bytes: return "".join([stdlib.encode(d) + "\n" for d in to_json_batch(events)]).encode()
  def best(f: Any) -> float:
    ts = []
    for _ in range(reps): t = time.process_time(); f(); ts.append(time.process_time() - t)
    return min(ts)
  assert [json.loads(l) for l in encode_lines(events).splitlines()] == [json.loads(l) for l in peer().splitlines()]  # the same JSON
  ours, theirs = best(lambda: encode_lines(events)), best(peer)
  print(f"encoding the biggest trace's {len(events):,} events (the flush thread's work, CPU time): ours (msgspec) {ours * 1e3:.0f} ms, "
        f"stdlib json of their dicts {theirs * 1e3:.0f} ms ({theirs / ours:.1f}x)")

if __name__ == "__main__": main()
