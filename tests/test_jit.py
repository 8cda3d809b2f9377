# TinyJit: the first two calls run the Python function (the second one captures the kernels), later calls replay
# the kernels on the new inputs without running Python; replays compute what the function computes; a call with a
# different shape or dtype is refused with an error naming the input; JIT=0 turns it off; a jitted training step
# keeps training the same parameters. GlobalCounters counts the replayed kernels.
import os, subprocess, sys, pathlib
import numpy as np
import pytest
from tinygrad import Tensor, TinyJit, GlobalCounters, nn, dtypes
from tinygrad.nn.state import get_parameters, get_state_dict, load_state_dict

ROOT = pathlib.Path(__file__).resolve().parents[1]

def rnd(*shape, seed=0, lo=-1.0, hi=1.0):
  return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)

def f(x: Tensor, y: Tensor) -> Tensor: return ((x @ y).relu() + x.sum(1, keepdim=True)).exp2() * 0.5

def test_python_runs_twice_then_replays():
  calls = []
  @TinyJit
  def g(x: Tensor, y: Tensor) -> Tensor:
    calls.append(1)
    return f(x, y)
  for i in range(6):
    g(Tensor(rnd(3, 4, seed=i)), Tensor(rnd(4, 5, seed=10 + i)))
    assert len(calls) == min(i + 1, 2), f"after call {i + 1} the function ran {len(calls)} times"

def test_replay_matches_unjitted_on_new_inputs():
  g = TinyJit(f)
  for i in range(5):
    a, b = rnd(3, 4, seed=i), rnd(4, 5, seed=20 + i)
    out = g(Tensor(a), Tensor(b)).numpy()
    np.testing.assert_allclose(out, f(Tensor(a), Tensor(b)).numpy(), rtol=1e-6, err_msg=f"call {i + 1}")
    ref = np.exp2(np.maximum(a @ b, 0) + a.sum(1, keepdims=True)) * 0.5
    np.testing.assert_allclose(out, ref, rtol=1e-5, err_msg=f"call {i + 1} vs numpy")

def test_replay_with_lazy_and_noncontiguous_inputs():
  g = TinyJit(lambda x: (x * 2 + 1).sum(0))
  for i in range(4):
    a = rnd(5, 3, seed=30 + i)
    x = Tensor(a.T.copy()).T if i % 2 else Tensor(a) + 0  # a permuted view, or a lazy computation
    np.testing.assert_allclose(g(x).numpy(), (a * 2 + 1).sum(0), rtol=1e-6, err_msg=f"call {i + 1}")

def test_kwargs_and_tuple_outputs():
  @TinyJit
  def g(x: Tensor, *, scale: Tensor):
    return x * scale, (x - scale).sum()
  for i in range(4):
    a, s = rnd(2, 3, seed=40 + i), rnd(3, seed=50 + i)
    m, t = g(Tensor(a), scale=Tensor(s))
    np.testing.assert_allclose(m.numpy(), a * s, rtol=1e-6)
    np.testing.assert_allclose(t.numpy(), (a - s).sum(), rtol=1e-5)

def test_method_decorated():
  class M:
    def __init__(self): self.w, self.calls = Tensor(rnd(3, 2, seed=60)), 0
    @TinyJit
    def __call__(self, x: Tensor) -> Tensor:
      self.calls += 1
      return (x @ self.w).realize()
  m = M()
  for i in range(4):
    a = rnd(4, 3, seed=61 + i)
    np.testing.assert_allclose(m(Tensor(a)).numpy(), a @ m.w.numpy(), rtol=1e-5, atol=1e-6)
  assert m.calls == 2

@pytest.mark.parametrize("bad,which", [
  (lambda: (Tensor(rnd(3, 4)), Tensor(rnd(4, 6))), 1),                     # shape of the second input
  (lambda: (Tensor(rnd(2, 4)), Tensor(rnd(4, 5))), 0),                     # shape of the first input
  (lambda: (Tensor(rnd(3, 4)), Tensor(rnd(4, 5)).cast(dtypes.float16)), 1),  # dtype
], ids=["shape1", "shape0", "dtype"])
def test_different_shape_or_dtype_raises_naming_the_input(bad, which):
  g = TinyJit(f)
  for i in range(3): g(Tensor(rnd(3, 4, seed=i)), Tensor(rnd(4, 5, seed=i)))
  with pytest.raises(RuntimeError, match=f"input {which}") as e:
    g(*bad())
  args = bad()
  msg = str(e.value)
  assert str(args[which].shape) in msg or str(args[which].dtype) in msg or args[which].dtype.name in msg, msg
  # the jit still works with the captured signature afterwards
  a, b = rnd(3, 4, seed=9), rnd(4, 5, seed=9)
  np.testing.assert_allclose(g(Tensor(a), Tensor(b)).numpy(), f(Tensor(a), Tensor(b)).numpy(), rtol=1e-6)

def test_same_tensor_for_two_parameters_is_refused_naming_both():
  # as tinygrad: a replay could not tell the two apart (the kernels were captured reading one buffer)
  from tinygrad.engine.jit import JitError
  h = TinyJit(lambda x, y: (x * y + y).realize())
  x = Tensor([1.0, 2.0])
  with pytest.raises(JitError, match="inputs 0 and 1"): h(x, x)
  with pytest.raises(JitError, match="inputs 0 and 1"): h(x, x.reshape(2))  # a view of the same buffer too
  for i in range(4):  # a clone is its own buffer: fine
    x = Tensor([float(i), 2.0])
    np.testing.assert_allclose(h(x, x.clone()).numpy(), [i * i + i, 6.0])

def test_inputs_sharing_a_draw_are_one_schedule_and_draw_once(monkeypatch):
  # a batch's X[samples] and Y[samples]: realized together, one schedule (one compile wait), the draw computed once
  import tinygrad.tensor as T
  kernels: list[int] = []
  real = T.run_schedule
  monkeypatch.setattr(T, "run_schedule", lambda items: (kernels.append(sum(it.kind == "kernel" for it in items)), real(items))[1])
  f = TinyJit(lambda x, y: (x.sum(1) * y).realize())
  xs, ys = np.arange(40, dtype=np.float32).reshape(10, 4), np.arange(10, dtype=np.float32) * 3
  X, Y = Tensor(xs).realize(), Tensor(ys).realize()
  Tensor.manual_seed(3)
  for _ in range(4):
    s = Tensor.randint(6, high=10)
    kernels.clear()
    x, y = X[s].contiguous(), Y[s].contiguous()
    out = f(x, y).numpy()
    ran = list(kernels)  # (s.numpy() below is a schedule of its own)
    idx = s.numpy()
    np.testing.assert_equal(out, xs[idx].sum(1) * ys[idx])
    assert ran[0] == 4, ran  # the draw's two kernels and the two gathers, in the first schedule
    # nothing left to draw or gather for either input: what follows is the function's own kernel (the first call and the
    # capture) and, at the capture, the inputs' realizes of nothing (they run the pending assigns first)
    assert all(k in (0, 1) for k in ran[1:]), ran

def test_input_on_python_device():
  k = TinyJit(lambda x: (x.exp() * 2).realize())
  for i in range(4):
    out = k(Tensor([float(i), -1.0], device="PYTHON"))
    assert out.device == "PYTHON"
    np.testing.assert_allclose(out.numpy(), 2 * np.exp([float(i), -1.0]), rtol=1e-6)

def test_kernel_count_per_replay_equals_captured():
  g = TinyJit(f)
  counts = []
  for i in range(5):
    x, y = Tensor(rnd(3, 4, seed=i)).realize(), Tensor(rnd(4, 5, seed=i)).realize()  # inputs ready: only g's kernels are counted
    before = GlobalCounters.kernel_count
    g(x, y)
    counts.append(GlobalCounters.kernel_count - before)
  assert counts[1] > 0, counts
  assert counts[2:] == [counts[1]] * 3, f"kernels per call {counts}: replays should run exactly the captured kernels"

def test_replays_under_a_tracer_time_each_kernel_and_match_the_direct_replay():
  """Without a tracer the CPU replay calls the compiled kernels directly; with one (PROFILE/VIZ) every replayed kernel
  goes through exec_kernel and gets its span. Both compute the same, and count the same kernels."""
  from tinygrad import tracing
  from profiler.events import Span, from_json
  from profiler.recorder import Recorder
  g = TinyJit(f)
  xs = [(Tensor(rnd(3, 4, seed=i)).realize(), Tensor(rnd(4, 5, seed=i)).realize()) for i in range(6)]
  outs, counts, got = [], [], []
  for i, (x, y) in enumerate(xs):
    before = GlobalCounters.kernel_count
    if i == 4: tracing.tracer = rec = Recorder("profile", sinks=[got.extend])
    try: outs.append(g(x, y).numpy())
    finally:
      if i == 4: tracing.tracer = None; rec.close()
    counts.append(GlobalCounters.kernel_count - before)
  for (x, y), out in zip(xs, outs): np.testing.assert_allclose(out, f(x, y).numpy(), rtol=1e-5)
  assert counts[3] == counts[4] == counts[5] == len([c for c in g.captured.items if c[0] is not None])
  spans = [e for e in map(from_json, got) if isinstance(e, Span) and e.cat == "kernel"]
  assert sorted(s.name for s in spans) == sorted(p.name for p, _, _ in g.captured.items if p is not None)

def test_global_counters_reset_and_count():
  GlobalCounters.reset()
  assert GlobalCounters.kernel_count == 0 and GlobalCounters.global_ops == 0 and GlobalCounters.global_mem == 0
  a = Tensor(rnd(16, 16)).realize()
  GlobalCounters.reset()
  (a @ a).realize()
  assert GlobalCounters.kernel_count >= 1
  assert GlobalCounters.global_ops >= 2 * 16 * 16 * 16 * 0.5  # a matmul's flops are counted (about 2*n^3)
  assert GlobalCounters.global_mem >= 16 * 16 * 4  # at least the output's bytes
  assert GlobalCounters.time_sum_s > 0

def test_random_numbers_change_between_replays():
  g = TinyJit(lambda x: x + Tensor.rand(4, 4))
  z = Tensor.zeros(4, 4).contiguous().realize()
  outs = [g(z).numpy().copy() for _ in range(5)]
  for o in outs: assert 0 <= o.min() and o.max() < 1
  for i in range(1, 5): assert not np.array_equal(outs[i], outs[i - 1]), f"replay {i} drew the same numbers as the call before"

def test_manual_seed_reproducible_after_jit_replays():
  Tensor.manual_seed(123)
  first = Tensor.rand(8).numpy()
  g = TinyJit(lambda x: (x * 2).realize())
  for i in range(4): g(Tensor([float(i)]))
  Tensor.manual_seed(123)
  np.testing.assert_array_equal(Tensor.rand(8).numpy(), first)

def test_jit_zero_disables_capture():
  code = ("from tinygrad import Tensor, TinyJit\n"
          "calls = []\n"
          "@TinyJit\n"
          "def g(x):\n  calls.append(1)\n  return (x * 2).realize()\n"
          "for i in range(5): assert g(Tensor([float(i)])).item() == 2.0 * i\n"
          "print(len(calls))\n")
  env = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG")}
  for jit, want in (("0", "5"), ("1", "2")):
    res = subprocess.run([sys.executable, "-c", code], env=env | {"JIT": jit}, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == want, f"JIT={jit}: the function ran {res.stdout.strip()} times in 5 calls"

class MLP:
  def __init__(self):
    self.l1, self.l2 = nn.Linear(6, 16), nn.Linear(16, 3)
  def __call__(self, x: Tensor) -> Tensor: return self.l2(self.l1(x).relu())

def _train(jit: bool, steps: int = 8):
  model = MLP()
  # fixed starting weights (from numpy, so both runs start alike whatever the random state)
  load_state_dict(model, {k: Tensor(rnd(*v.shape, seed=80 + i) * 0.5) for i, (k, v) in enumerate(get_state_dict(model).items())})
  init = [p.numpy().copy() for p in get_parameters(model)]
  opt = nn.optim.Adam(get_parameters(model), lr=0.05)
  def step(x: Tensor, y: Tensor) -> Tensor:
    with Tensor.train():
      opt.zero_grad()
      loss = model(x).sparse_categorical_crossentropy(y).backward()
      return loss.realize(*opt.schedule_step())
  fn = TinyJit(step) if jit else step
  X = rnd(32, 6, seed=70) * 2
  Y = (X[:, 0] > 0).astype(np.int32) + (X[:, 1] > 0.5).astype(np.int32)
  losses = [fn(Tensor(X), Tensor(Y)).item() for _ in range(steps)]
  return losses, init, [p.numpy().copy() for p in get_parameters(model)], model, fn

def test_jitted_adam_training_step_keeps_training_the_same_parameters():
  losses, init, final, model, fn = _train(jit=True)
  assert losses[-1] < losses[0] * 0.7, f"the loss did not fall: {losses}"
  assert all(b < a for a, b in zip(losses[2:], losses[3:])) or losses[-1] < min(losses[:3]), losses  # keeps falling in replays
  for i, (a, b) in enumerate(zip(init, final)): assert not np.allclose(a, b), f"parameter {i} did not change"
  # the replays trained the model's own tensors: the model computes the same loss outside the jit
  X = rnd(32, 6, seed=70) * 2
  Y = (X[:, 0] > 0).astype(np.int32) + (X[:, 1] > 0.5).astype(np.int32)
  after = model(Tensor(X)).sparse_categorical_crossentropy(Tensor(Y)).item()
  assert after < losses[-1], (after, losses[-1])
  # and the same steps without the jit give the same numbers
  ref_losses, ref_init, ref_final, _, _ = _train(jit=False)
  for a, b in zip(init, ref_init): np.testing.assert_array_equal(a, b)
  np.testing.assert_allclose(losses, ref_losses, rtol=1e-4, atol=1e-6)
  for i, (a, b) in enumerate(zip(final, ref_final)): np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=f"parameter {i}")

def test_jitted_step_updates_batchnorm_running_stats_like_torch():
  torch = pytest.importorskip("torch")
  # no bias before the BatchNorm: batch statistics cancel it, its gradient is float noise, and Adam would amplify that noise
  lin, bn = nn.Linear(4, 3, bias=False), nn.BatchNorm(3)
  tlin, tbn = torch.nn.Linear(4, 3, bias=False), torch.nn.BatchNorm1d(3)
  w = rnd(3, 4, seed=90)
  load_state_dict(lin, {"weight": Tensor(w)})
  with torch.no_grad(): tlin.weight.copy_(torch.tensor(w))
  params = get_parameters([lin, bn])
  opt = nn.optim.SGD(params, lr=0.1, momentum=0.9)
  topt = torch.optim.SGD(list(tlin.parameters()) + list(tbn.parameters()), lr=0.1, momentum=0.9)
  target = rnd(3, seed=92)

  @TinyJit
  def step(x: Tensor) -> Tensor:
    with Tensor.train():
      opt.zero_grad()
      loss = (bn(lin(x)) - Tensor(target)).square().mean().backward()
      return loss.realize(*opt.schedule_step())
  tbn.train()
  for i in range(5):
    a = rnd(8, 4, seed=93 + i) * (1 + i)
    loss = step(Tensor(a)).item()
    topt.zero_grad()
    tloss = (tbn(tlin(torch.tensor(a))) - torch.tensor(target)).square().mean()
    tloss.backward(); topt.step()
    np.testing.assert_allclose(loss, tloss.item(), rtol=1e-4, err_msg=f"loss at step {i}")
  assert int(bn.num_batches_tracked.numpy().reshape(-1)[0]) == 5, "the running statistics were not updated in every replay"
  np.testing.assert_allclose(bn.running_mean.numpy(), tbn.running_mean.numpy(), rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(bn.running_var.numpy(), tbn.running_var.numpy(), rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(lin.weight.numpy(), tlin.weight.detach().numpy(), rtol=1e-4, atol=1e-5)
