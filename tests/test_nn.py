# nn layers against torch.nn with the same weights: forward values and the gradients of weights, biases and inputs.
# BatchNorm in train mode (batch statistics, running-stat updates over several calls) and eval mode; the ways to turn
# training on (Tensor.train(), Context(TRAINING=1)); dropout, sequential, randint.
# Uses tinygrad's public API only.
import numpy as np
import pytest
from tinygrad import Tensor, nn, dtypes, Context

torch = pytest.importorskip("torch")

def rnd(*shape, lo=-2.0, hi=2.0, seed=0):
  return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)

def close(t, ref, rtol=1e-4, atol=1e-5, msg=""):
  ref = ref.detach().numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref)
  out = t.numpy()
  assert out.shape == ref.shape, f"{msg}: shape {out.shape} != {ref.shape}"
  np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol, err_msg=msg)

def copy_to_torch(tiny_layer, torch_layer, names=("weight", "bias")):
  """torch gets the tiny layer's weights; the tiny weights get requires_grad=True (an optimizer would set it: layers
  leave it unset, and unset means no .grad, as in tinygrad)"""
  for n in names:
    if getattr(tiny_layer, n, None) is not None: getattr(tiny_layer, n).requires_grad = True
  with torch.no_grad():
    for n in names:
      if getattr(tiny_layer, n, None) is not None: getattr(torch_layer, n).copy_(torch.tensor(getattr(tiny_layer, n).numpy()))

def backprop_both(out, tout, seed=1):
  """one random upstream gradient into both outputs"""
  up = np.random.default_rng(seed).uniform(0.5, 1.5, size=tuple(tout.shape)).astype(np.float32)
  (out * Tensor(up)).sum().backward()
  (tout * torch.tensor(up)).sum().backward()

# ================================================================ Linear

@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("xshape", [(5, 4), (2, 3, 4)], ids=str)
def test_linear(xshape, bias):
  Tensor.manual_seed(0)
  lin, tl = nn.Linear(4, 3, bias=bias), torch.nn.Linear(4, 3, bias=bias)
  assert lin.weight.shape == (3, 4) and (lin.bias.shape == (3,) if bias else lin.bias is None)
  copy_to_torch(lin, tl)
  a = rnd(*xshape)
  x, tx = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
  out, tout = lin(x), tl(tx)
  backprop_both(out, tout)
  close(out, tout, msg="forward")
  close(lin.weight.grad, tl.weight.grad, msg="weight grad")
  if bias: close(lin.bias.grad, tl.bias.grad, msg="bias grad")
  close(x.grad, tx.grad, msg="input grad")

def test_linear_init_is_bounded_like_torch():
  Tensor.manual_seed(1)
  lin = nn.Linear(64, 32)
  w, b = lin.weight.numpy(), lin.bias.numpy()
  bound = 1 / np.sqrt(64)
  assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
  assert w.std() > bound / 3  # not all zeros / a constant: a real uniform(-bound, bound) draw (std bound/sqrt(3))

# ================================================================ Conv2d

CONVS = [
  dict(cin=3, cout=4, k=3),
  dict(cin=2, cout=4, k=3, stride=2, padding=1),
  dict(cin=2, cout=3, k=3, dilation=2, padding=2),
  dict(cin=4, cout=6, k=3, groups=2, padding=1),
  dict(cin=4, cout=4, k=3, groups=4, stride=2),
  dict(cin=3, cout=2, k=(2, 3), stride=(2, 1), padding=(0, 1), bias=False),
]

@pytest.mark.parametrize("cfg", CONVS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_conv2d(cfg):
  cfg = dict(cfg)
  cin, cout, k = cfg.pop("cin"), cfg.pop("cout"), cfg.pop("k")
  Tensor.manual_seed(2)
  conv, tc = nn.Conv2d(cin, cout, k, **cfg), torch.nn.Conv2d(cin, cout, k, **cfg)
  kk = (k, k) if isinstance(k, int) else k
  assert conv.weight.shape == (cout, cin // cfg.get("groups", 1), *kk)
  copy_to_torch(conv, tc)
  a = rnd(2, cin, 7, 8, seed=3)
  x, tx = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
  out, tout = conv(x), tc(tx)
  backprop_both(out, tout)
  close(out, tout, msg="forward")
  close(conv.weight.grad, tc.weight.grad, rtol=1e-4, atol=1e-4, msg="weight grad")
  if cfg.get("bias", True): close(conv.bias.grad, tc.bias.grad, rtol=1e-4, atol=1e-4, msg="bias grad")
  close(x.grad, tx.grad, rtol=1e-4, atol=1e-4, msg="input grad")

# ================================================================ BatchNorm

def make_bn(c, two_d=True, **kw):
  bn, tbn = nn.BatchNorm(c, **kw), (torch.nn.BatchNorm2d if two_d else torch.nn.BatchNorm1d)(c, **kw)
  if kw.get("affine", True):
    bn.weight, bn.bias = Tensor(rnd(c, lo=0.5, hi=1.5, seed=4)), Tensor(rnd(c, seed=5))
    copy_to_torch(bn, tbn)
  return bn, tbn

@pytest.mark.parametrize("momentum", [0.1, 0.3])
def test_batchnorm2d_train_mode_matches_torch_over_several_calls(momentum):
  bn, tbn = make_bn(3, momentum=momentum)
  tbn.train()
  for step in range(3):
    a = rnd(4, 3, 5, 5, seed=10 + step) * (step + 1) + step  # different mean / spread on each call
    with Tensor.train():
      assert Tensor.training
      out = bn(Tensor(a))
      close(out, tbn(torch.tensor(a)), rtol=1e-4, atol=1e-4, msg=f"train forward, call {step}")
    close(bn.running_mean, tbn.running_mean, rtol=1e-5, atol=1e-6, msg=f"running_mean after call {step}")
    close(bn.running_var, tbn.running_var, rtol=1e-5, atol=1e-6, msg=f"running_var after call {step} (unbiased, like torch)")
  assert int(bn.num_batches_tracked.numpy().reshape(-1)[0]) == 3
  assert not Tensor.training

def test_batchnorm_train_mode_gradients():
  bn, tbn = make_bn(3)
  tbn.train()
  a = rnd(4, 3, 4, 4, seed=20)
  x, tx = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
  with Tensor.train():
    out = bn(x)
    tout = tbn(tx)
    backprop_both(out, tout)
  close(out, tout, rtol=1e-4, atol=1e-4, msg="forward")
  close(x.grad, tx.grad, rtol=1e-3, atol=1e-4, msg="input grad (through the batch statistics)")
  close(bn.weight.grad, tbn.weight.grad, rtol=1e-4, atol=1e-4, msg="weight grad")
  close(bn.bias.grad, tbn.bias.grad, rtol=1e-4, atol=1e-4, msg="bias grad")
  assert bn.running_mean.grad is None and bn.running_var.grad is None

def test_batchnorm_eval_mode_uses_running_stats():
  bn, tbn = make_bn(3)
  tbn.train()
  for step in range(2):
    a = rnd(4, 3, 3, 3, seed=30 + step) + step
    with Context(TRAINING=1): bn(Tensor(a)).realize()
    tbn(torch.tensor(a))
  tbn.eval()
  b = rnd(2, 3, 3, 3, seed=40) * 3
  assert not Tensor.training
  before = bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()
  close(bn(Tensor(b)), tbn(torch.tensor(b)), rtol=1e-4, atol=1e-4, msg="eval forward")
  # eval mode uses, and does not update, the running statistics
  np.testing.assert_array_equal(bn.running_mean.numpy(), before[0])
  np.testing.assert_array_equal(bn.running_var.numpy(), before[1])
  # and it differs from what batch statistics would give (the test would not notice otherwise)
  with Tensor.train(): batch_out = bn(Tensor(b)).numpy()
  assert not np.allclose(batch_out, tbn(torch.tensor(b)).detach().numpy(), atol=1e-2)

def test_two_batchnorms_of_the_same_size_get_their_own_grads():
  (bn1, tbn1), (bn2, tbn2) = (nn.BatchNorm(2), torch.nn.BatchNorm2d(2)), (nn.BatchNorm(2), torch.nn.BatchNorm2d(2))
  for b in (bn1, bn2): b.weight.requires_grad = b.bias.requires_grad = True  # as an optimizer would set them
  a = rnd(3, 2, 2, 2, seed=42)
  with Tensor.train():
    out = bn1(Tensor(a)) + bn2(Tensor(a) * 2).square()
    out.sum().backward()
  (tbn1(torch.tensor(a)) + tbn2(torch.tensor(a) * 2).square()).sum().backward()
  close(bn1.weight.grad, tbn1.weight.grad, atol=1e-4, msg="bn1 weight grad")
  close(bn2.weight.grad, tbn2.weight.grad, atol=1e-4, msg="bn2 weight grad")
  close(bn1.bias.grad, tbn1.bias.grad, atol=1e-4, msg="bn1 bias grad")
  close(bn2.bias.grad, tbn2.bias.grad, atol=1e-4, msg="bn2 bias grad")

def test_batchnorm_fresh_eval_is_identity_with_default_affine():
  bn = nn.BatchNorm(2)  # running mean 0, var 1, weight 1, bias 0
  a = rnd(3, 2, 2, 2, seed=41)
  close(bn(Tensor(a)), a / np.sqrt(1 + 1e-5), rtol=1e-6, atol=1e-6)

def test_batchnorm1d_on_2d_input():
  bn, tbn = make_bn(5, two_d=False)
  tbn.train()
  for step in range(2):
    a = rnd(8, 5, seed=50 + step) + step
    with Tensor.train(): close(bn(Tensor(a)), tbn(torch.tensor(a)), rtol=1e-4, atol=1e-4, msg="BatchNorm1d train forward")
  close(bn.running_mean, tbn.running_mean, rtol=1e-5, atol=1e-6)
  close(bn.running_var, tbn.running_var, rtol=1e-5, atol=1e-6)
  tbn.eval()
  b = rnd(3, 5, seed=52)
  close(bn(Tensor(b)), tbn(torch.tensor(b)), rtol=1e-4, atol=1e-5, msg="BatchNorm1d eval forward")

def test_batchnorm_without_affine_or_running_stats():
  bn, tbn = nn.BatchNorm(3, affine=False, track_running_stats=False), torch.nn.BatchNorm2d(3, affine=False, track_running_stats=False)
  assert bn.weight is None and bn.bias is None
  a = rnd(2, 3, 4, 4, seed=60) * 2 + 1
  tbn.eval()
  # without running statistics the batch's own statistics are used, in training and in eval alike
  close(bn(Tensor(a)), tbn(torch.tensor(a)), rtol=1e-4, atol=1e-4, msg="eval")
  with Tensor.train(): close(bn(Tensor(a)), tbn(torch.tensor(a)), rtol=1e-4, atol=1e-4, msg="train")

def test_training_flag_context_and_train_decorator():
  assert Tensor.training is False
  with Context(TRAINING=1): assert Tensor.training is True
  assert Tensor.training is False
  with Tensor.train():
    assert Tensor.training is True
    with Tensor.train(False): assert Tensor.training is False
    assert Tensor.training is True
  assert Tensor.training is False

  @Tensor.train()
  def f(): return Tensor.training
  assert f() is True and Tensor.training is False

def test_training_flag_restored_after_exception():
  with pytest.raises(ZeroDivisionError):
    with Tensor.train(): 1 / 0
  assert Tensor.training is False

# ================================================================ LayerNorm

@pytest.mark.parametrize("shape", [5, (4, 5)], ids=str)
def test_layernorm(shape):
  ln, tln = nn.LayerNorm(shape), torch.nn.LayerNorm(shape)
  n = (shape,) if isinstance(shape, int) else shape
  ln.weight, ln.bias = Tensor(rnd(*n, lo=0.5, hi=1.5, seed=70), requires_grad=True), Tensor(rnd(*n, seed=71), requires_grad=True)
  copy_to_torch(ln, tln)
  a = rnd(3, 4, 5, seed=72) * 3 + 1
  x, tx = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
  out, tout = ln(x), tln(tx)
  backprop_both(out, tout)
  close(out, tout, rtol=1e-4, atol=1e-4, msg="forward")
  close(x.grad, tx.grad, rtol=1e-3, atol=1e-4, msg="input grad")
  close(ln.weight.grad, tln.weight.grad, rtol=1e-4, atol=1e-4, msg="weight grad")
  close(ln.bias.grad, tln.bias.grad, rtol=1e-4, atol=1e-4, msg="bias grad")

def test_layernorm_without_affine_and_eps():
  ln, tln = nn.LayerNorm(6, eps=1e-3, elementwise_affine=False), torch.nn.LayerNorm(6, eps=1e-3, elementwise_affine=False)
  assert ln.weight is None
  a = rnd(2, 6, seed=73) * 0.05  # small variance: eps matters
  close(ln(Tensor(a)), tln(torch.tensor(a)), rtol=1e-4, atol=1e-4)

def test_layernorm_wrong_shape_raises():
  with pytest.raises((ValueError, AssertionError)):
    nn.LayerNorm(5)(Tensor(rnd(2, 4)))

# ================================================================ Embedding

@pytest.mark.parametrize("idx", [np.array([3, 0, 3, 9], np.int32), np.array([[1, 2, 2], [0, 9, 1]], np.int32)], ids=["1d", "2d"])
def test_embedding(idx):
  emb, temb = nn.Embedding(10, 4), torch.nn.Embedding(10, 4)
  copy_to_torch(emb, temb, names=("weight",))
  out, tout = emb(Tensor(idx)), temb(torch.tensor(idx).long())
  backprop_both(out, tout)
  close(out, tout, rtol=1e-6, atol=1e-7, msg="forward")
  close(emb.weight.grad, temb.weight.grad, rtol=1e-5, atol=1e-6, msg="weight grad (repeated ids add up, unused rows get 0)")

def test_embedding_scalar_index():
  emb = nn.Embedding(5, 3)
  out = emb(Tensor(2))
  assert out.shape == (3,)
  np.testing.assert_array_equal(out.numpy(), emb.weight.numpy()[2])

def test_embedding_init_not_constant():
  Tensor.manual_seed(3)
  w = nn.Embedding(20, 8).weight.numpy()
  assert w.shape == (20, 8) and w.std() > 0.05 and len(np.unique(w)) > 100

# ================================================================ dropout, sequential, randint

def test_dropout_only_in_training():
  x = Tensor.ones(100, 100)
  np.testing.assert_array_equal(x.dropout(0.5).numpy(), np.ones((100, 100), np.float32))  # not training: identity
  with Tensor.train():
    out = x.dropout(0.25).numpy()
    np.testing.assert_array_equal(x.dropout(0.0).numpy(), np.ones((100, 100), np.float32))
  kept = out != 0
  assert 0.70 < kept.mean() < 0.80, f"kept fraction {kept.mean()} for p=0.25"
  np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)  # survivors are scaled so the mean is unchanged

def test_dropout_gradient_uses_the_same_mask():
  x = Tensor.ones(50, 40, requires_grad=True)
  with Tensor.train():
    out = x.dropout(0.5)
    out.sum().backward()
  o, g = out.numpy(), x.grad.numpy()
  np.testing.assert_allclose(g, o, rtol=1e-6)  # d(sum(x*mask*2))/dx = mask*2 = out when x is ones
  assert 0.4 < (o != 0).mean() < 0.6

def test_sequential():
  Tensor.manual_seed(4)
  l1, l2 = nn.Linear(3, 4), nn.Linear(4, 2)
  x = Tensor(rnd(5, 3, seed=80))
  np.testing.assert_allclose(x.sequential([l1, Tensor.relu, l2]).numpy(), l2(l1(x).relu()).numpy(), rtol=1e-6)

def test_randint():
  Tensor.manual_seed(5)
  r = Tensor.randint(2000, low=3, high=9)
  v = r.numpy()
  assert r.shape == (2000,) and dtypes.is_int(r.dtype)
  assert v.min() == 3 and v.max() == 8  # high is exclusive, every value shows up in 2000 draws
  assert set(np.unique(v)) == set(range(3, 9))
  Tensor.manual_seed(5)
  np.testing.assert_array_equal(Tensor.randint(2000, low=3, high=9).numpy(), v)  # reproducible from the seed
  assert Tensor.randint(2, 3, high=5).shape == (2, 3)
