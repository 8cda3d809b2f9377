"""Semantics a tinygrad 0.14 user relies on without thinking about it: which tensors backward() gives a gradient,
that two tensors with one lazy graph are realized once (and an assign to one leaves the other alone), and that a
machine without a working C compiler says why it falls back to the slow PYTHON device."""
from __future__ import annotations
import os, subprocess, sys
import numpy as np
import pytest
import torch
from tinygrad import Tensor, nn, TinyJit
from tinygrad.helpers import GlobalCounters

def rnd(*shape, seed=0): return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

# ----- which tensors get a gradient

def test_tutorial_layers_get_gradients_without_an_optimizer():
  # tinygrad's first steps: build layers, run backward, look at a weight's gradient (no optimizer made)
  c1, l1 = nn.Conv2d(1, 2, 3), nn.Linear(8, 3)
  x = Tensor.rand(1, 1, 4, 4)
  assert c1.weight.requires_grad is None and x.requires_grad is None
  l1(c1(x).flatten(1)).sum().backward()
  for t in (c1.weight, c1.bias, l1.weight, l1.bias, x): assert t.grad is not None and t.grad.shape == t.shape
  # the same model in torch, same weights: the same gradients
  tc, tl = torch.nn.Conv2d(1, 2, 3), torch.nn.Linear(8, 3)
  with torch.no_grad():
    for mod, ours in ((tc, c1), (tl, l1)): mod.weight.copy_(torch.tensor(ours.weight.numpy())); mod.bias.copy_(torch.tensor(ours.bias.numpy()))
  tx = torch.tensor(x.numpy(), requires_grad=True)
  tl(tc(tx).flatten(1)).sum().backward()
  for ours, ref in ((c1.weight, tc.weight), (c1.bias, tc.bias), (l1.weight, tl.weight), (x, tx)):
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-5, atol=1e-6)

def test_requires_grad_false_and_ints_get_none_but_intermediates_do():
  w, frozen = Tensor(rnd(3, seed=1)), Tensor(rnd(3, seed=2), requires_grad=False)
  idx = Tensor([0, 2, 1])
  h = w * frozen  # an intermediate still alive when backward runs: tinygrad 0.14 fills its grad too
  (h * h).sum().backward()
  assert frozen.grad is None and idx.grad is None
  np.testing.assert_allclose(h.grad.numpy(), 2 * rnd(3, seed=1) * rnd(3, seed=2), rtol=1e-6)
  np.testing.assert_allclose(w.grad.numpy(), 2 * rnd(3, seed=1) * rnd(3, seed=2) ** 2, rtol=1e-5)

def test_detached_and_realized_before_use_are_cut_as_in_tinygrad():
  w = Tensor(rnd(3, seed=3))
  mid = (w * 3).realize()  # realized before the loss was built: its graph is a buffer, w is not in the loss's graph
  (mid * 2).sum().backward()
  assert w.grad is None
  np.testing.assert_allclose(mid.grad.numpy(), np.full(3, 2.0))
  v = Tensor(rnd(3, seed=4))
  (v.detach() * v).sum().backward()  # only the non-detached path counts
  np.testing.assert_allclose(v.grad.numpy(), rnd(3, seed=4), rtol=1e-6)

def test_same_shaped_norm_layers_keep_their_own_gradients():
  # ones/zeros inits are constants any same-shaped constant shares; two layers' parameters must not merge
  b1, b2 = nn.BatchNorm2d(4), nn.BatchNorm2d(4)
  ln1, ln2 = nn.LayerNorm(3), nn.LayerNorm(3)
  x = Tensor(rnd(2, 4, 3, 3, seed=5))
  with Tensor.train():
    (b1(x) * 2 + b2(x) * 3).sum().backward()
    (ln1(x) * 2 + ln2(x) * 5).sum().backward()
  np.testing.assert_allclose(b1.bias.grad.numpy(), np.full(4, 2 * 18.0))
  np.testing.assert_allclose(b2.bias.grad.numpy(), np.full(4, 3 * 18.0))
  np.testing.assert_allclose(ln1.bias.grad.numpy(), np.full(3, 2 * 24.0))
  np.testing.assert_allclose(ln2.bias.grad.numpy(), np.full(3, 5 * 24.0))

def test_full_with_buffer_true_makes_leaves_of_their_own():
  # tinygrad 0.14's full/zeros/ones materialize a buffer (buffer=True); ours default to a folding constant
  z1, z2 = Tensor.zeros(3, buffer=True), Tensor.zeros(3, buffer=True)
  assert z1.uop is not z2.uop and Tensor.zeros(3).uop is Tensor.zeros(3).uop
  (z1 * 2 + z2 * 3).sum().backward()
  np.testing.assert_allclose(z1.grad.numpy(), np.full(3, 2.0))
  np.testing.assert_allclose(z2.grad.numpy(), np.full(3, 3.0))
  np.testing.assert_allclose(Tensor.full((2, 2), 4.5, buffer=True).numpy(), np.full((2, 2), 4.5))
  np.testing.assert_allclose(z1.full_like(7, buffer=True).numpy(), np.full(3, 7.0))

class _MLP:
  def __init__(self): self.l1, self.l2 = nn.Linear(4, 8), nn.Linear(8, 3)
  def __call__(self, x: Tensor) -> Tensor: return self.l2(self.l1(x).relu())

def test_optimizer_training_still_matches_torch():
  Tensor.manual_seed(0)
  m = _MLP()
  tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
  with torch.no_grad():
    for t, o in zip((tm[0].weight, tm[0].bias, tm[2].weight, tm[2].bias), (m.l1.weight, m.l1.bias, m.l2.weight, m.l2.bias)): t.copy_(torch.tensor(o.numpy()))
  opt, topt = nn.optim.Adam(nn.state.get_parameters(m), lr=0.01), torch.optim.Adam(tm.parameters(), lr=0.01)
  X, Y = rnd(16, 4, seed=6), np.random.default_rng(7).integers(0, 3, 16).astype(np.int32)
  x = Tensor(X)  # a float input: it gets a gradient too (as in tinygrad), which must not disturb training
  with Tensor.train():
    for _ in range(5):
      opt.zero_grad(); m(x).sparse_categorical_crossentropy(Tensor(Y)).backward(); opt.step()
      topt.zero_grad(); torch.nn.functional.cross_entropy(tm(torch.tensor(X)), torch.tensor(Y, dtype=torch.long)).backward(); topt.step()
  np.testing.assert_allclose(m.l1.weight.numpy(), tm[0].weight.detach().numpy(), rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(m.l2.bias.numpy(), tm[2].bias.detach().numpy(), rtol=1e-4, atol=1e-5)

def test_jit_training_step_replays_with_the_new_gradient_rule():
  Tensor.manual_seed(1)
  m = _MLP()
  opt = nn.optim.SGD(nn.state.get_parameters(m), lr=0.1)
  x, y = Tensor(rnd(8, 4, seed=8)).realize(), Tensor([0, 1, 2, 0, 1, 2, 0, 1]).realize()
  @TinyJit
  def step(x: Tensor, y: Tensor) -> Tensor:
    with Tensor.train():
      opt.zero_grad(); loss = m(x).sparse_categorical_crossentropy(y); loss.backward(); opt.step()
    return loss.realize()
  losses = [step(x, y).item() for _ in range(6)]
  assert losses[-1] < losses[0] and all(np.isfinite(losses))

# ----- one lazy graph, realized once

def test_two_tensors_with_one_graph_realize_once():
  t = Tensor(rnd(5, seed=9)).realize()
  a, b = t * 4, t * 4
  assert a.uop is b.uop  # hash-consed: one graph
  GlobalCounters.reset()
  a.realize()
  assert GlobalCounters.kernel_count == 1 and a.uop is b.uop
  GlobalCounters.reset()
  np.testing.assert_allclose(b.numpy(), rnd(5, seed=9) * 4, rtol=1e-6)
  assert GlobalCounters.kernel_count == 0  # b was not computed again

def test_tinygrad_ramp_part_one_runs_as_written():
  # the checks of tinygrad's docs/ramp.py, part 1, in its own words
  from tinygrad import Device, dtypes
  t = Tensor([1, 2, 3, 4])
  assert t.device == Device.DEFAULT and t.dtype == dtypes.int and t.shape == (4,)
  t.realize()
  assert (t * 2).tolist() == [2, 4, 6, 8]
  t_times_4_try_1, t_times_4_try_2 = t * 4, t * 4
  assert t_times_4_try_1.uop is t_times_4_try_2.uop and t_times_4_try_1 is not t_times_4_try_2
  t_times_4_try_1.realize()
  assert t_times_4_try_1.uop is t_times_4_try_2.uop
  GlobalCounters.reset()
  assert t_times_4_try_2.tolist() == [4, 8, 12, 16] and GlobalCounters.kernel_count == 0  # only the copy out
  t_float = Tensor([3.0])
  t_log_grad, = t_float.log().sum().gradient(t_float)
  assert abs(t_log_grad.item() - 1 / 3) < 1e-6

def test_assign_to_one_of_them_leaves_the_other_alone():
  t = Tensor(rnd(4, seed=10)).realize()
  a, b, c = t * 2, t * 2, t * 2
  a.realize()
  a += 1
  b.assign(Tensor(np.zeros(4, np.float32)))
  np.testing.assert_allclose(a.numpy(), rnd(4, seed=10) * 2 + 1, rtol=1e-6)
  np.testing.assert_allclose(b.numpy(), np.zeros(4))
  np.testing.assert_allclose(c.numpy(), rnd(4, seed=10) * 2, rtol=1e-6)
  np.testing.assert_allclose((t * 2).numpy(), rnd(4, seed=10) * 2, rtol=1e-6)

def test_clone_is_a_copy_of_its_own():
  x = Tensor(rnd(3, seed=11)).realize()
  y = x.clone()
  y += 1
  np.testing.assert_allclose(x.numpy(), rnd(3, seed=11), rtol=1e-6)
  np.testing.assert_allclose(y.numpy(), rnd(3, seed=11) + 1, rtol=1e-6)
  assert x.clone(device="PYTHON").device == "PYTHON"

def test_optimizer_step_after_shared_realize_updates_only_the_parameter():
  t = Tensor(rnd(3, seed=12)).realize()
  w, same = t * 1, t * 1  # one graph: when the optimizer realizes w, `same` takes the same buffer
  w.requires_grad = True
  opt = nn.optim.SGD([w], lr=0.5)
  (w * 2).sum().backward()
  with Tensor.train(): opt.step()
  np.testing.assert_allclose(w.numpy(), rnd(3, seed=12) - 1.0, rtol=1e-6)
  np.testing.assert_allclose(same.numpy(), rnd(3, seed=12), rtol=1e-6)

# ----- no C compiler: PYTHON, with a note

def _default_device_in_subprocess(env_changes: dict[str, str]) -> subprocess.CompletedProcess:
  env = {**os.environ, **env_changes}
  env.pop("DEV", None)
  for k in ("CPU", "PYTHON", "CUDA"): env.pop(k, None)
  code = "from tinygrad import Tensor, Device; print(Device.DEFAULT); print((Tensor([1, 2]) + 1).tolist()); print(Device.DEFAULT)"
  return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)

def test_missing_compiler_falls_back_to_python_and_says_why_once():
  r = _default_device_in_subprocess({"CC": "/nonexistent/tinyviz-cc"})
  assert r.returncode == 0, r.stderr
  assert r.stdout.split() == ["PYTHON", "[2,", "3]", "PYTHON"]
  notes = [ln for ln in r.stderr.splitlines() if ln.startswith("tinyviz: the default device is PYTHON")]
  assert len(notes) == 1 and "/nonexistent/tinyviz-cc" in notes[0] and "190x" in notes[0]

def test_unwritable_kernel_cache_falls_back_and_says_why(tmp_path):
  blocker = tmp_path / "file"
  blocker.write_text("not a folder")
  r = _default_device_in_subprocess({"TINYVIZ_CACHE": str(blocker / "cache")})
  assert r.returncode == 0, r.stderr
  assert r.stdout.split()[0] == "PYTHON"
  assert r.stderr.count("tinyviz: the default device is PYTHON") == 1 and str(blocker) in r.stderr

def test_working_compiler_picks_cpu_silently():
  r = _default_device_in_subprocess({})
  assert r.returncode == 0 and r.stdout.split()[0] == "CPU", r.stderr
  assert "default device is PYTHON" not in r.stderr
