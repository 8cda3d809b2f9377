# tinygrad 0.14's shape, convolution, pooling and indexing API, checked against torch: forward values and gradients,
# on CPU and PYTHON (small shapes there: it interprets every op), with zero-size dims and the errors tinygrad raises.
import math
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tinygrad import Tensor, dtypes

DEVICES = ["CPU", "PYTHON"]

@pytest.fixture(params=DEVICES)
def dev(request): return request.param

def rnd(*shape, seed=0): return np.random.default_rng(seed).uniform(-2, 2, size=shape).astype(np.float32)

def same(fn, tfn, *shapes, dev="CPU", grad=True, rtol=1e-4, atol=1e-5, vals=None):
  """fn on our tensors and tfn on torch's agree in shape, dtype and value, and (grad) in the gradient of a weighted sum."""
  arrays = vals if vals is not None else [rnd(*s, seed=i) for i, s in enumerate(shapes)]
  xs = [Tensor(a, device=dev) for a in arrays]
  ts = [torch.tensor(a, requires_grad=grad and a.dtype == np.float32) for a in arrays]
  out, ref = fn(*xs), tfn(*ts)
  got = out.numpy()
  want = ref.detach().numpy()
  assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
  if np.issubdtype(want.dtype, np.floating): np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
  else: np.testing.assert_array_equal(got, want.astype(got.dtype))
  if not grad: return
  w = rnd(*want.shape, seed=99) if want.size else np.zeros(want.shape, np.float32)
  gs = (fn(*xs) * Tensor(w, device=dev)).sum().gradient(*xs)
  tg = torch.autograd.grad((ref * torch.tensor(w)).sum(), ts, allow_unused=True)
  for g, t, a in zip(gs, tg, arrays):
    np.testing.assert_allclose(g.numpy(), np.zeros_like(a) if t is None else t.numpy(), rtol=rtol, atol=atol)

# ================================================================ convolutions over 1, 2 and 3 spatial dims
@pytest.mark.parametrize("kw", [{}, {"stride": 2}, {"padding": 1}, {"dilation": 2}, {"padding": (2,)}, {"groups": 2}])
def test_conv1d(dev, kw):
  same(lambda x, w: x.conv2d(w, **kw), lambda x, w: F.conv1d(x, w, **kw), (2, 4, 9), (4, 4 // kw.get("groups", 1), 3), dev=dev)

@pytest.mark.parametrize("kw", [{}, {"stride": (2, 1)}, {"padding": 1}, {"dilation": (2, 1)}, {"groups": 2, "padding": (1, 2)}])
def test_conv2d(dev, kw):
  same(lambda x, w, b: x.conv2d(w, b, **kw), lambda x, w, b: F.conv2d(x, w, b, **kw), (2, 4, 6, 7), (4, 4 // kw.get("groups", 1), 3, 2), (4,), dev=dev)

def test_conv2d_flat_and_negative_padding(dev):
  same(lambda x, w: x.conv2d(w, padding=(2, 0, 1, 1)), lambda x, w: F.conv2d(F.pad(x, (2, 0, 1, 1)), w), (1, 2, 5, 5), (3, 2, 3, 3), dev=dev)
  same(lambda x, w: x.conv2d(w, padding=(-1, 0, -1, 0)), lambda x, w: F.conv2d(x[:, :, 1:, 1:], w), (1, 1, 6, 6), (1, 1, 3, 3), dev=dev)

@pytest.mark.parametrize("kw", [{}, {"padding": 1}, {"stride": 2, "padding": (0, 1, 1)}])
def test_conv3d(dev, kw):
  shapes = ((1, 2, 5, 5, 5), (3, 2, 3, 3, 3)) if dev == "CPU" else ((1, 1, 4, 4, 4), (2, 1, 2, 2, 2))
  same(lambda x, w: x.conv2d(w, **kw), lambda x, w: F.conv3d(x, w, **kw), *shapes, dev=dev)

def test_conv3d_flat_padding():
  same(lambda x, w: x.conv2d(w, padding=[1, 1, 1, 1, 1, 1]), lambda x, w: F.conv3d(x, w, padding=1), (1, 2, 4, 4, 4), (2, 2, 3, 3, 3))

@pytest.mark.parametrize("kw", [{}, {"stride": 2}, {"stride": 2, "output_padding": 1}, {"padding": 1, "dilation": 2}, {"groups": 2}])
def test_conv_transpose1d_2d(dev, kw):
  g = kw.get("groups", 1)
  same(lambda x, w: x.conv_transpose2d(w, **kw), lambda x, w: F.conv_transpose1d(x, w, **kw), (2, 4, 5), (4, 4 // g, 3), dev=dev)
  same(lambda x, w: x.conv_transpose2d(w, **kw), lambda x, w: F.conv_transpose2d(x, w, **kw), (1, 4, 4, 3), (4, 6 // g, 3, 2), dev=dev)

def test_conv_transpose3d(dev):
  shapes = ((1, 2, 3, 4, 3), (2, 3, 2, 2, 2)) if dev == "CPU" else ((1, 1, 2, 3, 2), (1, 2, 2, 2, 2))
  same(lambda x, w: x.conv_transpose2d(w, stride=(2, 1, 2)), lambda x, w: F.conv_transpose3d(x, w, stride=(2, 1, 2)), *shapes, dev=dev)

def test_conv_errors():
  with pytest.raises(RuntimeError, match="larger than the input"): Tensor.ones(2, 16, 2, 2).conv2d(Tensor.ones(32, 16, 3, 3))
  with pytest.raises(RuntimeError): Tensor.ones(1, 1, 6, 7).conv2d(Tensor.ones(6, 1, 3, 3), dilation=3)
  with pytest.raises(ValueError, match="padding"): Tensor.ones(2, 16, 4, 4).conv2d(Tensor.ones(32, 16, 3, 3), padding=(1, 1, 1))
  with pytest.raises(ValueError, match="channels"): Tensor.ones(1, 3, 4, 4).conv2d(Tensor.ones(2, 2, 3, 3))
  with pytest.raises(ValueError, match="same rank"): Tensor.ones(1, 3, 4, 4).conv2d(Tensor.ones(2, 3, 3))

# ================================================================ pooling
@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": (3, 2), "stride": 1}, {"kernel_size": 3, "padding": 1, "stride": 2},
                                {"kernel_size": 2, "dilation": 2}, {"kernel_size": 3, "stride": 2, "ceil_mode": True},
                                {"kernel_size": (3, 3), "stride": 3, "padding": 1, "ceil_mode": True}])
def test_max_pool2d(dev, kw):
  same(lambda x: x.max_pool2d(**kw), lambda x: F.max_pool2d(x, **kw), (2, 2, 7, 7), dev=dev)
  same(lambda x: x.max_pool2d(**kw, return_indices=True)[1], lambda x: F.max_pool2d(x, **kw, return_indices=True)[1].int(), (2, 2, 7, 7), dev=dev, grad=False)

def test_max_pool_1d_3d(dev):
  same(lambda x: x.max_pool2d(kernel_size=(3,), stride=2, padding=1), lambda x: F.max_pool1d(x, 3, 2, 1), (2, 3, 9), dev=dev)
  shape = (1, 2, 5, 6, 5) if dev == "CPU" else (1, 1, 4, 4, 4)
  same(lambda x: x.max_pool2d(kernel_size=(2, 2, 2)), lambda x: F.max_pool3d(x, 2), shape, dev=dev)

def test_max_pool_ties_first_index():
  x = [[[[1.0] * 6] * 6]]
  same(lambda x: x.max_pool2d(kernel_size=3, stride=1, return_indices=True)[1], lambda x: F.max_pool2d(x, 3, 1, return_indices=True)[1].int(),
       vals=[np.array(x, np.float32)], grad=False)

def test_max_pool_int_stays_int(dev):
  x = Tensor(np.arange(-8, 17, dtype=np.int32).reshape(1, 1, 5, 5), device=dev)
  out = x.max_pool2d(kernel_size=2, padding=1)
  assert out.dtype == dtypes.int32
  np.testing.assert_array_equal(out.numpy(), F.max_pool2d(torch.arange(-8, 17).reshape(1, 1, 5, 5).float(), 2, padding=1).int().numpy())

@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "padding": 1}, {"kernel_size": 3, "padding": 1, "count_include_pad": False},
                                {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
                                {"kernel_size": (3, 2), "stride": 3, "padding": 1, "ceil_mode": True, "count_include_pad": False}])
def test_avg_pool2d(dev, kw):
  same(lambda x: x.avg_pool2d(**kw), lambda x: F.avg_pool2d(x, **kw), (2, 2, 6, 7), dev=dev)

def test_avg_pool_1d_3d(dev):
  same(lambda x: x.avg_pool2d(kernel_size=(3,), stride=2, padding=1, count_include_pad=False), lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False), (2, 2, 8), dev=dev)
  shape = (1, 1, 6, 6, 6) if dev == "CPU" else (1, 1, 4, 4, 4)
  same(lambda x: x.avg_pool2d(kernel_size=(3, 3, 3), stride=2, padding=1, count_include_pad=False),
       lambda x: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False), shape, dev=dev)

def test_max_unpool2d(dev):
  x = rnd(2, 3, 7, 6)
  for kw, size in (({"kernel_size": 2}, None), ({"kernel_size": 3, "stride": 2, "padding": 1}, (7, 6))):
    v, i = Tensor(x, device=dev).max_pool2d(**kw, return_indices=True)
    tv, ti = F.max_pool2d(torch.tensor(x), **kw, return_indices=True)
    np.testing.assert_allclose(v.max_unpool2d(i, **kw, output_size=size).numpy(), F.max_unpool2d(tv, ti, **kw, output_size=size).numpy())

def test_pool_errors():
  x = Tensor.ones(1, 1, 6, 6)
  with pytest.raises(ValueError, match="half the window"): x.max_pool2d(kernel_size=2, padding=2)
  with pytest.raises(ValueError, match="half the window"): x.avg_pool2d(kernel_size=3, padding=2)
  with pytest.raises(ValueError, match="padding"): x.max_pool2d(kernel_size=2, padding=(1, 1, 1))
  with pytest.raises(RuntimeError, match="larger than the input"): x.avg_pool2d(kernel_size=7)

# ================================================================ pad modes
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("pads", [(0, 2, 3, 2), (1, 1), (2, 0, 1, 2, 1, 1)])
def test_pad_modes(dev, mode, pads):
  shape = {2: (2, 4, 5), 4: (1, 4, 4, 5), 6: (1, 1, 3, 4, 5)}[len(pads)]
  same(lambda x: x.pad(pads, mode=mode), lambda x: F.pad(x, pads, mode=mode), shape, dev=dev)

@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad_modes_negative(mode):
  same(lambda x: x.pad((3, -2, -1, 2), mode=mode), lambda x: F.pad(x, (3, -2, -1, 2), mode=mode), (1, 1, 5, 5))
  same(lambda x: x.pad(((0, 0), (0, 0), (-1, 2), (3, -2)), mode=mode), lambda x: F.pad(x, (3, -2, -1, 2), mode=mode), (1, 1, 5, 5))

def test_pad_constant_value_keyword():
  same(lambda x: x.pad((1, 2), value=-math.inf), lambda x: F.pad(x, (1, 2), value=-math.inf), (2, 3))
  same(lambda x: x.pad((1, 2), "constant", 5.0), lambda x: F.pad(x, (1, 2), value=5.0), (2, 3))

def test_pad_errors():
  x = Tensor.ones(1, 1, 5, 5)
  with pytest.raises(ValueError, match="less than"): x.pad((3, 5, 0, 0), mode="reflect")
  with pytest.raises(ValueError, match="more than once"): x.pad((3, 6, 0, 0), mode="circular")
  with pytest.raises(NotImplementedError): x.pad((3, -5, 1, -5), mode="circular")
  with pytest.raises(NotImplementedError, match="typo"): x.pad((1, 1), mode="typo")
  with pytest.raises(TypeError, match="value="): x.pad((1, 1), 3.0)
  with pytest.raises(ValueError): x.pad((1, 1, 1))

# ================================================================ new methods
@pytest.mark.parametrize("args", [(0, 2, 1), (0, 3, 2), (1, 2, 3), (-1, 0, 2)])
def test_unfold(dev, args):
  same(lambda x: x.unfold(*args), lambda x: x.unfold(*args), (5, 4), dev=dev)

def test_unfold_errors():
  x = Tensor.ones(8)
  with pytest.raises(RuntimeError, match="larger"): x.unfold(0, 9, 3)
  with pytest.raises(RuntimeError, match="step"): x.unfold(0, 1, -1)
  with pytest.raises(RuntimeError, match="size"): x.unfold(0, -1, 1)
  with pytest.raises(IndexError): x.unfold(1, 8, 3)

@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(dev, indexing):
  for k in range(3):
    same(lambda x, y, z: x.meshgrid(y, z, indexing=indexing)[k], lambda x, y, z: torch.meshgrid(x, y, z, indexing=indexing)[k], (3,), (4,), (2,), dev=dev)
  with pytest.raises(RuntimeError, match="indexing"): Tensor([1, 2]).meshgrid(indexing="bad")

def test_diag_diagonal(dev):
  same(lambda x: x.diag(), lambda x: x.diag(), (4,), dev=dev)
  for off, d1, d2 in ((0, 0, 1), (1, 0, 1), (-2, 2, 0), (7, 1, 2)):
    same(lambda x: x.diagonal(off, d1, d2), lambda x: x.diagonal(off, d1, d2), (3, 4, 5), dev=dev)
  with pytest.raises(ValueError, match="1-d"): Tensor.ones(2, 2).diag()
  with pytest.raises(RuntimeError, match="dim1 and dim2"): Tensor.ones(2, 2).diagonal(0, 1, 1)

def test_nonzero(dev):
  a = np.array([[1, 0, 2], [0, 0, 3]], np.float32)
  np.testing.assert_array_equal(Tensor(a, device=dev).nonzero().numpy(), torch.tensor(a).nonzero().numpy())
  np.testing.assert_array_equal(Tensor(a, device=dev).nonzero(size=4, fill_value=-1).numpy(), [[0, 0], [0, 2], [1, 2], [-1, -1]])
  assert Tensor(a).nonzero(size=2).numpy().tolist() == [[0, 0], [0, 2]]
  assert Tensor(0.0).nonzero().shape == (0, 0) and Tensor(np.zeros((2, 0))).nonzero().shape == (0, 2)

def test_masked_select_size(dev):
  x = Tensor([[0, 1, 2], [3, 4, 5]], device=dev)
  m = Tensor([[True, False, True], [False, True, False]], device=dev)
  assert x.masked_select(m).tolist() == [0, 2, 4]
  assert x.masked_select(m, size=5, fill_value=-1).tolist() == [0, 2, 4, -1, -1]
  assert x.masked_select(m, size=2).tolist() == [0, 2]

# ================================================================ advanced indexing
IDX = [np.array([[1], [0], [-1]]), np.array([2, 0]), np.array([[0, 3], [1, -2], [4, 2]]), np.array(1)]
CASES = {
  "one tensor": lambda x, a, b, c, d: x[b],
  "two adjacent": lambda x, a, b, c, d: x[a, b],
  "adjacent after a slice": lambda x, a, b, c, d: x[:, a, c],
  "separated by a slice": lambda x, a, b, c, d: x[a, :, c],
  "mixed with int and None": lambda x, a, b, c, d: x[1, None, b, c],
  "ellipsis": lambda x, a, b, c, d: x[..., b, c],
  "0-d tensor": lambda x, a, b, c, d: x[a, d],
  "with a strided slice": lambda x, a, b, c, d: x[a, ::2, b],
}
@pytest.mark.parametrize("case", list(CASES))
def test_advanced_indexing(dev, case):
  fn = CASES[case]
  x = rnd(3, 4, 5)
  same(lambda t: fn(t, *[Tensor(i.astype(np.int32), device=dev) for i in IDX]), lambda t: fn(t, *[torch.tensor(i) for i in IDX]), vals=[x], dev=dev)

def test_advanced_indexing_lists():
  same(lambda x: x[[0, 2], (1, 0)], lambda x: x[[0, 2], (1, 0)], (3, 4))
  same(lambda x: x[((0,),), 1:], lambda x: x[((0,),), 1:], (3, 4))
  same(lambda x: x[[True, False, 2]], lambda x: x[[1, 0, 2]], (5, 6))

def test_advanced_indexing_errors():
  a = Tensor.ones(4, 5, 6)
  with pytest.raises(IndexError): a[Tensor(1.1)]
  with pytest.raises(IndexError): a[[1.1]]
  with pytest.raises(IndexError): a[Tensor([True, False])]
  with pytest.raises(IndexError): a[[True, False]]
  with pytest.raises(IndexError, match="broadcast"): a[Tensor([[0, 1, 2]]), Tensor([0, 1])]

# ================================================================ zero-size dims
def test_zero_size_sum_matmul(dev):
  same(lambda x: x.sum(1), lambda x: x.sum(1), (4, 0), dev=dev)
  same(lambda x: x.sum(0), lambda x: x.sum(0), (4, 0), dev=dev)
  same(lambda x: x.prod(1), lambda x: x.prod(1), (3, 0), dev=dev)
  for a, b in (((3, 0), (0, 2)), ((0, 3), (3, 2)), ((3, 2), (2, 0)), ((0,), (0,))):
    same(lambda x, y: x @ y, lambda x, y: x @ y, a, b, dev=dev)

def test_zero_size_cat_gather_pad(dev):
  same(lambda x, y, z: x.cat(y, z, dim=1), lambda x, y, z: torch.cat((x, y, z), 1), (2, 0, 3), (2, 1, 3), (2, 2, 3), dev=dev)
  same(lambda x, y: x.cat(y, dim=0), lambda x, y: torch.cat((x, y), 0), (2, 0, 3), (1, 0, 3), dev=dev)
  same(lambda x: x.pad((1, 1), value=2.0), lambda x: F.pad(x, (1, 1), value=2.0), (2, 0), dev=dev)
  x = Tensor(rnd(3, 4), device=dev)
  assert x.gather(1, Tensor.zeros(3, 0, dtype=dtypes.int32, device=dev)).shape == (3, 0)
  assert x[Tensor.zeros(0, dtype=dtypes.int32, device=dev)].shape == (0, 4)
  assert x.unfold(1, 0, 2).shape == (3, 3, 0)

def test_gather_errors():
  with pytest.raises(RuntimeError, match="index"): Tensor.ones(4, 5).gather(0, Tensor([1]))
  with pytest.raises(RuntimeError, match="index"): Tensor.ones(2, 1).gather(0, Tensor.zeros(3, 4, dtype=dtypes.int32))

SET_CASES = {
  "one tensor": lambda a, b: (a[:, 0],),
  "two tensors and a slice": lambda a, b: (a, slice(None), b[:1]),
  "int, list and None": lambda a, b: (1, [0, 3], None),
  "ellipsis": lambda a, b: (Ellipsis, b),
}
@pytest.mark.parametrize("case", list(SET_CASES))
def test_advanced_setitem(dev, case):
  x = rnd(3, 4, 5)
  a, b = np.array([[0], [2]]), np.array([1, 3])
  t, tt = Tensor(x, device=dev).contiguous().realize(), torch.tensor(x)
  ix = SET_CASES[case](Tensor(a.astype(np.int32), device=dev), Tensor(b.astype(np.int32), device=dev))
  tix = SET_CASES[case](torch.tensor(a), torch.tensor(b))
  v = rnd(*tt[tix].shape, seed=5)
  t[ix] = Tensor(v, device=dev)
  tt[tix] = torch.tensor(v)
  np.testing.assert_allclose(t.numpy(), tt.numpy())

def test_advanced_setitem_grad_and_duplicates():
  x = Tensor(rnd(4, 3), requires_grad=True)
  y = x * 2
  y[Tensor([0, 2])] = 0.0
  y.sum().backward()
  assert x.grad.numpy().tolist() == [[0] * 3, [2] * 3, [0] * 3, [2] * 3]
  t = Tensor.zeros(5).contiguous().realize()
  t[Tensor([1, 1, 3])] = Tensor([1.0, 2.0, 3.0])  # a place named twice keeps the last value
  assert t.numpy().tolist() == [0, 2, 0, 3, 0]

def test_pad_to_and_shrink_to():
  xn = np.arange(6, dtype=np.float32).reshape(2, 3)
  x = Tensor(xn, requires_grad=True)
  y = x.pad_to(4, None, value=-1)
  np.testing.assert_array_equal(y.numpy(), np.pad(xn, ((0, 2), (0, 0)), constant_values=-1))
  y.sum().backward()
  np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(xn))
  np.testing.assert_array_equal(x.shrink_to(1, 2).numpy(), xn[:1, :2])
  np.testing.assert_array_equal(x.shrink_to((None, 1)).numpy(), xn[:, :1])
  assert x.pad_to((2, 3)) is x
  with pytest.raises(ValueError, match="smaller"): x.pad_to(1, 3)
  with pytest.raises(ValueError, match="one size per dim"): x.shrink_to(1)

@pytest.mark.parametrize("dev", ["CPU", "PYTHON"])
def test_sort_topk_argsort_of_one_element(dev):
  t = Tensor([3.0], device=dev)
  v, i = t.sort(0)
  assert v.tolist() == [3.0] and i.tolist() == [0]
  assert t.argsort().tolist() == [0]
  assert Tensor([[2.0]], device=dev).topk(1)[0].tolist() == [[2.0]]
  assert (Tensor.arange(1, device=dev).reshape(1, 1) < Tensor.arange(1, device=dev).reshape(1, 1)).sum(-1).tolist() == [0]

def test_view_takes_shape_as_keyword_tuple_or_ints():
  # tinygrad's signature is view(shape, *args): scripts call t.view(shape=s) as well as t.view(2, 3)
  x = np.arange(6, dtype=np.float32)
  for got in (Tensor(x).view(shape=(2, 3)), Tensor(x).view(2, 3), Tensor(x).view((2, 3)), Tensor(x).view(2, -1)):
    assert got.shape == (2, 3) and got.numpy().tolist() == x.reshape(2, 3).tolist()
