"""Big reductions with a small output run as two kernels (engine/split_reduce.py): partial results per chunk, then
their combination. What a user checks: the results against numpy (exact for ints, bools, max and argmax; allclose
for float sums, whose order changes), the same result every run, and the kernels it ran."""
import numpy as np
import pytest
from tinygrad import Tensor, GlobalCounters
from tinygrad.engine import realize
from tinygrad.engine.split_reduce import SPLIT_THRESHOLD
from tinygrad.helpers import Context

T = SPLIT_THRESHOLD  # elements reduced into each output from which a reduction is split
rng = np.random.default_rng(0)

def kernels(t: Tensor) -> tuple[np.ndarray, int]:
  """t's value and how many kernels computing it ran."""
  GlobalCounters.reset()
  t.realize()
  return t.numpy(), GlobalCounters.kernel_count

def programs_named(prefix: str) -> list:
  return [p for p in realize._programs.values() if p.name.startswith(prefix)]

@pytest.mark.parametrize("n, split", [(T - 8, False), (T, True), (T + 8, True), (T + 7, False)])
def test_sum_around_the_threshold(n, split):
  # T + 7 has no divisor between 8 and 256: it stays one kernel (as in tinygrad's split_reduceop)
  xn = rng.standard_normal(n, dtype=np.float32)
  x = Tensor(xn).realize()
  got, k = kernels(x.sum())
  assert k == (2 if split else 1)
  np.testing.assert_allclose(got, xn.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)
  for op in ("max", "min"):
    got, k = kernels(getattr(x, op)())
    assert k == (2 if split else 1) and got == getattr(xn, op)()
  got, k = kernels(x.mean())
  np.testing.assert_allclose(got, xn.astype(np.float64).mean(), rtol=1e-5, atol=1e-8)

def test_a_big_sum_is_two_kernels_the_first_on_every_core():
  n = 1 << 24
  xn = rng.standard_normal(n, dtype=np.float32)
  x = Tensor(xn).realize()
  got, k = kernels(x.sum())
  assert k == 2
  np.testing.assert_allclose(got, xn.astype(np.float64).sum(), rtol=1e-5, atol=0.1)
  # the partials: 256 of them, each 65536 floats, the first kernel split over threads with 4 accumulators a thread
  first = programs_named("r_256_65536")
  assert first and first[0].parallel and first[0].src.count("acc3 = acc3 +") == 1, first[0].src if first else realize._programs
  assert any(p.name == "r_256" and not p.parallel for p in realize._programs.values())

def test_same_result_every_run():
  xn = rng.standard_normal(3 * T, dtype=np.float32)
  x = Tensor(xn).realize()
  a, b = x.sum().numpy(), Tensor(xn).sum().numpy()
  assert a.tobytes() == b.tobytes()
  assert (x * 1).sum().numpy().tobytes() == a.tobytes()  # a fused multiply by one: the same kernels' order

@pytest.mark.parametrize("shape, axis", [((4, T), 1), ((T, 4), 0), ((2, 3, T), (0, 2)), ((8, T // 8, 2), None), ((T // 4, 4), None)])
def test_axes(shape, axis):
  xn = rng.standard_normal(shape, dtype=np.float32)
  x = Tensor(xn).realize()
  got, k = kernels(x.sum(axis))
  assert k == 2
  np.testing.assert_allclose(got, xn.astype(np.float64).sum(axis), rtol=1e-5, atol=1e-2)
  np.testing.assert_array_equal(x.max(axis).numpy(), xn.max(axis))
  np.testing.assert_allclose(x.sum(axis, keepdim=True).numpy(), xn.astype(np.float64).sum(axis, keepdims=True), rtol=1e-5, atol=1e-2)

def test_fused_elementwise_input_and_output():
  an, bn = rng.standard_normal(2 * T, dtype=np.float32), rng.standard_normal(2 * T, dtype=np.float32)
  a, b = Tensor(an).realize(), Tensor(bn).realize()
  got, k = kernels(((a * b).sum() / 2 + 1).relu())
  assert k == 2  # the product in the first kernel, the division and relu in the second
  np.testing.assert_allclose(got, max((an.astype(np.float64) * bn).sum() / 2 + 1, 0), rtol=1e-5, atol=1e-2)
  np.testing.assert_allclose(a.square().mean().sqrt().numpy(), np.sqrt((an.astype(np.float64) ** 2).mean()), rtol=1e-5)
  np.testing.assert_allclose(a.std().numpy(), an.astype(np.float64).std(ddof=1), rtol=1e-5)

@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.int64, np.uint32])
def test_int_sums_are_exact(dtype):
  info = np.iinfo(dtype)
  xn = rng.integers(max(info.min, -1000), min(info.max, 1000), 2 * T + 64, dtype=dtype)
  x = Tensor(xn).realize()
  got, k = kernels(x.sum())
  assert k == 1  # only float32 sums and maxes are split: GCC vectorizes an int sum's one loop itself
  assert int(got) == int(xn.sum(dtype=np.int64))  # small ints sum in int32/uint32 (tinygrad's dtypes): no overflow here
  assert int(x.max().numpy()) == int(xn.max()) and int(x.min().numpy()) == int(xn.min())

def test_int32_sum_wraps_as_one_kernel_would():
  # int32 addition wraps: any order of a wrapping sum gives the same bits
  xn = np.full(2 * T, 2**30, dtype=np.int32)
  assert int(Tensor(xn).sum().numpy()) == int(xn.sum(dtype=np.int32))

@pytest.mark.parametrize("where", [0, T, 2 * T - 1])
def test_bool_any_all_exact(where):
  bn = np.zeros(2 * T, dtype=bool)
  bn[where] = True
  b = Tensor(bn).realize()
  assert bool(b.any().numpy()) and not bool(b.all().numpy())
  assert bool((~b).any().numpy()) and not bool((~b).all().numpy())
  assert not bool(Tensor(np.zeros(2 * T, dtype=bool)).any().numpy()) and bool(Tensor(np.ones(2 * T, dtype=bool)).all().numpy())
  assert int(b.sum().numpy()) == 1

@pytest.mark.parametrize("where", [3, T + 5, 2 * T - 1])
def test_argmax_argmin_over_a_big_dim(where):
  xn = rng.standard_normal(2 * T, dtype=np.float32)
  xn[where] = 10.0
  xn[where + 1 if where + 1 < 2 * T else 0] = 10.0  # a tie: the first index wins, as numpy
  xn[(where + 7) % (2 * T)] = -10.0
  x = Tensor(xn).realize()
  assert int(x.argmax().numpy()) == int(xn.argmax()) and int(x.argmin().numpy()) == int(xn.argmin())
  x2 = Tensor(xn.reshape(2, T)).realize()
  np.testing.assert_array_equal(x2.argmax(axis=1).numpy(), xn.reshape(2, T).argmax(axis=1))

def test_half_max_and_sum():
  xn = rng.standard_normal(2 * T).astype(np.float16)
  x = Tensor(xn).realize()
  assert x.max().numpy() == xn.max()
  np.testing.assert_allclose(float(x.sum().numpy()), xn.astype(np.float64).sum(), rtol=1e-2, atol=1.0)

def test_prod_of_ones_and_signs():
  xn = np.where(rng.random(2 * T) < 0.5, -1.0, 1.0).astype(np.float32)
  assert Tensor(xn).prod().numpy() == xn.prod()

def test_gradient_of_a_big_sum():
  xn = rng.standard_normal(2 * T, dtype=np.float32)
  x = Tensor(xn, requires_grad=True)
  (x * 3).sum().backward()
  np.testing.assert_array_equal(x.grad.numpy(), np.full(2 * T, 3, np.float32))

def test_split_reduceop_0_keeps_one_kernel():
  xn = rng.standard_normal(5 * T, dtype=np.float32)
  x = Tensor(xn).realize()
  with Context(SPLIT_REDUCEOP=0):
    got, k = kernels(x.sum())
  assert k == 1
  np.testing.assert_allclose(got, xn.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)

def test_threshold_and_size_from_the_environment(tmp_path):
  import os, subprocess, sys
  script = ("import numpy as np; from tinygrad import Tensor, GlobalCounters\n"
            "x = Tensor(np.ones(1 << 20, dtype=np.float32)).realize(); GlobalCounters.reset()\n"
            "s = x.sum().item()\n"
            "print(GlobalCounters.kernel_count, s == 2.0 ** 20)")  # ones: every partial sum exact
  def run(**env) -> str:
    e = dict(os.environ, TINYVIZ_CACHE=str(tmp_path), **env)
    return subprocess.run([sys.executable, "-c", script], env=e, capture_output=True, text=True, check=True).stdout.split()
  assert run() == ["1", "True"]  # 1M elements: under the default threshold
  assert run(REDUCEOP_SPLIT_THRESHOLD="65536") == ["2", "True"]
  assert run(REDUCEOP_SPLIT_THRESHOLD="65536", SPLIT_REDUCEOP="0") == ["1", "True"]

def test_jitted_big_sum():
  from tinygrad import TinyJit
  f = TinyJit(lambda x: (x * 2).sum())
  for i in range(4):
    xn = rng.standard_normal(2 * T, dtype=np.float32)
    np.testing.assert_allclose(f(Tensor(xn)).numpy(), 2 * xn.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)

def test_many_outputs_are_not_split():
  xn = rng.standard_normal((128, 1 << 14), dtype=np.float32)  # 128 outputs: threads and accumulators have work already
  got, k = kernels(Tensor(xn).sum(1))
  assert k == 1
  np.testing.assert_allclose(got, xn.astype(np.float64).sum(1), rtol=1e-5, atol=1e-3)

def test_long_row_sums_get_accumulators_and_threads():
  # not split (4096 outputs), but each row's sum is long and reads its own elements: 4 rows at a time, each its own
  # vector accumulator, and 64 MiB read: every core
  xn = rng.standard_normal((4096, 4096), dtype=np.float32)
  x = Tensor(xn).realize()
  got, k = kernels(x.sum(1))
  assert k == 1
  np.testing.assert_allclose(got, xn.astype(np.float64).sum(1), rtol=1e-4, atol=1e-3)
  p = next(p for p in realize._programs.values() if p.name == "r_4096_4096" and "acc3 = acc3 +" in p.src)
  assert p.parallel

def test_the_split_is_a_rewrite_of_the_schedule_in_the_trace():
  from tinygrad import tracing
  from profiler.recorder import Recorder
  x = Tensor(rng.standard_normal(3 * T, dtype=np.float32)).realize()
  got: list = []
  rec = Recorder("viz", sinks=[got.extend])
  tracing.tracer = rec
  try:
    x.sum().realize()
    (x[:100] * 2).sum().realize()  # a small sum: its schedule has no such rewrite
  finally:
    tracing.tracer = None
    rec.close()
  ctx_kind = {d["id"]: d["kind"] for d in got if d["type"] == "context_begin"}
  splits = [d for d in got if d["type"] == "rewrite" and d["name"] == "schedule: split big reductions"]
  assert len(splits) == 1 and ctx_kind[splits[0]["ctx"]] == "schedule" and splits[0]["matches"]

def test_sharded_sum():
  xn = rng.standard_normal(4 * T, dtype=np.float32)
  x = Tensor(xn).shard(("CPU:0", "CPU:1"), axis=0)
  np.testing.assert_allclose(x.sum().numpy(), xn.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)
