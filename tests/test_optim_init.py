"""An optimizer's construction: the parameters' initial values and the optimizer's own state (moments, momentum,
step counters, lr) are computed by one run of their kernels (one compile), each state tensor in a buffer of its own,
the weights the very numbers the seeded draws give on their own; traced, the schedules are the ones the trace always
showed."""
import numpy as np
import pytest
from tinygrad import Tensor, nn
from tinygrad.nn.optim import SGD, Adam, LAMB
import tinygrad.tensor as tensor_module
import tinygrad.nn.optim as optim_module

@pytest.fixture
def schedules(monkeypatch) -> list[int]:
  """The kernel count of every schedule run from now on."""
  seen: list[int] = []
  real = tensor_module.run_schedule
  def run(items): seen.append(sum(it.kind == "kernel" for it in items)); real(items)
  monkeypatch.setattr(tensor_module, "run_schedule", run)
  monkeypatch.setattr(optim_module, "run_schedule", run)
  return seen

def model():
  Tensor.manual_seed(7)
  return [nn.Linear(5, 3), nn.Linear(3, 2)]

def params(m) -> list[Tensor]: return [t for layer in m for t in (layer.weight, layer.bias)]

@pytest.mark.parametrize("make", [lambda p: Adam(p, lr=0.01), lambda p: LAMB(p, lr=0.01), lambda p: SGD(p, lr=0.1, momentum=0.9)])
def test_the_weights_and_the_state_realize_in_one_schedule(make, schedules):
  m = model()
  opt = make(params(m))
  assert len(schedules) == 1 and schedules[0] >= 4  # the four draws and the state's fills: one schedule
  state = [opt.b1_t, opt.b2_t, *opt.m, *opt.v] if hasattr(opt, "m") else opt.b
  assert all(t.uop.op is not tensor_module.Ops.ASSIGN for t in state)  # realized, nothing pending
  bufs = [t.uop.base for t in state + [opt.lr]]
  assert all(b.op is tensor_module.Ops.BUFFER for b in bufs) and len(set(bufs)) == len(bufs)  # each its own memory
  for t, p in zip(opt.m if hasattr(opt, "m") else opt.b, opt.params): np.testing.assert_array_equal(t.numpy(), np.zeros(p.shape, np.float32))
  if hasattr(opt, "m"): assert opt.b1_t.tolist() == [1.0] and opt.b2_t.tolist() == [1.0]
  assert opt.lr.numpy().tolist() == pytest.approx([0.01 if hasattr(opt, "m") else 0.1])

def test_the_weights_are_the_seeded_draws():
  """The same seed gives the same weights whether an optimizer realizes them or they are read on their own."""
  alone = [t.numpy() for t in params(model())]
  with_opt = params(model())
  Adam(with_opt)
  for a, b in zip(alone, with_opt): np.testing.assert_array_equal(a, b.numpy())

def test_each_state_tensor_has_its_own_buffer():
  """Moments of the same shape, and the two step counters, are separate memory: writing one leaves the others."""
  p = [Tensor.ones(4, 3, requires_grad=True), Tensor.ones(4, 3, requires_grad=True)]
  opt = Adam(p)
  opt.m[0].assign(Tensor.full((4, 3), 2.0)).realize()
  opt.b1_t.assign(Tensor([0.5])).realize()
  assert opt.m[0].numpy().tolist() == [[2.0] * 3] * 4
  assert all(t.numpy().tolist() == [[0.0] * 3] * 4 for t in (opt.m[1], opt.v[0], opt.v[1]))
  assert opt.b1_t.tolist() == [0.5] and opt.b2_t.tolist() == [1.0]

def test_traced_the_state_realizes_in_schedules_of_its_own(schedules):
  """Under a trace (VIZ/PROFILE) every state tensor is still its own schedule, as the trace has always shown them."""
  from tinygrad import tracing
  class Quiet:  # a tracer that records nothing: only whether one is installed matters here
    capture_rewrites = False
    def __getattr__(self, name): return lambda *a, **k: -1
  tracing.tracer = Quiet()  # type: ignore[assignment]
  try: opt = Adam(params(model()))
  finally: tracing.tracer = None
  assert len(schedules) == 2 + 2 + 2 * len(opt.params)  # weights, lr, two counters, two moments per parameter
  assert all(t.numpy().tolist() == np.zeros(t.shape).tolist() for t in opt.m + opt.v)
