"""Scheduling: what becomes a kernel, kernel names, and that each step is a named graph_rewrite."""
import numpy as np, pytest
from tinygrad import Tensor, GlobalCounters
from tinygrad.uop.ops import Ops
from tinygrad.engine.schedule import create_schedule

def kernels(t: Tensor) -> list:
  items, _ = create_schedule([t.uop])
  return [i for i in items if i.kind == "kernel"]

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

def test_cumsum_matches_numpy():
  x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
  for axis in (0, 1): np.testing.assert_allclose(Tensor(x).cumsum(axis).numpy(), x.cumsum(axis), rtol=1e-5, atol=1e-6)
