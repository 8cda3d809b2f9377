"""Training steps per second with TinyJit, side by side with PyTorch CPU in the same run (when torch is installed):
the digits CNN of examples/beautiful_digits.py and a 784-128-10 MLP, batch 128, Adam. Rounds of `steps` steps
alternate between the two (PyTorch's own figure swung 80-200 steps/s within minutes on a shared machine: one round
each said little); each side's median round is printed, and the ratio of the medians.
  python bench/train_bench.py [--quick] [--rounds N]"""
from __future__ import annotations
import pathlib, statistics, sys, time
import numpy as np
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "examples"))
from tinygrad import Tensor, nn
from tinygrad.nn.state import get_parameters
from beautiful_digits import Model, make_train_step

BS = 128

class MLP:
  def __init__(self): self.l1, self.l2 = nn.Linear(784, 128), nn.Linear(128, 10)
  def __call__(self, x: Tensor) -> Tensor: return self.l2(self.l1(x.flatten(1)).relu())

def timed(step, steps: int):
  """A function that times `steps` calls of step (and the wait for the last's result): steps per second."""
  def run() -> float:
    st = time.perf_counter()
    for _ in range(steps): out = step()
    (out.item() if hasattr(out, "item") else out)
    return steps / (time.perf_counter() - st)
  return run

def ours_round(model, x_shape: tuple[int, ...], steps: int):
  step = make_train_step(model, nn.optim.Adam(get_parameters(model), lr=1e-3))
  rng = np.random.default_rng(0)
  x, y = Tensor(rng.standard_normal((BS, *x_shape), dtype=np.float32)).realize(), Tensor(rng.integers(0, 10, BS, dtype=np.int32)).realize()
  for _ in range(3): step(x, y)  # run, capture, first replay
  return timed(lambda: step(x, y), steps)

def torch_round(kind: str, steps: int):
  try: import torch
  except ImportError: return None
  torch.manual_seed(0)
  if kind == "cnn":
    m = torch.nn.Sequential(torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU(),
                            torch.nn.BatchNorm2d(32), torch.nn.MaxPool2d(2), torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
                            torch.nn.BatchNorm2d(64), torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(256, 10))
    x = torch.randn(BS, 1, 8, 8)
  else:
    m = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    x = torch.randn(BS, 1, 28, 28)
  y = torch.randint(0, 10, (BS,))
  opt = torch.optim.Adam(m.parameters(), lr=1e-3)
  def step():
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(m(x), y)
    loss.backward(); opt.step()
    return loss
  for _ in range(3): step()
  return timed(step, steps)

def main(quick: bool = False, rounds: int = 5) -> None:
  steps = 10 if quick else 40
  Tensor.manual_seed(0)
  try:
    import torch
    threads = torch.get_num_threads()
  except ImportError: threads = None
  for kind, model, shape in (("cnn", Model(8), (1, 8, 8)), ("mlp", MLP(), (1, 28, 28))):
    ours_run, theirs_run = ours_round(model, shape, steps), torch_round(kind, steps)
    ours, theirs = [], []
    for _ in range(rounds):  # alternating: both sides see the same minutes of the machine
      ours.append(ours_run())
      if theirs_run is not None: theirs.append(theirs_run())
    line = f"{kind} batch {BS}: ours {statistics.median(ours):7.1f} steps/s"
    if theirs:
      t = statistics.median(theirs)
      line += (f"   torch {t:7.1f} steps/s ({threads} threads)   ours/torch {statistics.median(ours) / t:5.2f}x   (target >= 1.0x; "
               f"{rounds} rounds of {steps} steps: ours {min(ours):.0f}-{max(ours):.0f}, torch {min(theirs):.0f}-{max(theirs):.0f})")
    print(line, flush=True)

if __name__ == "__main__":
  args = sys.argv[1:]
  main("--quick" in args, int(args[args.index("--rounds") + 1]) if "--rounds" in args else 5)
