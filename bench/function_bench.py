"""The cost of @function against the plain forward, side by side in one run: the digits CNN of
examples/beautiful_digits.py and a 784-128-10 MLP, batch 128, the same weights, without TinyJit (so every call
builds its graph in Python and goes through the schedule cache; with TinyJit a replay runs no Python at all).
  build:   the forward's graph only (plain: every op again; @function: the signature's key and one CALL node)
  forward: the forward realized (the call's body inlined, then the same kernels)
  step:    forward, loss, backward and an Adam step, realized (the backward through a backward call)
Each figure is the median of interleaved runs (plain, @function, plain, ...), so a busy machine slows both alike.
  python bench/function_bench.py [--quick]"""
from __future__ import annotations
import pathlib, statistics, sys, time
import numpy as np
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "examples"))
from tinygrad import Tensor, nn, function
from tinygrad.nn.state import get_parameters
from beautiful_digits import Model as CNN

BS = 128

class MLP:
  def __init__(self): self.l1, self.l2 = nn.Linear(784, 128), nn.Linear(128, 10)
  def __call__(self, x: Tensor) -> Tensor: return self.l2(self.l1(x.flatten(1)).relu())

def cases(model, x: Tensor, y: Tensor):
  """(name, plain thunk, @function thunk) for one model: both forwards read the same weights."""
  fwd = function(lambda m, x: m(x))
  opt = nn.optim.Adam(get_parameters(model), lr=1e-4)
  def step(f):
    with Tensor.train():
      opt.zero_grad()
      loss = f(model, x).sparse_categorical_crossentropy(y).backward()
      loss.realize(*opt.schedule_step())
  plain = lambda m, x: m(x)  # noqa: E731
  return [("build", lambda: plain(model, x), lambda: fwd(model, x)),
          ("forward", lambda: plain(model, x).realize(), lambda: fwd(model, x).realize()),
          ("step", lambda: step(plain), lambda: step(fwd))]

def median_ms(a, b, reps: int) -> tuple[float, float]:
  for _ in range(2): a(); b()  # compile, fill the caches
  ta, tb = [], []
  for _ in range(reps):
    for f, out in ((a, ta), (b, tb)):
      st = time.perf_counter(); f(); out.append((time.perf_counter() - st) * 1e3)
  return statistics.median(ta), statistics.median(tb)

def main() -> None:
  quick = "--quick" in sys.argv
  rng = np.random.default_rng(0)
  y = Tensor(rng.integers(0, 10, BS, dtype=np.int32)).realize()
  print(f"{'model':6s} {'case':8s} {'plain ms':>9s} {'@function ms':>13s} {'ratio':>6s}")
  for name, model, shape in (("cnn", CNN(8), (1, 8, 8)), ("mlp", MLP(), (1, 28, 28))):
    x = Tensor(rng.standard_normal((BS, *shape), dtype=np.float32)).realize()
    for case, a, b in cases(model, x, y):
      reps = (5 if quick else 20) if case != "build" else (20 if quick else 200)
      pa, pb = median_ms(a, b, reps)
      print(f"{name:6s} {case:8s} {pa:9.2f} {pb:13.2f} {pb / pa:5.2f}x")

if __name__ == "__main__": main()
