# Optimizers against torch.optim: the same parameters and gradients, several steps, parameters compared after each.
# zero_grad, step, schedule_step (as `loss.realize(*opt.schedule_step())`), and the error for a parameter without a grad.
# Uses tinygrad's public API only.
import numpy as np
import pytest
from tinygrad import Tensor, nn
from tinygrad.nn.optim import SGD, Adam, AdamW

torch = pytest.importorskip("torch")

@pytest.fixture(autouse=True)
def _training():  # an optimizer steps only in training mode, as in tinygrad 0.14 (test_step_outside_training_raises)
  with Tensor.train(): yield

def test_step_outside_training_raises():
  t = Tensor([1.0, 2.0])
  opt = Adam([t])
  t.sum().backward()
  with Tensor.train(False), pytest.raises(RuntimeError, match="training mode"): opt.step()
  opt.step()  # in training mode (the fixture's): it steps
  assert t.tolist() != [1.0, 2.0]

def rnd(*shape, lo=-1.0, hi=1.0, seed=0):
  return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)

SHAPES = [(3, 4), (4,), (2, 1, 3)]

OPTS = {
  "sgd": (lambda p: SGD(p, lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
  "sgd_momentum": (lambda p: SGD(p, lr=0.05, momentum=0.9), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9)),
  "sgd_nesterov": (lambda p: SGD(p, lr=0.05, momentum=0.8, nesterov=True), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True)),
  "sgd_weight_decay": (lambda p: SGD(p, lr=0.1, weight_decay=0.1), lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.1)),
  "sgd_all": (lambda p: SGD(p, lr=0.03, momentum=0.7, weight_decay=0.05, nesterov=True),
              lambda p: torch.optim.SGD(p, lr=0.03, momentum=0.7, weight_decay=0.05, nesterov=True)),
  "adam": (lambda p: Adam(p), lambda p: torch.optim.Adam(p)),
  "adam_custom": (lambda p: Adam(p, lr=0.01, b1=0.8, b2=0.99, eps=1e-6), lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.99), eps=1e-6)),
  "adamw": (lambda p: AdamW(p, lr=0.01), lambda p: torch.optim.AdamW(p, lr=0.01)),  # both default to weight_decay=0.01
  "adamw_wd": (lambda p: AdamW(p, lr=0.02, weight_decay=0.3), lambda p: torch.optim.AdamW(p, lr=0.02, weight_decay=0.3)),
}

def make_params(seed=0):
  init = [rnd(*s, seed=seed + i) for i, s in enumerate(SHAPES)]
  return [Tensor(a, requires_grad=True) for a in init], [torch.tensor(a, requires_grad=True) for a in init]

def assert_params_close(tp, pp, step, rtol=1e-5, atol=1e-6):
  for i, (t, p) in enumerate(zip(tp, pp)):
    np.testing.assert_allclose(t.numpy(), p.detach().numpy(), rtol=rtol, atol=atol, err_msg=f"param {i} after step {step}")

@pytest.mark.parametrize("name", list(OPTS))
def test_same_updates_as_torch_with_given_grads(name):
  """gradients set directly (the same numbers in both), so only the update rule is compared"""
  tiny_opt, torch_opt = OPTS[name]
  tp, pp = make_params()
  opt, topt = tiny_opt(tp), torch_opt(pp)
  start = [p.detach().numpy().copy() for p in pp]
  for step in range(5):
    opt.zero_grad(); topt.zero_grad()
    for i, (t, p) in enumerate(zip(tp, pp)):
      g = rnd(*p.shape, lo=-2, hi=2, seed=100 * step + i) * (1 + step)  # changing scale: adam's state matters
      t.grad, p.grad = Tensor(g), torch.tensor(g)
    opt.step(); topt.step()
    assert_params_close(tp, pp, step)
  assert not np.allclose(tp[0].numpy(), start[0]), "the parameters did not move"

@pytest.mark.parametrize("name", ["sgd_momentum", "sgd_all", "adam", "adamw_wd"])
def test_same_training_trajectory_as_torch(name):
  """a real loss: backward in each framework, then the step"""
  tiny_opt, torch_opt = OPTS[name]
  init = [rnd(3, 4, seed=10), rnd(4, seed=11), rnd(4, seed=12)]
  tp, pp = [Tensor(a, requires_grad=True) for a in init], [torch.tensor(a, requires_grad=True) for a in init]
  x, tx = Tensor(rnd(5, 3, seed=20)), torch.tensor(rnd(5, 3, seed=20))
  def tiny_loss(w, b, c): return ((x @ w + b).relu() * c).sum(1).square().mean() + (w * w).sum() * 0.1
  def torch_loss(w, b, c): return ((tx @ w + b).relu() * c).sum(1).square().mean() + (w * w).sum() * 0.1
  opt, topt = tiny_opt(tp), torch_opt(pp)
  losses = []
  for step in range(4):
    opt.zero_grad(); topt.zero_grad()
    loss, tloss = tiny_loss(*tp), torch_loss(*pp)
    loss.backward(); tloss.backward()
    losses.append(loss.item())  # before step(): the lazy loss reads the parameters' buffers, which step() updates in place
    opt.step(); topt.step()
    np.testing.assert_allclose(losses[-1], tloss.item(), rtol=1e-4, err_msg=f"loss at step {step}")
    assert_params_close(tp, pp, step, rtol=1e-4, atol=1e-5)
  assert losses[-1] < losses[0], f"the loss did not fall: {losses}"

def test_schedule_step_realized_with_the_loss():
  tp, pp = make_params(seed=30)
  opt, topt = Adam(tp, lr=0.05), torch.optim.Adam(pp, lr=0.05)
  for step in range(3):
    opt.zero_grad(); topt.zero_grad()
    loss = sum((t * t).sum() for t in tp)
    tloss = sum((p * p).sum() for p in pp)
    loss.backward(); tloss.backward()
    to_realize = opt.schedule_step()
    assert all(isinstance(t, Tensor) for t in to_realize)
    loss.realize(*to_realize)  # the tinygrad idiom: one schedule for the loss and the update
    topt.step()
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)  # the loss is the one before the update
    assert_params_close(tp, pp, step, atol=1e-5)

def test_schedule_step_is_lazy_until_realized():
  w = Tensor([1.0, 2.0], requires_grad=True)
  opt = SGD([w], lr=0.5)
  (w * w).sum().backward()
  pending = opt.schedule_step()
  Tensor.realize(*pending)
  np.testing.assert_allclose(w.numpy(), [0.0, 0.0])  # w - 0.5 * 2w

def test_zero_grad_clears_and_next_backward_starts_fresh():
  tp, _ = make_params(seed=40)
  opt = SGD(tp, lr=0.1)
  for _ in range(2): sum((t * 3).sum() for t in tp).backward()
  np.testing.assert_allclose(tp[0].grad.numpy(), np.full(SHAPES[0], 6.0))  # accumulated without zero_grad
  opt.zero_grad()
  assert all(t.grad is None for t in tp)
  sum((t * 3).sum() for t in tp).backward()
  np.testing.assert_allclose(tp[0].grad.numpy(), np.full(SHAPES[0], 3.0))

def test_step_without_grad_raises():
  a, b = Tensor([1.0, 2.0], requires_grad=True), Tensor([[3.0]], requires_grad=True)
  opt = Adam([a, b])
  (a * 2).sum().backward()  # b is not used: it has no grad
  with pytest.raises(RuntimeError, match="grad"):
    opt.step()
  with pytest.raises(RuntimeError, match="grad"):
    SGD([Tensor([1.0], requires_grad=True)]).step()

def test_optimizer_sets_requires_grad_and_skips_frozen():
  w = Tensor([1.0, 2.0])  # requires_grad unset: the optimizer turns it on, as in tinygrad
  frozen = Tensor([5.0, 6.0], requires_grad=False)
  opt = SGD([w, frozen], lr=0.1)
  assert w.requires_grad is True and frozen.requires_grad is False
  ((w * frozen).sum()).backward()
  assert frozen.grad is None
  opt.step()  # no error for the frozen tensor, and it is left alone
  np.testing.assert_allclose(w.numpy(), [1.0 - 0.5, 2.0 - 0.6], rtol=1e-6)
  np.testing.assert_array_equal(frozen.numpy(), [5.0, 6.0])

def test_update_is_in_place():
  # the parameter keeps being the same Tensor object (models and TinyJit hold on to it)
  lin = nn.Linear(3, 2)
  w_obj = lin.weight
  opt = Adam(nn.state.get_parameters(lin), lr=0.1)
  before = lin.weight.numpy().copy()
  lin(Tensor(rnd(4, 3))).sum().backward()
  opt.step()
  assert lin.weight is w_obj
  assert not np.allclose(lin.weight.numpy(), before)

def test_sgd_default_lr_and_adam_defaults_match_torch():
  # the defaults are the ones tinygrad users expect: SGD lr=0.001, Adam(lr=0.001, b1=0.9, b2=0.999, eps=1e-8)
  tp, pp = make_params(seed=50)
  for tiny, ref in ((SGD, lambda p: torch.optim.SGD(p, lr=0.001)), (Adam, torch.optim.Adam)):
    tp, pp = make_params(seed=50)
    opt, topt = tiny(tp), ref(pp)
    for step in range(2):
      for i, (t, p) in enumerate(zip(tp, pp)):
        g = rnd(*p.shape, seed=60 + i + step)
        t.grad, p.grad = Tensor(g), torch.tensor(g)
      opt.step(); topt.step()
    assert_params_close(tp, pp, 1)
