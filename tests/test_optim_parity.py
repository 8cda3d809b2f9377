# Optimizers as tinygrad 0.14 has them, checked against torch: Muon (Newton-Schulz orthogonalized momentum), plain SGD
# on parameters whose gradients read each other, the learning rate and state kept in float32 under a half default,
# and optimizer state moved to another device.
import numpy as np
import pytest
import torch
from tinygrad import Tensor, dtypes
from tinygrad.helpers import Context
from tinygrad.nn.optim import SGD, Adam, Muon, LAMB

rng = np.random.default_rng(7)
X, W = rng.standard_normal((1, 4)).astype(np.float32), rng.standard_normal((4, 4)).astype(np.float32)

def _run(tensor, opt, steps, **kw):
  x, w = (tensor(X.copy(), requires_grad=True), tensor(W.copy(), requires_grad=True)) if tensor is torch.tensor else (Tensor(X.copy()), Tensor(W.copy()))
  o = opt([x, w], **kw)
  for _ in range(steps):
    o.zero_grad()
    x.matmul(w).relu().log_softmax(1).sum().backward()
    o.step()
  return x.detach().numpy(), w.detach().numpy()

def _ns(g, steps, coef):
  tall = g.shape[0] > g.shape[1]
  x = (g.T if tall else g) / (np.linalg.norm(g) + 1e-7)
  for _ in range(steps):
    gram, term, acc = x @ x.T, x, coef[0] * x
    for c in coef[1:]: term = gram @ term; acc = acc + c * term
    x = acc
  return x.T if tall else x

def _muon_numpy(steps, lr, momentum=0.95, weight_decay=0.1, ns_steps=5, ns_coefficients=(3.4445, -4.775, 2.0315), nesterov=True):
  """Muon in float64, as torch.optim.Muon defines it (its momentum buffer is (1-momentum) times this one, a scale the
  normalization removes; both shapes here are wide, so no lr adjustment)."""
  ps = [X.astype(np.float64), W.astype(np.float64)]
  bufs = [np.zeros_like(p) for p in ps]
  for _ in range(steps):
    x, w = ps
    h = x @ w
    r = np.maximum(h, 0)
    e = np.exp(r - r.max(1, keepdims=True)); sm = e / e.sum(1, keepdims=True)
    gr = (1 - sm * r.shape[1]) * (h > 0)  # d/dr of sum(log_softmax(r)) = 1 - n*softmax, through relu
    grads = [gr @ w.T, x.T @ gr]
    for i, g in enumerate(grads):
      bufs[i] = momentum * bufs[i] + g
      u = g + momentum * bufs[i] if nesterov else bufs[i]
      ps[i] = ps[i] - lr * _ns(u, ns_steps, ns_coefficients) - lr * weight_decay * ps[i]
  return ps

@pytest.mark.parametrize("kw", [{}, {"weight_decay": 0.0}, {"nesterov": False}, {"momentum": 0.9, "ns_steps": 3, "ns_coefficients": (2.0, -1.5, 0.5)}])
def test_muon_matches_its_definition(kw):
  with Context(TRAINING=1):
    for ours, ref in zip(_run(Tensor, Muon, 5, lr=0.05, **kw), _muon_numpy(5, 0.05, **kw)):
      np.testing.assert_allclose(ours, ref, atol=1e-5)

def test_muon_matches_torch():
  with Context(TRAINING=1):
    for ours, ref in zip(_run(Tensor, Muon, 10, lr=0.001, weight_decay=0.01), _run(torch.tensor, torch.optim.Muon, 10, lr=0.001, weight_decay=0.01)):
      np.testing.assert_allclose(ours, ref, atol=2e-3)  # torch orthogonalizes in bfloat16 (tinygrad tests it at 3e-3)

def test_newton_schulz_against_numpy():
  a = rng.standard_normal((3, 5)).astype(np.float32)
  coef = (3.4445, -4.775, 2.0315)
  ref = a.astype(np.float64) / (np.linalg.norm(a) + 1e-7)
  for _ in range(5):
    g = ref @ ref.T
    ref = coef[0] * ref + coef[1] * g @ ref + coef[2] * g @ g @ ref
  np.testing.assert_allclose(Tensor(a).newton_schulz(5, coef).numpy(), ref, atol=1e-5)
  np.testing.assert_allclose(Tensor(a.T.copy()).newton_schulz(5, coef).numpy(), ref.T, atol=1e-5)  # tall: on the transpose
  with pytest.raises(ValueError, match="matrix"): Tensor([1.0, 2.0]).newton_schulz(1, coef)

@Tensor.train()
def test_plain_sgd_on_parameters_that_read_each_other():
  # x's gradient reads W and W's reads x: both in-place updates in one step used to make a schedule with no order
  for ours, ref in zip(_run(Tensor, SGD, 3, lr=0.1), _run(torch.tensor, torch.optim.SGD, 3, lr=0.1)):
    np.testing.assert_allclose(ours, ref, atol=1e-6)

def test_lr_and_state_stay_float32_under_a_half_default():
  with Context(DEFAULT_FLOAT="half", TRAINING=1):
    p = Tensor(X.copy())
    o = Adam([p], lr=1e10)
    assert o.lr.dtype == dtypes.float32 and o.m[0].dtype == o.v[0].dtype == o.b1_t.dtype == dtypes.float32
    p.sum().backward(); o.step()
  assert np.isfinite(p.numpy()).all()  # 1e10 as a half is inf: the update would be

@Tensor.train()
def test_lamb_state_on_another_device():
  t = Tensor(X.copy())
  opt = LAMB([t])
  for s in opt.m + opt.v + [opt.b1_t, opt.b2_t]: s.to_("CPU:1")
  ref = Tensor(X.copy()); ref_opt = LAMB([ref])
  for tt, o in ((t, opt), (ref, ref_opt)): tt.square().sum().backward(); o.step()
  assert t.device == "CPU" and opt.m[0].device == "CPU:1"
  np.testing.assert_allclose(t.numpy(), ref.numpy(), atol=1e-6)
