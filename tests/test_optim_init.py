"""An optimizer's construction: the parameters' initial values and the optimizer's own state (moments, momentum,
step counters) get buffers of their own, filled lazily, as tinygrad initializes: by the first realize (the first
step's), in its schedule (one compile with the step's kernels), each state tensor in a buffer of its own, the weights
the very numbers the seeded draws give on their own, the step the same bits as with the weights realized first."""
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

MAKERS = [lambda p: Adam(p, lr=0.01), lambda p: LAMB(p, lr=0.01), lambda p: SGD(p, lr=0.1, momentum=0.9)]

def _step(m, opt, x: Tensor) -> None:
  with Tensor.train():
    opt.zero_grad()
    for layer in m: x = layer(x).relu()
    x.sum().backward()
    opt.step()

@pytest.mark.parametrize("make", MAKERS)
def test_nothing_runs_until_the_first_step_which_fills_everything_in_its_schedule(make, schedules):
  m = model()
  opt = make(params(m))
  assert sum(schedules) == 0  # construction compiles nothing (lr, a copy of host data, needs no kernel)
  state = [opt.b1_t, opt.b2_t, *opt.m, *opt.v] if hasattr(opt, "m") else opt.b
  assert all(t.uop.op is tensor_module.Ops.ASSIGN for t in state + opt.params)  # pending fills
  bufs = [t.uop.src[0].base for t in state + opt.params]
  assert len(set(bufs)) == len(bufs)  # each its own memory
  schedules.clear()
  _step(m, opt, Tensor(np.arange(10, dtype=np.float32).reshape(2, 5) / 10))
  assert len(schedules) == 1  # the draws, the state's fills and the step: one schedule, one compile
  assert all(tensor_module.is_contiguous_view(t.uop) for t in state + opt.params)

@pytest.mark.parametrize("make", MAKERS)
def test_the_first_step_is_the_same_bits_with_the_weights_realized_first(make):
  x = np.arange(10, dtype=np.float32).reshape(2, 5) / 10
  got = []
  for first in (False, True):
    m = model()
    if first: Tensor.realize_all(params(m))
    opt = make(params(m))
    for _ in range(2): _step(m, opt, Tensor(x))
    got.append([t.numpy() for t in params(m) + (opt.m + opt.v if hasattr(opt, "m") else opt.b)])
  for a, b in zip(*got): np.testing.assert_array_equal(a, b)

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

def test_batchnorm_weight_and_running_var_each_get_their_own_fill(schedules):
  """BatchNorm's weight and its running variance are both Tensor.ones(n): one hash-consed constant. Each buffer is filled
  by a kernel of its own computing it (reading no other buffer), never one copied from the other's buffer."""
  from tinygrad.nn.state import get_parameters
  bn = nn.BatchNorm(4)
  SGD(get_parameters(bn), lr=0.1)
  items = Tensor.realize_all([bn.running_var], run=False)  # the fills pending: the weight's, bias', running stats'
  kernels = [it for it in items if it.kind == "kernel"]
  assert len(kernels) == 5  # weight, bias, running mean and variance, the batch counter
  assert all({u for u in it.ast.toposort() if u.op is tensor_module.Ops.BUFFER} == set(it.outputs) for it in kernels)
  tensor_module.run_schedule(items)
  assert bn.weight.tolist() == [1.0] * 4 and bn.running_var.tolist() == [1.0] * 4 and bn.bias.tolist() == [0.0] * 4

def test_a_constant_target_beside_an_assign_of_the_same_constant():
  """Tensor.ones(3) realized in the schedule that fills a weight with the same constant: both have their value, in
  their own memory."""
  w = Tensor.ones(3, requires_grad=True)
  c = Tensor.ones(3)
  Tensor.realize(c)
  assert c.tolist() == [1.0] * 3 and w.tolist() == [1.0] * 3
  w.assign(w * 5).realize()
  assert c.tolist() == [1.0] * 3 and w.tolist() == [5.0] * 3

def test_traced_the_state_is_filled_lazily_too(schedules):
  """Under a trace (VIZ/PROFILE) the fills also wait for the first realize: the trace shows them in its schedule."""
  from tinygrad import tracing
  class Quiet:  # a tracer that records nothing: only whether one is installed matters here
    capture_rewrites = False
    def __getattr__(self, name): return lambda *a, **k: -1
  tracing.tracer = Quiet()  # type: ignore[assignment]
  try:
    opt = Adam(params(model()))
    assert sum(schedules) == 0
    assert all(t.numpy().tolist() == np.zeros(t.shape).tolist() for t in opt.m + opt.v)
  finally: tracing.tracer = None
