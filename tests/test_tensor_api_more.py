# The rest of tinygrad's Tensor / nn / optim API (sorting, scatter, einsum, interpolate, transposed convolution,
# attention, losses, activations, slice assignment, more layers and optimizers), checked against torch: forward
# values and, where tinygrad differentiates, gradients. Uses tinygrad's public API only.
import math
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tinygrad import Tensor, dtypes, nn, Variable

DEVICES = ["CPU", "PYTHON"]

@pytest.fixture(params=DEVICES)
def dev(request): return request.param

def rnd(*shape, lo=-2.0, hi=2.0, seed=0):
  return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)

def close(t: Tensor, ref, rtol=1e-5, atol=1e-5):
  ref = ref.detach().numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref)
  out = t.numpy()
  assert out.shape == ref.shape, f"shape {out.shape} != {ref.shape}"
  if np.issubdtype(ref.dtype, np.floating): np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)
  else: np.testing.assert_array_equal(out, ref)

def check_grad(fn, tfn, *arrays, rtol=1e-4, atol=1e-5, seed=1):
  """fn on tinygrad tensors and tfn on torch tensors agree in value and in the gradient of a weighted sum of outputs."""
  xs = [Tensor(a, requires_grad=True) for a in arrays]
  ts = [torch.tensor(a, requires_grad=True) for a in arrays]
  out, ref = fn(*xs), tfn(*ts)
  w = rnd(*ref.shape, seed=seed)
  (out * Tensor(w)).sum().backward()  # before out.numpy(): realizing out makes it a buffer with no graph behind it
  (ref * torch.tensor(w)).sum().backward()
  close(out, ref, rtol, atol)
  for x, t in zip(xs, ts):
    assert x.grad is not None
    close(x.grad, t.grad, rtol, atol)

# ================================================================ triangles, cumulative ops

@pytest.mark.parametrize("diagonal", [-2, -1, 0, 1, 3])
def test_tril_triu(diagonal):
  a = rnd(2, 4, 5)
  close(Tensor(a).tril(diagonal), torch.tensor(a).tril(diagonal))
  close(Tensor(a).triu(diagonal), torch.tensor(a).triu(diagonal))
  close(Tensor([[True, True], [True, True]]).tril(), torch.ones(2, 2, dtype=torch.bool).tril())

def test_tril_triu_grad_and_errors():
  check_grad(lambda x: x.tril(1), lambda x: x.tril(1), rnd(4, 4))
  check_grad(lambda x: x.triu(-1), lambda x: x.triu(-1), rnd(3, 5))
  with pytest.raises(ValueError): Tensor([1.0, 2.0]).tril()

@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumprod(axis):
  a = rnd(3, 4, lo=0.5, hi=1.5) * np.sign(rnd(3, 4, seed=2))  # no zeros: the product's gradient divides by x
  check_grad(lambda x: x.cumprod(axis), lambda x: x.cumprod(axis), a)
  close(Tensor([[1, 2, 3], [4, 5, 6]]).cumprod(1), torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32).cumprod(1).int())

def test_cummax(dev):
  a = np.array([[0, 3, -1, 3, 5, 2, 5], [9, 1, 9, 2, 10, 0, 1]], np.float32)
  v, i = Tensor(a, device=dev).cummax(1)
  tv, ti = torch.tensor(a).cummax(1)
  close(v, tv)
  close(i, ti.int())  # ties give the later index, as torch does
  v, i = Tensor(a).cummax(0)
  tv, ti = torch.tensor(a).cummax(0)
  close(v, tv); close(i, ti.int())
  v, i = Tensor([3, -2, 7, 7], dtype=dtypes.int32).cummax(0)
  assert v.tolist() == [3, 3, 7, 7] and i.tolist() == [0, 0, 2, 3]

# ================================================================ sort, argsort, topk

@pytest.mark.parametrize("dim,descending", [(-1, False), (-1, True), (0, False), (1, True)])
def test_sort(dim, descending):
  a = rnd(4, 6, 3)
  v, i = Tensor(a).sort(dim, descending)
  tv, ti = torch.tensor(a).sort(dim, descending=descending)
  close(v, tv); close(i, ti.int())
  assert i.dtype == dtypes.int32

def test_sort_is_stable_and_int():
  a = np.array([[3, 1, 3, 2, 1, 3], [0, 0, 0, 0, 0, 0]], np.int32)
  for desc in (False, True):
    v, i = Tensor(a).sort(-1, descending=desc)
    tv, ti = torch.sort(torch.tensor(a), dim=-1, descending=desc, stable=True)
    close(v, tv); close(i, ti.int())
  close(Tensor(a).argsort(-1), torch.argsort(torch.tensor(a), dim=-1, stable=True).int())

def test_sort_grad():
  check_grad(lambda x: x.sort(1)[0], lambda x: x.sort(1)[0], rnd(3, 5))
  check_grad(lambda x: x.topk(2, 0)[0], lambda x: x.topk(2, 0)[0], rnd(5, 3))

@pytest.mark.parametrize("k,dim,largest", [(1, -1, True), (3, -1, False), (2, 0, True), (5, 1, True)])
def test_topk(dev, k, dim, largest):
  a = rnd(4, 5, seed=3)
  v, i = Tensor(a, device=dev).topk(k, dim, largest)
  tv, ti = torch.tensor(a).topk(k, dim, largest)
  close(v, tv); close(i, ti.int())

def test_topk_errors():
  with pytest.raises(ValueError): Tensor.ones(3, 4).topk(5)
  with pytest.raises(NotImplementedError): Tensor.ones(3, 4).topk(2, sorted_=False)

# ================================================================ scatter, scatter_reduce

IDX = np.array([[0, 1, 2, 0], [2, 0, 1, 1]], np.int64)

@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
def test_scatter(dev):
  src = rnd(2, 4)
  close(Tensor.zeros(3, 5, device=dev).scatter(0, Tensor(IDX, device=dev), Tensor(src, device=dev)),
        torch.zeros(3, 5).scatter(0, torch.tensor(IDX), torch.tensor(src)))
  idx1 = np.array([[4, 0], [1, 2], [3, 3]], np.int64)  # dim 1, index smaller than self and src
  close(Tensor(rnd(3, 5)).scatter(1, Tensor(idx1), Tensor(src.T[:3].copy())),
        torch.tensor(rnd(3, 5)).scatter(1, torch.tensor(idx1), torch.tensor(src.T[:3].copy())))
  close(Tensor.zeros(3, 5).scatter(0, Tensor(IDX), 7.0), torch.zeros(3, 5).scatter(0, torch.tensor(IDX), 7.0))
  close(Tensor.ones(3, 5).scatter(0, Tensor(IDX), 2.5, reduce="add"), torch.ones(3, 5).scatter(0, torch.tensor(IDX), 2.5, reduce="add"))
  close(Tensor.ones(3, 5).scatter(0, Tensor(IDX), 2.5, reduce="multiply"),
        torch.ones(3, 5).scatter(0, torch.tensor(IDX), 2.5, reduce="multiply"))
  # tinygrad 0.14 takes reduce= with a scalar src only (torch also takes a Tensor): scatter_reduce is the way there
  with pytest.raises(TypeError, match="scatter_reduce"): Tensor.ones(3, 5).scatter(0, Tensor(IDX), Tensor(src), reduce="add")

def test_scatter_grad():
  check_grad(lambda x, s: x.scatter(0, Tensor(IDX), s), lambda x, s: x.scatter(0, torch.tensor(IDX), s), rnd(3, 5), rnd(2, 4, seed=4))

@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
  idx = np.array([[0, 0, 2, 0], [0, 2, 2, 1]], np.int64)  # repeated targets, and row 1 col 3 / row 2 col 0 untouched
  a, src = rnd(3, 5), rnd(2, 4, seed=5)
  close(Tensor(a).scatter_reduce(0, Tensor(idx), Tensor(src), reduce, include_self=include_self),
        torch.tensor(a).scatter_reduce(0, torch.tensor(idx), torch.tensor(src), reduce, include_self=include_self))
  ai, si = np.arange(15, dtype=np.int32).reshape(3, 5), np.arange(8, dtype=np.int32).reshape(2, 4) - 3
  close(Tensor(ai).scatter_reduce(0, Tensor(idx), Tensor(si), reduce, include_self=include_self),
        torch.tensor(ai).scatter_reduce(0, torch.tensor(idx), torch.tensor(si), reduce, include_self=include_self))

def test_scatter_reduce_grad():
  idx = np.array([[0, 0, 2, 0], [0, 2, 2, 1]], np.int64)
  check_grad(lambda x, s: x.scatter_reduce(0, Tensor(idx), s, "sum"), lambda x, s: x.scatter_reduce(0, torch.tensor(idx), s, "sum"), rnd(3, 5), rnd(2, 4))
  check_grad(lambda x, s: x.scatter_reduce(0, Tensor(idx), s, "mean", include_self=False),
             lambda x, s: x.scatter_reduce(0, torch.tensor(idx), s, "mean", include_self=False), rnd(3, 5), rnd(2, 4))

def test_scatter_errors():
  with pytest.raises(ValueError): Tensor.zeros(3, 5).scatter_reduce(0, Tensor(IDX), Tensor(rnd(2, 4)), "median")
  with pytest.raises(TypeError): Tensor.zeros(3, 5).scatter(0, Tensor(IDX), Tensor(rnd(2, 4)), reduce="max")
  with pytest.raises(ValueError): Tensor.zeros(3, 5).scatter(0, Tensor(IDX), Tensor(rnd(2, 3)))  # src smaller than index
  with pytest.raises(ValueError): Tensor.zeros(3, 5).scatter(0, Tensor([0, 1]), Tensor(rnd(2)))  # ndim mismatch
  with pytest.raises(TypeError): Tensor.zeros(3, 5).scatter(0, Tensor(IDX.astype(np.float32)), Tensor(rnd(2, 4)))

# ================================================================ masked_fill, masked_select

def test_masked_fill_and_select(dev):
  a = rnd(3, 4)
  m = a > 0.3
  close(Tensor(a, device=dev).masked_fill(Tensor(m, device=dev), -5.0), torch.tensor(a).masked_fill(torch.tensor(m), -5.0))
  close(Tensor(a, device=dev).masked_select(Tensor(m, device=dev)), torch.tensor(a).masked_select(torch.tensor(m)))
  row = np.array([True, False, False, True])  # the mask broadcasts
  close(Tensor(a).masked_select(Tensor(row)), torch.tensor(a).masked_select(torch.tensor(row)))
  close(Tensor(a).masked_select(Tensor(np.zeros((3, 4), bool))), torch.tensor(a).masked_select(torch.zeros(3, 4, dtype=torch.bool)))
  close(Tensor([[1, 2], [3, 4]]).masked_fill(Tensor([[True, False], [False, True]]), 0), np.array([[0, 2], [3, 0]], np.int32))
  with pytest.raises(TypeError): Tensor(a).masked_select(Tensor(a))

def test_masked_fill_grad():
  m = rnd(3, 4, seed=9) > 0
  check_grad(lambda x: x.masked_fill(Tensor(m), 1.5), lambda x: x.masked_fill(torch.tensor(m), 1.5), rnd(3, 4))
  check_grad(lambda x: x.masked_select(Tensor(m)), lambda x: x.masked_select(torch.tensor(m)), rnd(3, 4))

# ================================================================ einsum

EINSUMS = [
  ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
  ("i,i->", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]), ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("ii->i", [(4, 4)]),
  ("ii", [(4, 4)]), ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("b...,b...->b", [(2, 3, 4), (2, 3, 4)]),
  ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("ijj->i", [(2, 3, 3)]),
]

@pytest.mark.parametrize("formula,shapes", EINSUMS)
def test_einsum(formula, shapes):
  arrays = [rnd(*s, seed=i) for i, s in enumerate(shapes)]
  check_grad(lambda *xs: Tensor.einsum(formula, *xs), lambda *ts: torch.einsum(formula, *ts), *arrays)

def test_einsum_list_and_errors():
  a, b = rnd(3, 4), rnd(4, 5)
  close(Tensor.einsum("ij,jk->ik", [Tensor(a), Tensor(b)]), torch.einsum("ij,jk->ik", torch.tensor(a), torch.tensor(b)))
  with pytest.raises(ValueError): Tensor.einsum("ij,jk->ik", Tensor(a))
  with pytest.raises(ValueError): Tensor.einsum("ij,jk->ik", Tensor(a), Tensor(rnd(3, 5)))
  with pytest.raises(ValueError): Tensor.einsum("ijk,jk->ik", Tensor(a), Tensor(b))
  with pytest.raises(ValueError): Tensor.einsum("ij,jk->iz", Tensor(a), Tensor(b))

# ================================================================ repeat_interleave, roll

def test_repeat_interleave(dev):
  a = rnd(2, 3)
  close(Tensor(a, device=dev).repeat_interleave(2, 1), torch.tensor(a).repeat_interleave(2, 1))
  close(Tensor(a).repeat_interleave(3, 0), torch.tensor(a).repeat_interleave(3, 0))
  close(Tensor(a).repeat_interleave(2), torch.tensor(a).repeat_interleave(2))
  check_grad(lambda x: x.repeat_interleave(3, -1), lambda x: x.repeat_interleave(3, -1), a)

@pytest.mark.parametrize("shifts,dims", [(1, 0), (-2, 1), (7, 1), ((1, -3), (0, 1)), (4, None), (-1, None), (0, 0)])
def test_roll(shifts, dims):
  a = rnd(3, 5)
  check_grad(lambda x: x.roll(shifts, dims), lambda x: x.roll(shifts, dims) if dims is not None else x.roll(shifts), a)

def test_roll_errors():
  with pytest.raises(ValueError): Tensor.ones(3, 4).roll((1, 2), 0)

# ================================================================ interpolate

@pytest.mark.parametrize("mode,align_corners", [("linear", False), ("linear", True), ("nearest", False), ("nearest-exact", False)])
@pytest.mark.parametrize("size", [(7, 3), (2, 9), (4, 5), (1, 1)])
def test_interpolate_2d(mode, align_corners, size):
  a = rnd(2, 3, 4, 5)
  tmode = "bilinear" if mode == "linear" else mode
  ref = lambda t: F.interpolate(t, size=size, mode=tmode, align_corners=align_corners if mode == "linear" else None)  # noqa: E731
  check_grad(lambda x: x.interpolate(size, mode, align_corners), ref, a)

def test_interpolate_1d_3d():
  a = rnd(2, 3, 6)
  close(Tensor(a).interpolate((10,)), F.interpolate(torch.tensor(a), size=(10,), mode="linear"))
  close(Tensor(a).interpolate((4,), align_corners=True), F.interpolate(torch.tensor(a), size=(4,), mode="linear", align_corners=True))
  b = rnd(1, 1, 3, 4, 2)
  close(Tensor(b).interpolate((5, 2, 3)), F.interpolate(torch.tensor(b), size=(5, 2, 3), mode="trilinear"))
  close(Tensor(b).interpolate((5, 2, 3), mode="nearest"), F.interpolate(torch.tensor(b), size=(5, 2, 3), mode="nearest"))

def test_interpolate_int_and_errors():
  t = Tensor([[1, 2, 3, 4], [21, 22, 23, 24], [41, 42, 43, 44]])
  out = t.interpolate((6, 8), mode="nearest")
  assert out.dtype == t.dtype
  close(out, F.interpolate(torch.tensor(t.numpy())[None, None].float(), size=(6, 8), mode="nearest")[0, 0].int())
  with pytest.raises(ValueError): t.interpolate((2, 2), mode="bicubic")
  with pytest.raises(ValueError): t.interpolate((2, 2), mode="nearest", align_corners=True)
  with pytest.raises(ValueError): t.interpolate((2, 2, 2, 2))

# ================================================================ convolutions

@pytest.mark.parametrize("stride,padding,output_padding,dilation,groups", [
  (1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (3, 1, 0, 2, 1), (2, 0, 0, 1, 2), ((2, 1), (1, 0), (1, 0), (1, 2), 1), (1, 2, 0, 1, 1)])
def test_conv_transpose2d(stride, padding, output_padding, dilation, groups):
  x, w, b = rnd(2, 4, 5, 4), rnd(4, 3, 3, 2, seed=1), rnd(3 * groups, seed=2)
  check_grad(lambda x, w, b: x.conv_transpose2d(w, b, groups, stride, dilation, padding, output_padding),
             lambda x, w, b: F.conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation), x, w, b, rtol=1e-4, atol=1e-4)

def test_conv_transpose2d_errors():
  with pytest.raises(ValueError): Tensor.ones(1, 3, 4, 4).conv_transpose2d(Tensor.ones(4, 2, 3, 3))
  with pytest.raises(ValueError): Tensor.ones(3, 4, 4).conv_transpose2d(Tensor.ones(3, 2, 3, 3))

def test_conv1d_and_conv_transpose1d():
  x, w = rnd(2, 4, 9), rnd(6, 2, 3, seed=1)
  check_grad(lambda x, w: x.conv2d(w, groups=2, stride=2, padding=1, dilation=2), lambda x, w: F.conv1d(x, w, None, 2, 1, 2, 2), x, w, rtol=1e-4, atol=1e-4)
  wt = rnd(4, 3, 3, seed=2)
  check_grad(lambda x, w: x.conv_transpose2d(w, stride=2, padding=1, output_padding=1),
             lambda x, w: F.conv_transpose1d(x, w, None, 2, 1, 1), x, wt, rtol=1e-4, atol=1e-4)

# ================================================================ attention, losses

def _qkv(L=4, S=6, D=8, Dv=5):
  return rnd(2, 3, L, D, seed=1), rnd(2, 3, S, D, seed=2), rnd(2, 3, S, Dv, seed=3)

def test_sdpa():
  q, k, v = _qkv()
  check_grad(lambda q, k, v: q.scaled_dot_product_attention(k, v), F.scaled_dot_product_attention, q, k, v)
  check_grad(lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
             lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)
  bool_mask = np.random.default_rng(0).random((4, 6)) > 0.4
  bool_mask[:, 0] = True
  check_grad(lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=Tensor(bool_mask)),
             lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=torch.tensor(bool_mask)), q, k, v)
  add_mask = rnd(4, 6, seed=7)
  check_grad(lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=Tensor(add_mask)),
             lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=torch.tensor(add_mask)), q, k, v)

def test_sdpa_gqa_dropout_and_errors():
  q, k, v = rnd(1, 4, 3, 8), rnd(1, 2, 5, 8, seed=1), rnd(1, 2, 5, 8, seed=2)
  close(Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), enable_gqa=True),
        F.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)), enable_gqa=True), atol=1e-5)
  q, k, v = _qkv()
  plain = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), dropout_p=0.5).numpy()  # not training: no dropout
  np.testing.assert_allclose(plain, F.scaled_dot_product_attention(*map(torch.tensor, (q, k, v))).numpy(), rtol=1e-5, atol=1e-5)
  with Tensor.train():
    dropped = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), dropout_p=0.5).numpy()
  assert not np.allclose(dropped, plain)
  with pytest.raises(RuntimeError): Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), attn_mask=Tensor.ones(4, 6), is_causal=True)

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
  logp = F.log_softmax(torch.tensor(rnd(6, 5)), 1).numpy()
  Y = np.array([0, 4, 2, 2, 1, 3])
  w = rnd(5, lo=0.1, hi=2.0, seed=3)
  check_grad(lambda x: x.nll_loss(Tensor(Y), reduction=reduction), lambda x: F.nll_loss(x, torch.tensor(Y), reduction=reduction), logp)
  check_grad(lambda x: x.nll_loss(Tensor(Y), Tensor(w), ignore_index=2, reduction=reduction),
             lambda x: F.nll_loss(x, torch.tensor(Y), torch.tensor(w), ignore_index=2, reduction=reduction), logp)
  logp4 = F.log_softmax(torch.tensor(rnd(2, 5, 3, 2)), 1).numpy()
  Y4 = np.random.default_rng(0).integers(0, 5, (2, 3, 2))
  close(Tensor(logp4).nll_loss(Tensor(Y4), reduction=reduction), F.nll_loss(torch.tensor(logp4), torch.tensor(Y4), reduction=reduction))

def test_nll_loss_errors():
  with pytest.raises(ValueError): Tensor.ones(4, 3).nll_loss(Tensor([0, 1, 2]))
  with pytest.raises(ValueError): Tensor.ones(4, 3).nll_loss(Tensor([0, 1, 2, 0]), reduction="avg")

# ================================================================ reductions, activations, bitwise

@pytest.mark.parametrize("axis,keepdim,correction", [(None, False, 1), (1, True, 0), ((0, 2), False, 1)])
def test_var_std_mean(axis, keepdim, correction):
  a = rnd(3, 4, 5)
  v, m = Tensor(a).var_mean(axis, keepdim=keepdim, correction=correction)
  tv, tm = torch.var_mean(torch.tensor(a), axis, keepdim=keepdim, correction=correction)
  close(v, tv); close(m, tm)
  s, m = Tensor(a).std_mean(axis, keepdim=keepdim, correction=correction)
  ts, tm = torch.std_mean(torch.tensor(a), axis, keepdim=keepdim, correction=correction)
  close(s, ts); close(m, tm)
  check_grad(lambda x: x.std_mean(axis, correction=correction)[0], lambda x: torch.std_mean(x, axis, correction=correction)[0], a)

ACTS = {
  "softsign": (lambda t: t.softsign(), F.softsign), "hardswish": (lambda t: t.hardswish(), F.hardswish),
  "hardtanh": (lambda t: t.hardtanh(), F.hardtanh), "hardtanh_args": (lambda t: t.hardtanh(-0.5, 2.0), lambda t: F.hardtanh(t, -0.5, 2.0)),
  "celu": (lambda t: t.celu(), F.celu), "celu_alpha": (lambda t: t.celu(0.5), lambda t: F.celu(t, 0.5)), "selu": (lambda t: t.selu(), F.selu),
}

@pytest.mark.parametrize("name", list(ACTS))
def test_activations(name):
  fn, tfn = ACTS[name]
  a = rnd(4, 6, lo=-4, hi=4)
  a[0, :4] = [-3.1, 2.9, 0.9, -1.1]  # either side of the kinks of hardswish (±3) and hardtanh (±1), not on them
  check_grad(fn, tfn, a, rtol=1e-4, atol=1e-5)

def test_isfinite(dev):
  a = np.array([1.0, np.inf, -np.inf, np.nan, 0.0, -3.5], np.float32)
  close(Tensor(a, device=dev).isfinite(), torch.tensor(a).isfinite())
  close(Tensor([1, 2, 3]).isfinite(), np.array([True, True, True]))

def test_bitwise(dev):
  a, b = np.array([0b1100, 7, -3, 0], np.int32), np.array([0b1010, 2, 5, -1], np.int32)
  ta, tb = Tensor(a, device=dev), Tensor(b, device=dev)
  close(ta.bitwise_and(tb), a & b); close(ta.bitwise_or(tb), a | b)
  close(ta.bitwise_xor(tb), a ^ b); close(ta.xor(tb), a ^ b)
  close(ta.bitwise_and(6), a & 6); close(ta.bitwise_not(), ~a)
  m, n = np.array([True, False, True]), np.array([True, True, False])
  close(Tensor(m).bitwise_and(Tensor(n)), m & n); close(Tensor(m).xor(Tensor(n)), m ^ n)
  with pytest.raises(TypeError): Tensor([1.0]).bitwise_or(Tensor([2.0]))

# ================================================================ creation, random

def test_linspace(dev):
  for start, stop, steps in ((0, 1, 5), (-3.5, 2, 12), (5, -5, 3), (2, 2, 1), (0, 1, 0)):
    close(Tensor.linspace(start, stop, steps, device=dev), torch.linspace(start, stop, steps), atol=1e-6)
  close(Tensor.linspace(0, 10, 6, dtype=dtypes.int32), torch.linspace(0, 10, 6, dtype=torch.int32))
  with pytest.raises(ValueError): Tensor.linspace(0, 1, -1)
  with pytest.raises(ValueError): Tensor.linspace(0, 1, 3, dtype=dtypes.bool)

def test_kaiming_normal():
  Tensor.manual_seed(0)
  t = Tensor.kaiming_normal(256, 64, 3, 3, a=0.0)
  assert t.shape == (256, 64, 3, 3)
  std = math.sqrt(2.0) / math.sqrt(64 * 9)
  out = t.numpy()
  assert abs(out.mean()) < 0.01 * std * 10 and abs(out.std() / std - 1) < 0.02

def test_randperm():
  Tensor.manual_seed(3)
  p = Tensor.randperm(50)
  assert p.dtype == dtypes.int32 and p.shape == (50,)
  out = p.numpy()
  assert sorted(out.tolist()) == list(range(50)) and out.tolist() != list(range(50))
  assert Tensor.randperm(5, dtype=dtypes.int64).dtype == dtypes.int64

def test_multinomial():
  Tensor.manual_seed(1)
  p = np.array([0.1, 0.0, 0.6, 0.3], np.float32)
  s = Tensor(p).multinomial(4000, replacement=True)
  assert s.shape == (4000,) and s.dtype == dtypes.int32
  freq = np.bincount(s.numpy(), minlength=4) / 4000
  assert freq[1] == 0 and np.abs(freq - p).max() < 0.04
  s2 = Tensor([[0.0, 1.0, 0.0], [5.0, 0.0, 0.0]]).multinomial(3, replacement=True)
  assert s2.numpy().tolist() == [[1, 1, 1], [0, 0, 0]]
  assert Tensor([0.0, 0.0, 2.0]).multinomial().numpy().tolist() == [2]
  with pytest.raises(NotImplementedError): Tensor(p).multinomial(2)
  with pytest.raises(ValueError): Tensor.ones(2, 2, 2).multinomial()

def test_mT():
  a = rnd(2, 3, 4)
  close(Tensor(a).mT, torch.tensor(a).mT)
  assert Tensor.ones(3, 5).mT.shape == (5, 3)

# ================================================================ __setitem__

SETITEMS = [(1, 5.0), ((0, slice(1, 3)), 9.0), ((slice(None), 2), "col"), ((slice(1, None, 2), slice(None, None, 3)), "block"),
            ((Ellipsis, -1), 4.0), ((slice(None, None, -2),), "rev"), ((None, 0), 1.5), ((slice(5, 7),), 2.0)]

@pytest.mark.parametrize("idx,val", SETITEMS)
def test_setitem_realized(dev, idx, val):
  a = rnd(4, 6)
  t = Tensor(a, device=dev).contiguous().realize()
  ref = a.copy()
  if isinstance(val, str): val = rnd(*ref[idx].shape, seed=11)
  ref[idx] = val
  t[idx] = Tensor(val, device=dev) if isinstance(val, np.ndarray) else val
  np.testing.assert_allclose(t.numpy(), ref)

def test_setitem_in_place_and_lazy():
  t = Tensor.zeros(3, 4).contiguous().realize()
  mem = t.data()  # a view of the tensor's memory: an in-place write shows in it
  t[1, :] = Tensor([1.0, 2.0, 3.0, 4.0])
  t[:, 0] = 7
  assert t.numpy().tolist() == [[7, 0, 0, 0], [7, 2, 3, 4], [7, 0, 0, 0]]
  assert mem.tolist() == [[7, 0, 0, 0], [7, 2, 3, 4], [7, 0, 0, 0]]
  lazy = Tensor.arange(6).reshape(2, 3) * 2  # not realized: the tensor's graph is replaced
  lazy[0, ::2] = -1
  assert lazy.numpy().tolist() == [[-1, 2, -1], [6, 8, 10]]
  t = Tensor.ones(2, 3).contiguous().realize()
  t[0] += 5
  assert t.numpy().tolist() == [[6, 6, 6], [1, 1, 1]]

def test_setitem_grad_and_errors():
  x = Tensor(rnd(3, 4), requires_grad=True)
  y = x * 2
  y[1] = 0.0
  y.sum().backward()
  assert x.grad.numpy().tolist() == [[2] * 4, [0] * 4, [2] * 4]
  t = Tensor.zeros(3, 4).contiguous().realize()
  with pytest.raises(RuntimeError): t[0] = Tensor([1, 2, 3, 4], dtype=dtypes.int32)
  with pytest.raises(IndexError): t[5] = 1.0
  with pytest.raises(ValueError): t[0] = Tensor.ones(3)
  t[Tensor([0, 2])] = 1.0  # tensor indices write too (tests/test_tensor_parity_shape.py checks them against torch)
  assert t.numpy().tolist() == [[1] * 4, [0] * 4, [1] * 4]

# ================================================================ nn layers

def _copy(tiny, ref):
  for name, p in ref.named_parameters():
    getattr(tiny, name).replace(Tensor(p.detach().numpy()))

def test_nn_conv1d_convtranspose():
  c = nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2)
  assert c.weight.shape == (6, 2, 3)
  tc = torch.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2)
  _copy(c, tc)
  x = rnd(2, 4, 11)
  close(c(Tensor(x)), tc(torch.tensor(x)), atol=1e-5)
  ct = nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2)
  assert ct.weight.shape == (4, 3, 3, 2) and ct.bias.shape == (6,)
  tct = torch.nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2)
  _copy(ct, tct)
  x = rnd(2, 4, 5, 4)
  close(ct(Tensor(x)), tct(torch.tensor(x)), atol=1e-5)
  ct1 = nn.ConvTranspose1d(4, 2, 3, stride=3)
  tct1 = torch.nn.ConvTranspose1d(4, 2, 3, stride=3)
  _copy(ct1, tct1)
  close(ct1(Tensor(rnd(1, 4, 5))), tct1(torch.tensor(rnd(1, 4, 5))), atol=1e-5)

@pytest.mark.parametrize("affine", [True, False])
def test_nn_norms(affine):
  x = rnd(2, 6, 3, 4)
  g, tg = nn.GroupNorm(3, 6, affine=affine), torch.nn.GroupNorm(3, 6, affine=affine)
  i, ti = nn.InstanceNorm(6, affine=affine), torch.nn.InstanceNorm2d(6, affine=affine)
  if affine:
    w, b = rnd(6, seed=1), rnd(6, seed=2)
    for m, tm in ((g, tg), (i, ti)):
      m.weight, m.bias = Tensor(w), Tensor(b)
      tm.weight.data, tm.bias.data = torch.tensor(w), torch.tensor(b)
  close(g(Tensor(x)), tg(torch.tensor(x)), atol=1e-5)
  close(i(Tensor(x)), ti(torch.tensor(x)), atol=1e-5)
  r, tr = nn.RMSNorm(4, eps=1e-6, elementwise_affine=affine), torch.nn.RMSNorm(4, eps=1e-6, elementwise_affine=affine)
  if affine:
    r.weight = Tensor(rnd(4, seed=3)); tr.weight.data = torch.tensor(rnd(4, seed=3))
  close(r(Tensor(x)), tr(torch.tensor(x)), atol=1e-5)
  ln = nn.LayerNorm2d(6, elementwise_affine=affine)
  close(ln(Tensor(x)), F.layer_norm(torch.tensor(x).permute(0, 2, 3, 1), (6,)).permute(0, 3, 1, 2), atol=1e-5)
  with pytest.raises(ValueError): nn.GroupNorm(4, 6)(Tensor(rnd(2, 6, 1)))  # 6 values per sample don't split into 4 groups
  np.testing.assert_allclose(nn.GroupNorm(4, 2)(Tensor(x[:, :2])).numpy(),  # 4 groups of 2 channels: each group half a channel
                             F.group_norm(torch.tensor(x[:, :2]).reshape(2, 4, -1), 4).reshape(x[:, :2].shape).numpy(), atol=1e-5)
  with pytest.raises(ValueError): g(Tensor(rnd(2, 4, 3)))

def test_nn_groupnorm_grad():
  g = nn.GroupNorm(2, 4)
  tg = torch.nn.GroupNorm(2, 4)
  check_grad(lambda x: g(x), lambda x: tg(x), rnd(2, 4, 5), rtol=1e-4, atol=1e-4)

def test_nn_lstmcell():
  cell, tcell = nn.LSTMCell(5, 3), torch.nn.LSTMCell(5, 3)
  _copy(cell, tcell)
  x, h, c = rnd(4, 5), rnd(4, 3, seed=1), rnd(4, 3, seed=2)
  nh, nc = cell(Tensor(x), (Tensor(h), Tensor(c)))
  th, tc = tcell(torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
  close(nh, th); close(nc, tc)
  nh, nc = cell(Tensor(x))
  th, tc = tcell(torch.tensor(x))
  close(nh, th); close(nc, tc)
  assert nn.LSTMCell(5, 3, bias=False).bias_ih is None

# ================================================================ optimizers, Variable

def _train(opt_fn, topt_fn, steps=3):
  w0 = rnd(4, 3)
  x = Tensor(w0, requires_grad=True)
  tx = torch.tensor(w0, requires_grad=True)
  opt, topt = opt_fn([x]), topt_fn([tx])
  for i in range(steps):
    data = rnd(3, seed=10 + i)
    with Tensor.train(): opt.zero_grad(); ((x @ Tensor(data)).square().sum()).backward(); opt.step()
    topt.zero_grad(); ((tx @ torch.tensor(data)).square().sum()).backward(); topt.step()
  return x, tx

def _torch_lars(params, lr, momentum, wd, tcoef):
  """LARS as tinygrad defines it (classic: lr and trust ratio applied before momentum), written out in torch."""
  class Ref:
    def __init__(self): self.b = [torch.zeros_like(p) for p in params]
    def zero_grad(self):
      for p in params: p.grad = None
    @torch.no_grad()
    def step(self):
      for p, b in zip(params, self.b):
        r1, r2 = p.norm(), p.grad.norm()
        r = tcoef * r1 / (r2 + wd * r1) if r1 > 0 and r2 > 0 else 1.0
        g = (p.grad + wd * p) * r * lr
        b.mul_(momentum).add_(g)
        p.sub_(b)
  return Ref()

def test_lars_matches_reference():
  x, tx = _train(lambda p: nn.optim.LARS(p, lr=0.5, momentum=0.9, weight_decay=1e-3, tcoef=0.01),
                 lambda p: _torch_lars(p, 0.5, 0.9, 1e-3, 0.01))
  np.testing.assert_allclose(x.numpy(), tx.detach().numpy(), rtol=1e-5, atol=1e-6)
  # without the trust ratio and with the learning rate after momentum it is torch's SGD
  x, tx = _train(lambda p: nn.optim.LARS(p, lr=0.01, momentum=0.9, weight_decay=0.01, classic=False, tcoef=0.0),
                 lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9, weight_decay=0.01))
  np.testing.assert_allclose(x.numpy(), tx.detach().numpy(), rtol=1e-5, atol=1e-6)
  assert isinstance(nn.optim.SGD([Tensor.ones(2, requires_grad=True)]), nn.optim.LARS)

def test_optimizer_group():
  a0, b0 = rnd(3), rnd(2, seed=1)
  a, b = Tensor(a0, requires_grad=True), Tensor(b0, requires_grad=True)
  ta, tb = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
  opt = nn.optim.OptimizerGroup(nn.optim.SGD([a], lr=0.1), nn.optim.Adam([b], lr=0.01))
  topt = [torch.optim.SGD([ta], lr=0.1), torch.optim.Adam([tb], lr=0.01)]
  assert isinstance(opt[1], nn.optim.LAMB) and len(opt.params) == 2
  for _ in range(3):
    with Tensor.train(): opt.zero_grad(); (a.square().sum() * b.sum()).backward(); opt.step()
    for o in topt: o.zero_grad()
    (ta.square().sum() * tb.sum()).backward()
    for o in topt: o.step()
  assert a.grad is not None
  np.testing.assert_allclose(a.numpy(), ta.detach().numpy(), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(b.numpy(), tb.detach().numpy(), rtol=1e-5, atol=1e-6)
  opt.zero_grad()
  assert a.grad is None and b.grad is None

def test_variable():
  i = Variable("i", 1, 10)
  assert (i * 2 + 3).vmin == 5 and (i * 2 + 3).vmax == 23
  assert i.arg[0] == "i"
