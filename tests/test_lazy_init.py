"""Lazy initialization, as tinygrad does it: a leaf built from constants that requires grad, and an optimizer's
parameters and state, get buffers of their own filled by the next realize (pending assigns), so their kernels compile
with the first step's. An assign after a pending one is written after it in the same schedule (a chain). Expected
values are numpy's (the same code on tinygrad 0.14 gives them too)."""
import numpy as np
from tinygrad import Tensor, TinyJit, nn
from tinygrad.uop.ops import Ops
import tinygrad.tensor as T

def counting(monkeypatch) -> list[int]:
  seen: list[int] = []
  real = T.run_schedule
  monkeypatch.setattr(T, "run_schedule", lambda items: (seen.append(sum(it.kind == "kernel" for it in items)), real(items))[1])
  return seen

def test_a_constant_leaf_that_requires_grad_is_filled_by_the_next_realize(monkeypatch):
  seen = counting(monkeypatch)
  a, b = Tensor.zeros(3, requires_grad=True), Tensor.zeros(3, requires_grad=True)
  assert seen == [] and a.uop.op is Ops.ASSIGN  # nothing compiled yet
  ((a * 2).sum() + (b * 3).sum()).backward()
  assert a.grad.tolist() == [2.0] * 3 and b.grad.tolist() == [3.0] * 3  # two leaves, two gradients (not merged)
  assert a.tolist() == [0.0] * 3 and b.tolist() == [0.0] * 3
  assert a.uop.base is not b.uop.base

def test_a_chain_of_assigns_runs_in_one_schedule_in_order(monkeypatch):
  t = Tensor.zeros(4).contiguous().realize()
  seen = counting(monkeypatch)
  t += 1
  y = t * 10  # built on the first write
  t *= 3
  z = t + 0  # built on the second
  Tensor.realize(t, y, z)
  assert len(seen) == 1
  np.testing.assert_equal(y.numpy(), [10] * 4)
  np.testing.assert_equal(t.numpy(), [3] * 4)
  np.testing.assert_equal(z.numpy(), [3] * 4)

def test_a_graph_on_the_first_write_of_a_chain_read_after_it_ran():
  t = Tensor.zeros(2).contiguous().realize()
  t += 1
  y = t * 2  # holds the first write
  t += 5
  t.realize()
  # the first write is not run again (it would overwrite t's buffer): y reads t's buffer, as after a realize between
  np.testing.assert_equal(y.numpy(), [12, 12])
  np.testing.assert_equal(t.numpy(), [6, 6])
  t += 1
  np.testing.assert_equal(t.numpy(), [7, 7])

def test_a_chain_through_a_moved_read():
  t = Tensor.arange(4).float().contiguous().realize()
  t += 1
  t.assign(t.flip(0) * 2)  # reads the first write at other places than it writes
  np.testing.assert_equal(t.numpy(), [8, 6, 4, 2])

def test_a_chain_repeated_comes_from_the_schedule_cache():
  from tinygrad.engine import schedule_cache
  t = Tensor.zeros(3).contiguous().realize()
  for i in range(3):
    hits = schedule_cache.stats["hits"]
    t += 1
    t *= 2
    t.realize()
    if i: assert schedule_cache.stats["hits"] == hits + 1
  np.testing.assert_equal(t.numpy(), [14] * 3)

def test_the_optimizer_fills_the_weights_with_the_first_jitted_step(monkeypatch):
  """The first call of a jitted step runs the function as it is: the weights' and the state's fills wait for its
  schedule (one compile for all of it), not for the inputs' realize; the capture replays no fill."""
  Tensor.manual_seed(5)
  lin = nn.Linear(4, 3)
  want = [lin.weight.numpy(), lin.bias.numpy()]  # the seeded draws (realized here: the reference)
  Tensor.manual_seed(5)
  lin = nn.Linear(4, 3)
  opt = nn.optim.Adam([lin.weight, lin.bias], lr=0.1)
  @TinyJit
  def step(x: Tensor) -> Tensor:
    with Tensor.train():
      opt.zero_grad()
      loss = lin(x).square().sum().backward()
      return loss.realize(*opt.schedule_step())
  seen = counting(monkeypatch)
  xs = np.arange(8, dtype=np.float32).reshape(2, 4) / 8
  losses = [step(Tensor(xs * (i + 1)).contiguous()).item() for i in range(4)]
  assert seen[0] == 0 and seen[1] > 6  # the input (a copy), then the fills with the step
  # the reference: the same updates by numpy's Adam on the same draws
  w, b = want
  m, v = [np.zeros_like(w), np.zeros_like(b)], [np.zeros_like(w), np.zeros_like(b)]
  for i in range(4):
    x = xs * (i + 1)
    out = x @ w.T + b
    np.testing.assert_allclose(losses[i], (out ** 2).sum(), rtol=1e-4)
    g = [(2 * out).T @ x, (2 * out).sum(0)]
    for k, p in enumerate((w, b)):
      m[k] = 0.9 * m[k] + 0.1 * g[k]
      v[k] = 0.999 * v[k] + 0.001 * g[k] ** 2
      p -= 0.1 * (m[k] / (1 - 0.9 ** (i + 1))) / (np.sqrt(v[k] / (1 - 0.999 ** (i + 1))) + 1e-8)
  np.testing.assert_allclose(lin.weight.numpy(), w, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(lin.bias.numpy(), b, rtol=1e-4, atol=1e-5)

def test_a_jit_input_reading_a_buffer_a_pending_assign_writes_sees_the_write():
  """The jit's first call realizes such an input with the pending assign, as every call did before (the input is a view
  of the written buffer): the call sees the write."""
  f = TinyJit(lambda x: (x + 0).realize())
  for i in range(3):
    t = Tensor([1.0, 2.0]).contiguous().realize()
    d = t.detach()
    t.assign(t * 10)
    np.testing.assert_equal(f(d).numpy(), [10.0, 20.0])
