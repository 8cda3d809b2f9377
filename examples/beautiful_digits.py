"""Train a small CNN on handwritten digits, tinygrad style (Conv2d, ReLU, BatchNorm, max_pool2d, Linear, Adam, TinyJit).
Data: the 8x8 digits scikit-learn ships inside its package (no download), or MNIST when MNIST_DIR points at a folder
with its IDX files (train-images-idx3-ubyte[.gz], ...).
  python examples/beautiful_digits.py            STEPS=300 BS=128 LR=0.002 SEED=42 are the defaults;
                                                 exits with 1 below TARGET_ACC=95 (% test accuracy)
  VIZ=1 python examples/beautiful_digits.py      watch every rewrite and kernel while it trains"""
from __future__ import annotations
import os, sys, time
from tinygrad import Tensor, TinyJit, nn, GlobalCounters
from tinygrad.helpers import getenv
from tinygrad.nn.state import get_parameters
from tinygrad.nn.datasets import mnist  # tinygrad's public name: the example runs on real tinygrad as well

def _sklearn_digits():
  """scikit-learn's load_digits() (images, target), read from the file inside its package without importing it: importing
  sklearn.datasets takes 1-3 s, most of this example's first 3 steps; the arrays are the same (float64 images, int64 labels)."""
  import importlib.util, pathlib, numpy as np
  spec = importlib.util.find_spec("sklearn")  # finds the package, does not run it
  if spec is not None and spec.origin and (f := pathlib.Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz").exists():
    data = np.loadtxt(f, delimiter=",")
    return data[:, :-1].reshape(-1, 8, 8), data[:, -1].astype(np.int64)
  from sklearn.datasets import load_digits  # another layout: its own loader (or its ImportError, naming sklearn)
  digits = load_digits()
  return digits.images, digits.target

def load_data():
  import numpy as np
  if os.environ.get("MNIST_DIR"):
    X_train, Y_train, X_test, Y_test = (t.numpy() for t in mnist())
    X_train, X_test = X_train[:, 0], X_test[:, 0]  # (N, 28, 28): the channel axis is added below for both sources
    scale = 255.0
  else:
    X, Y = _sklearn_digits()
    order = np.random.default_rng(1337).permutation(len(X))
    X, Y = X[order], Y[order]
    n_train = int(len(X) * 0.8)
    X_train, Y_train, X_test, Y_test = X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]
    scale = 16.0
  f = lambda x: Tensor((x.astype(np.float32) / scale - 0.5)[:, None])
  return f(X_train), Tensor(Y_train.astype(np.int32)), f(X_test), Tensor(Y_test.astype(np.int32))

class Model:
  def __init__(self, size: int):
    self.layers = [
      nn.Conv2d(1, 32, 3, padding=1), Tensor.relu, nn.Conv2d(32, 32, 3, padding=1), Tensor.relu,
      nn.BatchNorm(32), Tensor.max_pool2d,
      nn.Conv2d(32, 64, 3, padding=1), Tensor.relu, nn.BatchNorm(64), Tensor.max_pool2d,
      lambda x: x.flatten(1), nn.Linear(64 * (size // 4) ** 2, 10)]
  def __call__(self, x: Tensor) -> Tensor: return x.sequential(self.layers)

def make_train_step(model, opt) -> TinyJit:
  """One jitted training step: forward, loss, backward and the optimizer's update, realized in one schedule."""
  @TinyJit
  def train_step(x: Tensor, y: Tensor) -> Tensor:
    with Tensor.train():
      opt.zero_grad()
      loss = model(x).sparse_categorical_crossentropy(y).backward()
      return loss.realize(*opt.schedule_step())
  return train_step

def train(steps: int = getenv("STEPS", 300), bs: int = getenv("BS", 128), lr: float = getenv("LR", 0.002), log=print) -> float:
  X_train, Y_train, X_test, Y_test = load_data()
  Tensor.manual_seed(getenv("SEED", 42))
  model = Model(X_train.shape[-1])
  opt = nn.optim.Adam(get_parameters(model), lr=lr)

  train_step = make_train_step(model, opt)

  @TinyJit
  def test_acc(x: Tensor, y: Tensor) -> Tensor: return (model(x).argmax(axis=1) == y).mean() * 100

  acc, st = float("nan"), time.perf_counter()
  for i in range(steps):
    samples = Tensor.randint(bs, high=X_train.shape[0])
    loss = train_step(X_train[samples].contiguous(), Y_train[samples].contiguous())
    if i % 25 == 24 or i == steps - 1: acc = test_acc(X_test, Y_test).item()
    if i % 5 == 4 or i == steps - 1:
      log(f"\rstep {i + 1:4d}/{steps}  loss: {loss.item():6.3f}  test_accuracy: {acc:5.2f}%  ({(i + 1) / (time.perf_counter() - st):5.1f} steps/s, "
          f"{GlobalCounters.kernel_count} kernels)", end="" if sys.stdout.isatty() else "\n")
  log("")
  return acc

if __name__ == "__main__":
  acc = train()
  target = getenv("TARGET_ACC", 95.0)
  print(f"test accuracy {acc:.2f}% {'>=' if acc >= target else '<'} {target}%")
  if acc < target: sys.exit(1)
