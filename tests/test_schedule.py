"""Scheduling: what becomes a kernel, kernel names, and that each step is a named graph_rewrite."""
import numpy as np, pytest
from tinygrad import Tensor, GlobalCounters
from tinygrad.uop.ops import Ops
from tinygrad.engine.schedule import create_schedule, kernel_params
from tinygrad.engine import realize as R

def kernels(t: Tensor) -> list:
  items, _ = create_schedule([t.uop])
  return [i for i in items if i.kind == "kernel"]

def conv_op_by_op(img: Tensor, w: Tensor) -> Tensor:
  """A 3x3 convolution with padding 1 written out as movement ops and one reduction, so its gradient is derived op by
  op (Tensor.conv2d's input gradient is a convolution instead): the windowed tensor, then window sums."""
  (N, cin, H, W), cout = img.shape, w.shape[0]
  x = img.pad((1, 1, 1, 1)).contiguous()._pool((3, 3), (1, 1), (1, 1))
  return (x.reshape(N, 1, cin, H, W, 3, 3) * w.reshape(1, cout, cin, 1, 1, 3, 3)).sum((2, 5, 6))

@pytest.fixture
def ab():
  a, b = Tensor.rand(16, 16).realize(), Tensor.rand(16, 16).realize()
  return a, b

def test_elementwise_chain_is_one_kernel(ab):
  a, b = ab
  assert len(kernels(((a * b + 3).relu() - a.exp()).sqrt())) == 1

def test_reduce_with_elementwise_after_is_one_kernel(ab):
  a, b = ab
  assert len(kernels((a * b).sum(1) * 2 + 1)) == 1

def test_reduce_feeding_a_broadcast_ends_its_kernel(ab):
  a, _ = ab
  assert len(kernels(a - a.max(1, keepdim=True))) == 2
  assert len(kernels(a.softmax(-1))) == 3

def test_two_independent_reduces_fuse_into_their_consumer(ab):
  a, b = ab
  assert len(kernels(a.sum(1) + b.sum(1))) == 1

def test_a_short_reduce_read_once_by_another_runs_inside_it():
  # a window sum (reduce of 5) read through permute/pad/shrink by another reduce: one kernel, nested loops, and the
  # index math both loops share (and the store after them uses) declared where both can see it
  x = Tensor.rand(6, 4, 5).realize()
  t = x.sum(2).permute(1, 0).pad(((0, 0), (2, 1))).shrink(((1, 4), (0, 8))).sum(1)
  assert len(kernels(t)) == 1
  ref = np.pad(x.numpy().sum(2).T, ((0, 0), (2, 1)))[1:4, 0:8].sum(1)
  np.testing.assert_allclose(t.numpy(), ref, rtol=1e-5)
  # a convolution's op-by-op input gradient: its window sums over y and x run as one kernel
  w = Tensor.rand(8, 4, 3, 3, requires_grad=True)
  img = Tensor.rand(2, 4, 8, 8, requires_grad=True)
  conv_op_by_op(img, w).sum().backward()
  names = [R.get_program(kernel_params(k)[0], "CPU").name for k in kernels(img.grad)]
  assert not any(n.startswith("r_2_4_8_3_10") for n in names), names  # the first of the two passes would be this

def test_reduces_that_would_recompute_or_are_long_still_end_their_kernel():
  x = Tensor.rand(6, 4, 32).realize()
  assert len(kernels(x.sum(2).permute(1, 0).sum(1))) == 2  # a reduce of 32 is not nested
  y = Tensor.rand(6, 4, 5).realize()
  assert len(kernels(y.sum(2).reshape(6, 4, 1).expand(6, 4, 3).sum(1))) == 2  # through an EXPAND: would run 3 times
  np.testing.assert_allclose(y.sum(2).reshape(6, 4, 1).expand(6, 4, 3).sum(1).numpy(), np.repeat(y.numpy().sum(2)[..., None], 3, 2).sum(1), rtol=1e-5)

def test_math_on_buffered_reductions_summed_once_runs_inside_the_sum():
  """A batchnorm gradient's channel sum of (x - mean) * g, x a convolution's output: the mean has its buffer (it is
  broadcast), x too (read by the mean and by the sum), so (x - mean) * g is loads of buffers, read once by the sum: it
  runs in the sum's loop, not written out first (3 kernels: conv, mean, sum). Read by two reductions, or through a
  broadcast, it still gets its buffer. numpy's numbers."""
  rng = np.random.default_rng(0)
  a_np, w_np, g_np = (rng.standard_normal(s).astype(np.float32) for s in ((64, 48), (48, 32), (64, 32)))
  a, w, g = Tensor(a_np).realize(), Tensor(w_np).realize(), Tensor(g_np).realize()
  x = a @ w
  d = (x - x.mean(0)) * g
  ks = kernels(d.sum(0))
  assert len(ks) == 3 and all(any(u.op is Ops.REDUCE_AXIS for u in k.ast.toposort()) for k in ks), [k.ast for k in ks]  # no elementwise kernel
  xn = a_np @ w_np
  np.testing.assert_allclose(d.sum(0).numpy(), ((xn - xn.mean(0)) * g_np).sum(0), rtol=1e-4, atol=1e-3)
  assert len(kernels(d.sum(0) + (d * d).sum(0))) == 4  # read by two sums: written out once (conv, mean, d, the sums)

def test_realize_counts_kernels_and_values(ab):
  a, b = ab
  GlobalCounters.reset()
  out = (a @ b + 1).relu().numpy()
  assert GlobalCounters.kernel_count == 1
  np.testing.assert_allclose(out, np.maximum(a.numpy() @ b.numpy() + 1, 0), rtol=1e-5)

def test_kernel_names_follow_tinygrad():
  from tinygrad.engine.realize import kernel_name
  from tinygrad.engine.schedule import kernel_params
  x = Tensor.rand(4, 8).realize()
  assert kernel_name(kernel_params(kernels(x * 2)[0])[0]) == "E_4_8"
  assert kernel_name(kernel_params(kernels(x.sum(1))[0])[0]) == "r_4_8"
  assert kernel_name(kernel_params(kernels(x.sum())[0])[0]) == "r_4_8"

def test_realized_tensor_becomes_buffer():
  t = Tensor([1, 2, 3, 4])
  assert t.uop.op is Ops.COPY
  t.realize()
  assert t.uop.op is Ops.BUFFER
  u = (t + 1)
  u.realize()
  assert u.uop.op is Ops.BUFFER and u.tolist() == [2, 3, 4, 5]

def test_view_of_a_buffer_needs_no_kernel():
  t = Tensor([[1, 2], [3, 4]]).realize()
  assert kernels(t.reshape(4)) == []
  assert len(kernels(t.T)) == 1

def test_schedule_steps_are_named_rewrites_in_a_schedule_context():
  from tinygrad import tracing
  from profiler.recorder import Recorder
  got = []
  rec = Recorder("viz", sinks=[got.extend])
  tracing.tracer = rec
  try: (Tensor.rand(3, 5) * 7 + 1).sum(0).realize()
  finally:
    tracing.tracer = None
    rec.close()
  ctx_kind = {d["id"]: d["kind"] for d in got if d["type"] == "context_begin"}
  rewrites = {d["name"]: ctx_kind[d["ctx"]] for d in got if d["type"] == "rewrite"}
  assert rewrites["schedule: mark realize points"] == rewrites["schedule: split into kernels"] == "schedule"
  assert rewrites["kernel: buffers to params"] == "schedule"
  assert rewrites["lower: index to loops"] == "kernel"

def test_kernel_whose_inputs_simplify_away_still_gets_the_right_buffers():
  # x*0 drops a buffer from the kernel body; the remaining ones must still line up with the arguments
  a, b, c = Tensor([1.0, 2.0]), Tensor([3.0, 4.0]), Tensor([5.0, 6.0])
  assert ((a * 0 + b) / c).tolist() == pytest.approx([0.6, 4 / 6])

def test_a_convolutions_input_gradient_is_a_convolution():
  """Tensor.conv2d's input gradient is the flipped kernel run over the padded gradient: no buffer kh*kw times the
  input's size is written (the op-by-op derivative writes one, then sums its windows back into the image)."""
  w = Tensor.rand(16, 4, 3, 3, requires_grad=True)  # 16 output channels: too many to sum nested in the window sums
  img = Tensor.rand(2, 4, 8, 8, requires_grad=True)
  img.conv2d(w, padding=1).square().sum().backward()
  img2, w2 = Tensor(img.detach().numpy(), requires_grad=True), Tensor(w.detach().numpy(), requires_grad=True)
  conv_op_by_op(img2, w2).square().sum().backward()
  windowed = 2 * 4 * 8 * 8 * 9
  assert windowed not in [kernel_params(k)[1][0].arg[1] for k in kernels(img.grad)]
  assert windowed in [kernel_params(k)[1][0].arg[1] for k in kernels(img2.grad)]
  np.testing.assert_allclose(img.grad.numpy(), img2.grad.numpy(), rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-4, atol=1e-4)

def test_cumsum_matches_numpy():
  x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
  for axis in (0, 1): np.testing.assert_allclose(Tensor(x).cumsum(axis).numpy(), x.cumsum(axis), rtol=1e-5, atol=1e-6)

def test_window_sums_index_without_division():
  # a convolution's input gradient sums windows back into the image; the lowering turns the window position
  # `(r*10+x) % 11` into `x-r` under the load's gate, so the kernel has no division or modulo left
  w = Tensor.rand(16, 4, 3, 3).realize()
  img = Tensor.rand(2, 4, 8, 8, requires_grad=True)
  conv_op_by_op(img, w).sum().backward()
  srcs = {R.get_program(kernel_params(k)[0], "CPU").name: R.get_program(kernel_params(k)[0], "CPU").src for k in kernels(img.grad)}
  window = next(s for n, s in srcs.items() if n.startswith("r_2_4_10_10_"))
  assert "%" not in window and "/" not in window, window
  ref = np.zeros((2, 4, 10, 10), np.float32)
  for ky in range(3):
    for kx in range(3): ref[:, :, ky:ky + 8, kx:kx + 8] += w.numpy()[:, :, ky, kx].sum(0)[None, :, None, None]
  np.testing.assert_allclose(img.grad.numpy(), ref[:, :, 1:9, 1:9], rtol=1e-5)

def test_indexing_rows_by_a_tensor_is_a_gather_not_a_sum_over_every_row():
  """X[idx] is built as a one-hot sum over X's rows (tinygrad's idiom); the lowering turns it into one gated load per
  element: no loop over the 500 rows, and an index outside the rows gives 0 as the one-hot sum would."""
  x = np.random.default_rng(0).standard_normal((500, 3, 4)).astype(np.float32)
  X, idx = Tensor(x).realize(), Tensor([3, 499, 0, -1, -500]).realize()
  out = X[idx]
  src = R.get_program(kernel_params(kernels(out)[-1])[0], "CPU").src
  assert "for (int ridx" not in src and "500" in src, src
  np.testing.assert_array_equal(out.numpy(), x[[3, 499, 0, -1, -500]])
  # the one-hot form it replaces, written out: an index past the rows matches no row
  far = Tensor([2, 700]).realize()
  onehot = (far.reshape(2, 1, 1) == Tensor.arange(500).reshape(1, 1, 500)).where(X.reshape(1, 500, 12).expand(2, 500, 12).permute(0, 2, 1), 0).sum(2)
  assert "for (int ridx" not in R.get_program(kernel_params(kernels(onehot)[-1])[0], "CPU").src
  np.testing.assert_array_equal(onehot.numpy(), np.stack([x[2].reshape(12), np.zeros(12, np.float32)]))

def test_an_embedding_lookup_is_a_gather():
  """nn.Embedding's one-hot matmul (tinygrad's way to write it) reads one row per token, not the whole table."""
  from tinygrad import nn
  emb = nn.Embedding(1000, 16)
  table = emb.weight.numpy()
  tokens = Tensor([[1, 5, 999], [0, 0, 7]]).realize()
  out = emb(tokens)
  src = R.get_program(kernel_params(kernels(out)[-1])[0], "CPU").src
  assert "for (int ridx" not in src, src
  np.testing.assert_array_equal(out.numpy(), table[[[1, 5, 999], [0, 0, 7]]])

def test_assigns_that_read_each_others_old_values_swap_through_a_copy():
  """`a.assign(b*2); b.assign(a*3)`: each kernel must read the other's buffer before it is overwritten, a cycle no order
  satisfies; the old value of one is copied first (as torch computes it), for two and for three such assigns."""
  a, b, c = (Tensor(v).contiguous().realize() for v in ([1., 2, 3], [4., 5, 6], [7., 8, 9]))
  na, nb = b * 2, a * 3
  a.assign(na); b.assign(nb)
  Tensor.realize(a, b)
  np.testing.assert_array_equal(a.numpy(), [8, 10, 12]); np.testing.assert_array_equal(b.numpy(), [3, 6, 9])
  va, vb, vc = a.numpy(), b.numpy(), c.numpy()
  na, nb, nc = b + 1, c + 1, a + 1  # a <- b <- c <- a
  a.assign(na); b.assign(nb); c.assign(nc)
  Tensor.realize(a, b, c)
  for t, want in ((a, vb + 1), (b, vc + 1), (c, va + 1)): np.testing.assert_array_equal(t.numpy(), want)
