# examples/beautiful_digits.py trains: its CNN (Conv2d, ReLU, BatchNorm, max_pool2d, Linear) with Adam under TinyJit
# on scikit-learn's 8x8 digits, a few steps only; the loss falls and the test accuracy leaves chance behind.
import importlib.util, pathlib, re
import numpy as np
import pytest
from tinygrad import Tensor, nn
from tinygrad.nn.state import get_parameters

pytest.importorskip("sklearn")
EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "beautiful_digits.py"

@pytest.fixture(scope="module")
def bd():
  spec = importlib.util.spec_from_file_location("beautiful_digits", EXAMPLE)
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)
  return mod

@pytest.fixture(scope="module")
def data(bd): return bd.load_data()

def test_load_data_shapes(data):
  X_train, Y_train, X_test, Y_test = data
  assert X_train.shape[1:] == (1, 8, 8) and X_test.shape[1:] == (1, 8, 8)
  assert X_train.shape[0] == Y_train.shape[0] and X_test.shape[0] == Y_test.shape[0]
  assert X_train.shape[0] + X_test.shape[0] == 1797  # every sklearn digit, split in two
  x, y = X_train.numpy(), Y_train.numpy()
  assert -0.51 < x.min() and x.max() < 0.51  # scaled to about [-0.5, 0.5]
  assert sorted(np.unique(y)) == list(range(10))

def test_model_trains_and_loss_falls(bd, data):
  X_train, Y_train, X_test, Y_test = data
  Tensor.manual_seed(0)
  model = bd.Model(X_train.shape[-1])
  params = get_parameters(model)
  before = [p.numpy().copy() for p in params]
  opt = nn.optim.Adam(params, lr=0.003)

  train_step = bd.make_train_step(model, opt)

  def accuracy() -> float: return float((model(X_test).argmax(axis=1) == Y_test).mean().item())

  acc0 = accuracy()
  losses = []
  for _ in range(25):
    samples = Tensor.randint(32, high=X_train.shape[0])
    losses.append(train_step(X_train[samples].contiguous(), Y_train[samples].contiguous()).item())
  assert all(np.isfinite(losses)), losses
  assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:3]), f"the loss did not fall: {np.round(losses, 3)}"
  acc = accuracy()
  assert acc > 0.5 and acc > acc0 + 0.2, f"test accuracy {acc:.3f} after 25 steps (before training {acc0:.3f})"
  changed = [not np.allclose(a, p.numpy()) for a, p in zip(before, params)]
  # every weight and bias trained (BatchNorm's num_batches_tracked and running stats change too)
  assert all(changed), [i for i, c in enumerate(changed) if not c]

def test_train_function_runs_and_reports(bd):
  lines = []
  acc = bd.train(steps=5, bs=16, lr=0.003, log=lambda *a, **kw: lines.append(" ".join(map(str, a))))
  assert isinstance(acc, float) and 0.0 <= acc <= 100.0
  reported = [re.search(r"loss:\s*([\d.]+).*test_accuracy:\s*([\d.]+)%", ln) for ln in lines]
  reported = [m for m in reported if m]
  assert reported, lines
  loss, shown_acc = float(reported[-1].group(1)), float(reported[-1].group(2))
  assert np.isfinite(loss) and loss > 0
  assert abs(shown_acc - acc) < 0.01
