# setitem with tensor (or list) indices, `t[idx] = v`: one scatter kernel (codegen/scatter.py) that stores each value
# at its computed flat position, in order. Checked against numpy (and torch's index_put_ where numpy has no word).
import numpy as np
import pytest
import torch
from tinygrad import Tensor, TinyJit, dtypes
from tinygrad.engine import realize

def rnd(*shape, seed=0): return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

@pytest.fixture(params=["CPU", "PYTHON"])
def dev(request): return request.param

def tensor_idx(i, dev):
  return tuple(tensor_idx(x, dev) for x in i) if isinstance(i, tuple) else Tensor(i, device=dev) if isinstance(i, np.ndarray) else i

CASES = [  # (shape, index, value shape or None for a scalar)
  ((6,), np.array([4, 0, 2]), (3,)),
  ((6,), np.array([-1, -6, 3]), (3,)),                                   # negative indices count from the end
  ((4, 5), np.array([[0, 3], [2, 1]]), (2, 2, 5)),                       # a 2-d index: whole rows
  ((4, 5), (np.array([0, 3, 1]), np.array([4, 0, 2])), (3,)),            # two indices: points
  ((4, 5, 6), (slice(None), np.array([1, 3]), slice(1, 5)), (4, 2, 4)),   # tensor index between slices
  ((3, 4, 5, 6), (slice(None), np.array([2, 0]), slice(None), np.array([[5], [1]])), (2, 2, 3, 5)),  # split: B dims first
  ((3, 4, 5), (1, np.array([0, 2]), slice(None, None, 2)), (2, 3)),       # an int, a tensor, a strided slice
  ((3, 4, 5), (Ellipsis, np.array([4, 0])), (3, 4, 2)),
  ((3, 4, 5), (None, np.array([2, 0]), slice(1, 3)), (1, 2, 2, 5)),       # None adds a dim, as in numpy
  ((4, 5), np.array([3, 1]), None),                                      # a scalar fills the rows
  ((4, 5), np.array([3, 1]), (5,)),                                      # broadcast: one row for each index
  ((4, 5), (np.array([[0], [3]]), np.array([1, 2, 4])), (1, 3)),         # indices broadcast together; value broadcasts too
]

@pytest.mark.parametrize("shape,idx,vshape", CASES)
def test_setitem_tensor_index_matches_numpy(dev, shape, idx, vshape):
  a = rnd(*shape)
  val = rnd(*vshape, seed=1) if vshape is not None else np.float32(2.5)
  ref = a.copy()
  ref[idx] = val
  t = Tensor(a, device=dev).contiguous().realize()
  t[tensor_idx(idx, dev)] = Tensor(val, device=dev) if vshape is not None else 2.5
  np.testing.assert_array_equal(t.numpy(), ref)

def test_lazy_target(dev):
  # a tensor not realized yet (`zeros().contiguous()`, as tinygrad's tests write it) takes the write too
  t = Tensor.zeros(3, 4, dtype=dtypes.int32, device=dev).contiguous()
  t[Tensor([2, 0], device=dev)] = Tensor.arange(8, device=dev).reshape(2, 4)
  ref = np.zeros((3, 4), np.int32)
  ref[[2, 0]] = np.arange(8).reshape(2, 4)
  np.testing.assert_array_equal(t.numpy(), ref)

def test_duplicates_last_value_stays(dev):
  # a place named twice keeps the last value, in the index's row-major order (numpy's order; tinygrad 0.14's)
  t = Tensor.zeros(6, device=dev).contiguous().realize()
  idx = np.array([1, 4, 1, 1, 4, 0])
  vals = np.arange(1, 7, dtype=np.float32)
  t[Tensor(idx, device=dev)] = Tensor(vals, device=dev)
  ref = np.zeros(6, np.float32)
  ref[idx] = vals
  np.testing.assert_array_equal(t.numpy(), ref)
  np.testing.assert_array_equal(t.numpy(), [6, 4, 0, 0, 5, 0])
  # the same through a 2-d index and negative aliases of one place
  t = Tensor.zeros(4, 3, device=dev).contiguous().realize()
  t[Tensor([[2, -2], [0, -4]], device=dev)] = Tensor(rnd(2, 2, 3), device=dev)
  ref = np.zeros((4, 3), np.float32)
  ref[np.array([[2, -2], [0, -4]])] = rnd(2, 2, 3)
  np.testing.assert_array_equal(t.numpy(), ref)

def test_duplicates_match_torch_index_put():
  a, idx, v = rnd(50), np.random.default_rng(3).integers(0, 50, 400), rnd(400, seed=2)
  t = Tensor(a).contiguous().realize()
  t[Tensor(idx)] = Tensor(v)
  ref = torch.tensor(a).index_put_((torch.tensor(idx),), torch.tensor(v))  # one CPU thread: the last write stays too
  np.testing.assert_array_equal(t.numpy(), ref.numpy())

@pytest.mark.parametrize("dtype", [dtypes.int8, dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float64, dtypes.bool])
def test_dtypes(dtype):
  npdt = {dtypes.int8: np.int8, dtypes.uint8: np.uint8, dtypes.int32: np.int32, dtypes.int64: np.int64,
          dtypes.float16: np.float16, dtypes.float64: np.float64, dtypes.bool: np.bool_}[dtype]
  a = (np.arange(24) % 7).astype(npdt).reshape(4, 6)
  v = (np.arange(12) % 5 == 0).astype(npdt).reshape(2, 6) if dtype == dtypes.bool else (np.arange(12) * 3 - 9).astype(npdt).reshape(2, 6)
  ref = a.copy()
  ref[[3, 1]] = v
  t = Tensor(a, dtype=dtype).contiguous().realize()
  t[Tensor([3, 1])] = Tensor(v, dtype=dtype)
  assert t.dtype == dtype
  np.testing.assert_array_equal(t.numpy(), ref)

def test_out_of_range_writes_nothing(dev):
  # tinygrad drops a write through an index out of range (reading there gives 0); numpy would raise. The places in
  # range take theirs, nothing outside the tensor is touched (the kernel's spare place takes the rest)
  t = Tensor.arange(5, device=dev).float().contiguous().realize()
  t[Tensor([1, 5, -6, 100, 3], device=dev)] = Tensor([10., 20., 30., 40., 50.], device=dev)
  np.testing.assert_array_equal(t.numpy(), [0, 10, 2, 50, 4])
  t = Tensor.zeros(3, 3, device=dev).contiguous().realize()
  t[Tensor([0, 3], device=dev), Tensor([1, 1], device=dev)] = 7.0  # one component out of range: no alias of (1, 1)
  np.testing.assert_array_equal(t.numpy(), [[0, 7, 0], [0, 0, 0], [0, 0, 0]])

def test_errors():
  t = Tensor.zeros(4, 5).contiguous().realize()
  with pytest.raises(IndexError, match="integers"): t[Tensor([0.5, 1.0])] = 1.0
  with pytest.raises(IndexError, match="broadcast"): t[Tensor([0, 1]), Tensor([0, 1, 2])] = 1.0
  with pytest.raises(RuntimeError, match="dtype"): t[Tensor([0])] = Tensor([[1, 2, 3, 4, 5]], dtype=dtypes.int32)
  with pytest.raises(ValueError): t[Tensor([0, 1])] = Tensor.ones(3, 5)  # the value doesn't broadcast to (2, 5)

def test_value_reads_the_target():
  # the right side is taken before the write, as numpy: t[[0, 1]] = t[[3, 4]]
  t = Tensor.arange(5).float().contiguous().realize()
  t[Tensor([0, 1])] = t[Tensor([3, 4])]
  np.testing.assert_array_equal(t.numpy(), [3, 4, 2, 3, 4])

def test_readers_of_the_old_value_keep_it():
  a = Tensor.arange(5).float().contiguous().realize()
  b = a + 1  # lazy: reads a before the write
  a[Tensor([0, 4])] = 100.0
  np.testing.assert_array_equal(b.numpy(), [1, 2, 3, 4, 5])
  np.testing.assert_array_equal(a.numpy(), [100, 1, 2, 3, 100])

def test_after_a_pending_assign():
  t = Tensor.ones(4).contiguous().realize()
  t += 1
  t[Tensor([1])] = 9.0
  t += 1
  np.testing.assert_array_equal(t.numpy(), [3, 10, 3, 3])

def test_through_a_view():
  # a view of a realized tensor writes the tensor underneath (tests/test_setitem_views.py), with tensor indices too
  t = Tensor.zeros(3, 4).contiguous().realize()
  t.T[Tensor([1, 3])] = Tensor([[1., 2., 3.], [4., 5., 6.]])
  ref = np.zeros((3, 4), np.float32)
  ref.T[[1, 3]] = [[1, 2, 3], [4, 5, 6]]
  np.testing.assert_array_equal(t.numpy(), ref)

def test_gradient_still_flows():
  # a value that takes a gradient keeps the differentiable (one-hot) path: d/dw sum(t**2) with t[idx] = 2w is 8w
  w = Tensor([1., 2., 3.], requires_grad=True)
  t = Tensor.zeros(5).contiguous()
  t[Tensor([0, 2, 4])] = w * 2
  (t * t).sum().backward()
  wt = torch.tensor([1., 2., 3.], requires_grad=True)
  tt = torch.zeros(5).index_put((torch.tensor([0, 2, 4]),), wt * 2)
  (tt * tt).sum().backward()
  np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy())

def test_in_a_jit():
  z = Tensor.zeros(6).contiguous().realize()
  @TinyJit
  def f(idx: Tensor, v: Tensor) -> Tensor:
    z[idx] = v
    return z.realize()
  ref = np.zeros(6, np.float32)
  for i in range(4):  # captured on the second call, replayed after: each call's indices and values are its own
    idx, v = np.array([i, (i + 2) % 6]), np.array([i + 1, 10 + i], np.float32)
    ref[idx] = v
    np.testing.assert_array_equal(f(Tensor(idx), Tensor(v)).numpy(), ref)

def test_one_scatter_kernel_stores_at_loaded_positions():
  # the write is a kernel whose store index is computed from a load (data0[alu] = val under the range gate), looping
  # over the 3 values on one thread, not a compare per place
  t = Tensor.zeros(1000).contiguous().realize()
  idx, v = Tensor([5, 999, 5]).realize(), Tensor([1., 2., 3.]).realize()
  before = set(realize._programs)
  t[idx] = v
  t.realize()
  new = [p for k, p in realize._programs.items() if k not in before]
  assert len(new) == 1, [p.src for p in new]
  src = new[0].src
  assert new[0].global_size == () and "for (int ridx0 = 0; ridx0 < 3; ridx0++)" in src and "data1[ridx0]" in src, src
  assert any(ln.strip().startswith("if (") and "data0[" in ln for ln in src.splitlines()), src
  np.testing.assert_array_equal(t.numpy()[[5, 999, 0]], [3, 2, 0])

def test_large_advanced_write_matches_numpy():
  # numpy's example of combining advanced and basic indexing (tinygrad's test_setitem_advanced_indexing, smaller)
  t = Tensor.zeros(5, 20, 6, 40, 7, dtype=dtypes.int32).contiguous()
  i1, i2 = np.array([5, 3, 7, 8]), np.array([[[0], [1], [2]], [[3], [4], [5]]])
  v = np.arange(2 * 3 * 4 * 5 * 6 * 7, dtype=np.int32).reshape(2, 3, 4, 5, 6, 7)
  t[:, Tensor(i1), :, Tensor(i2), :] = Tensor(v)
  ref = np.zeros((5, 20, 6, 40, 7), np.int32)
  ref[:, i1, :, i2, :] = v
  np.testing.assert_array_equal(t.numpy(), ref)

def test_index_past_32_bits():
  # a broadcast dim reads its one element whatever the index (tinygrad's test_tensor_index_overflow)
  big = Tensor([1]).expand(2**31 + 3)
  np.testing.assert_array_equal(big[Tensor([0, 2**31 + 2])].numpy(), [1, 1])
  np.testing.assert_array_equal(big[Tensor([2**31 + 3, -1])].numpy(), [0, 1])  # out of range reads 0, as any index
  two = Tensor([[1], [2]]).expand(2, 2**31 + 3)
  np.testing.assert_array_equal(two[Tensor([1, 0, 2]), Tensor([5, 2**31 + 2, 0])].numpy(), [2, 1, 0])
  with pytest.raises(IndexError, match="32-bit"): Tensor.arange(3).expand(2**30, 3).contiguous()[Tensor([0]), Tensor([1])]

def test_writes_in_a_row_mixed_with_other_writes():
  # each write sees the ones before it, whatever kind (a pending scatter, a slice write, +=, a view's tensor index)
  t, ref = Tensor.zeros(6).contiguous().realize(), np.zeros(6, np.float32)
  t[Tensor([1, 3])] = Tensor([1., 2.]); ref[[1, 3]] = [1, 2]
  t[0:2] = 5; ref[0:2] = 5
  t[Tensor([4])] = 7.; ref[[4]] = 7
  t += 1; ref += 1
  t[Tensor([5])] = 9.; ref[[5]] = 9
  t[2:4][Tensor([1])] = -1.; ref[2:4][[1]] = -1
  np.testing.assert_array_equal(t.numpy(), ref)
  m, mr = Tensor.zeros(3, 3).contiguous().realize(), np.zeros((3, 3), np.float32)
  m[Tensor([0, 2])] = Tensor([[1., 2., 3.], [4., 5., 6.]]); mr[[0, 2]] = [[1, 2, 3], [4, 5, 6]]
  m.T[Tensor([1])] = Tensor([[7., 8., 9.]]); mr.T[[1]] = [[7, 8, 9]]
  np.testing.assert_array_equal(m.numpy(), mr)

def test_in_place_write_is_one_kernel_over_the_values():
  # a realized target takes the write in place: the one kernel run loops over the 3 values, not the 1000 places
  t = Tensor.zeros(1000).contiguous().realize()
  idx, v = Tensor([7, 999, 7]).realize(), Tensor([1., 2., 3.]).realize()
  t[idx] = v
  items = Tensor.realize_all([t])
  assert [it.kind for it in items] == ["kernel"] and items[0].ast.src[0].op.name == "STORE" and len(items[0].ast.src[0].src) == 3
  np.testing.assert_array_equal(t.numpy()[[7, 999, 0]], [3, 2, 0])
  # a gradient through the target: the scatter is pending in its graph, and backward sees through the write
  w = Tensor.ones(1000, requires_grad=True)
  (t * w).sum().backward()
  np.testing.assert_array_equal(w.grad.numpy()[[7, 999, 0]], [3, 2, 0])

@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_kernel_matches_torch(reduce, include_self):
  # scatter_reduce without a gradient: the scatter kernel combining in place (duplicates many: 20 values into 6 rows)
  rng = np.random.default_rng(5)
  a, src, idx = rnd(6, 7), rnd(20, 7, seed=6), rng.integers(0, 6, (20, 5))
  got = Tensor(a).scatter_reduce(0, Tensor(idx), Tensor(src), reduce, include_self=include_self).numpy()
  ref = torch.tensor(a).scatter_reduce(0, torch.tensor(idx), torch.tensor(src), reduce, include_self=include_self).numpy()
  np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)
  ai, si = (a * 10).astype(np.int32), (src * 10).astype(np.int32)
  got = Tensor(ai).scatter_reduce(1, Tensor(idx[:6]), Tensor(si[:6]), reduce, include_self=include_self).numpy()
  ref = torch.tensor(ai).scatter_reduce(1, torch.tensor(idx[:6]), torch.tensor(si[:6]), reduce, include_self=include_self).numpy()
  np.testing.assert_array_equal(got, ref)

def test_scatter_kernel_matches_torch():
  rng = np.random.default_rng(7)
  a, src = rnd(300, 4), rnd(500, 4, seed=8)
  idx = rng.integers(0, 300, (500, 3))  # duplicates: the last (row-major) stays, as torch's CPU loop
  np.testing.assert_array_equal(Tensor(a).scatter(0, Tensor(idx), Tensor(src)).numpy(),
                                torch.tensor(a).scatter(0, torch.tensor(idx), torch.tensor(src)).numpy())
  np.testing.assert_array_equal(Tensor(a).scatter(1, Tensor(idx[:300, :2] % 4), 2.5).numpy(),
                                torch.tensor(a).scatter(1, torch.tensor(idx[:300, :2] % 4), 2.5).numpy())
  # big: 100k values into 1M places (a one-hot would be 10^11 compares); np.add.at is the reference for the sum
  big, bi = np.zeros(1_000_000, np.float32), rng.integers(0, 1_000_000, 100_000)
  ref = big.copy()
  np.add.at(ref, bi, 1.0)
  np.testing.assert_array_equal(Tensor(big).scatter_reduce(0, Tensor(bi), Tensor.ones(100_000), "sum").numpy(), ref)

def test_views_take_the_write_in_place():
  # views by transposes, slices, flips, reshapes and detach() write the tensor underneath (numpy's views do), one
  # scatter kernel into its buffer; a lazy reader of the old value keeps it
  t, r = Tensor.zeros(4, 5).contiguous().realize(), np.zeros((4, 5), np.float32)
  t.T[Tensor([1, 3])] = Tensor(np.arange(8, dtype=np.float32).reshape(2, 4)); r.T[[1, 3]] = np.arange(8).reshape(2, 4)
  t[1][Tensor([0, 4, 0])] = Tensor([7., 8., 9.]); r[1][[0, 4, 0]] = [7, 8, 9]
  t[::-1, 1:4][Tensor([0])] = -1.; r[::-1, 1:4][[0]] = -1
  t.reshape(20)[Tensor([19, 0])] = 5.; r.reshape(20)[[19, 0]] = 5
  t.detach()[Tensor([2])] = 3.; r[[2]] = 3
  np.testing.assert_array_equal(t.numpy(), r)
  a = t.T
  a[Tensor([0])] = 42.; r.T[[0]] = 42
  np.testing.assert_array_equal(a.numpy(), r.T)
  np.testing.assert_array_equal(t.numpy(), r)
  b = t + 0
  old = r.copy()
  t[1:3][Tensor([0])] = 11.; r[1:3][[0]] = 11
  np.testing.assert_array_equal(b.numpy(), old)
  np.testing.assert_array_equal(t.numpy(), r)

def test_through_a_reshape_after_a_pending_assign():
  # t += 1 is pending when t.reshape(20) is written: it runs once, then the write (the one-hot path lost this write)
  t = Tensor.zeros(4, 5).contiguous().realize()
  t += 1
  t.reshape(20)[Tensor([19, 0])] = 5.
  ref = np.ones(20, np.float32)
  ref[[19, 0]] = 5
  np.testing.assert_array_equal(t.numpy().ravel(), ref)
