"""Every optimization plan of the CPU code generator computes the same numbers: each plan (scalar copies, vector
lanes along each output dim, lanes along the reduction) of real kernels is compiled with the real C compiler, run,
and checked against numpy; and the cost model picks vector code where a user would expect it."""
import json, re
import numpy as np
import pytest
from tinygrad import Tensor
from tinygrad.uop.ops import Ops, UOp
from tinygrad.dtype import dtypes
from tinygrad.engine.schedule import create_schedule, kernel_params
from tinygrad.engine import realize as R
from tinygrad.codegen.lowerer import lower_kernel
from tinygrad.codegen.opts import candidate_plans
from tinygrad.codegen.linearize import linearize
from tinygrad.device import Device, Buffer

rng = np.random.default_rng(0)
def T(*shape): return Tensor(rng.standard_normal(shape, dtype=np.float32)).realize()

def _cases():
  a, b, bt, c, m = T(32, 48), T(48, 40), T(40, 48), T(40), T(32, 40)
  x, w, g, g4 = T(4, 3, 8, 8), T(16, 3, 3, 3), T(4, 16, 8, 8), T(4, 16, 4, 4)
  a6, b96, a12, bt64, w32 = T(6, 40), T(40, 96), T(12, 40), T(64, 40), T(32, 3, 3, 3)
  a26, b1024 = T(26, 272), T(272, 1024)  # B bigger than L2 (1.1 MiB), its rows 4 KiB apart: the packed 6-row tile
  x4, w4, x24, w5 = T(4, 16, 6, 6), T(32, 16, 3, 3), T(2, 4, 24, 24), T(32, 4, 5, 5)
  xp = Tensor(np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1)))).realize()
  xp16, w16 = T(4, 16, 10, 10), T(32, 16, 3, 3)
  return {
    "matmul": (lambda: a @ b, lambda: a.numpy() @ b.numpy()),
    "matmul with a transposed operand": (lambda: a @ bt.T, lambda: a.numpy() @ bt.numpy().T),
    # a padded window read straight from the unpadded input: per-lane gates
    "conv with padding in the kernel": (lambda: (x.pad((1, 1, 1, 1))._pool((3, 3), (1, 1), (1, 1)).reshape(4, 1, 3, 8, 8, 3, 3) * w.reshape(1, 16, 3, 1, 1, 3, 3)).sum((2, 5, 6)),
                                        lambda: _np_conv(x.numpy(), w.numpy())),
    # wide tiles: two vectors along the columns (or a conv's output channels), each row's load shared by both; 6 rows
    # are all upcast (6x2 vectors), 12 rows by 4 (the 8 of an 8x2 tile doesn't divide them)
    "matmul, 6 rows by 96 columns": (lambda: a6 @ b96, lambda: a6.numpy() @ b96.numpy()),
    "matmul, 12 rows, transposed operand": (lambda: a12 @ bt64.T, lambda: a12.numpy() @ bt64.numpy().T),
    # 26 rows: 4 tiles of 6 and a last one whose copies past row 25 compute row 25 again; B's column panel packed
    "matmul, 26 rows by 1024 columns, B packed": (lambda: a26 @ b1024, lambda: a26.numpy() @ b1024.numpy()),
    "conv with 32 output channels": (lambda: (x.pad((1, 1, 1, 1))._pool((3, 3), (1, 1), (1, 1)).reshape(4, 1, 3, 8, 8, 3, 3) * w32.reshape(1, 32, 3, 1, 1, 3, 3)).sum((2, 5, 6)),
                                     lambda: _np_conv(x.numpy(), w32.numpy())),
    # rows too short for vectors (a 4x4 image; 20 floats): lanes along the output channel, whose weights (144 and 100
    # floats apart) are packed into a scratch array once per channel tile instead of gathered lane by lane every step
    "conv on a 4x4 image, weights packed": (lambda: (x4._pool((3, 3), (1, 1), (1, 1)).reshape(4, 1, 16, 4, 4, 3, 3) * w4.reshape(1, 32, 16, 1, 1, 3, 3)).sum((2, 5, 6)),
                                            lambda: np.einsum("bcyxij,kcij->bkyx", _np_windows(x4.numpy()), w4.numpy())),
    "5x5 conv with 20-wide rows, weights packed": (lambda: (x24._pool((5, 5), (1, 1), (1, 1)).reshape(2, 1, 4, 20, 20, 5, 5) * w5.reshape(1, 32, 4, 1, 1, 5, 5)).sum((2, 5, 6)),
                                                   lambda: np.einsum("bcyxij,kcij->bkyx", _np_windows(x24.numpy(), 5), w5.numpy())),
    # an 8x8 image read from its padded copy (10 floats a row): with 16 lanes two rows are one vector, two 8-float loads
    "conv on a padded 8x8 image": (lambda: (xp16._pool((3, 3), (1, 1), (1, 1)).reshape(4, 1, 16, 8, 8, 3, 3) * w16.reshape(1, 32, 16, 1, 1, 3, 3)).sum((2, 5, 6)),
                                   lambda: np.einsum("bcyxij,kcij->bkyx", _np_windows(xp16.numpy()), w16.numpy())),
    "conv weight gradient": (lambda: (xp._pool((3, 3), (1, 1), (1, 1)).reshape(4, 1, 3, 8, 8, 3, 3) * g.reshape(4, 16, 1, 8, 8, 1, 1)).sum((0, 3, 4)),
                             lambda: np.einsum("bcyxij,bkyx->kcij", _np_windows(xp.numpy()), g.numpy())),
    # a batchnorm statistic: y and x merge into one loop of 64, long enough for vector lanes
    "sum over batch and an image's y and x": (lambda: g.sum((0, 2, 3)), lambda: g.numpy().sum((0, 2, 3))),
    # a convolution's input gradient on a 4x4 image: y and x are too short for vectors alone, not as a pair
    "outer product over a 4x4 image": (lambda: (g4.reshape(4, 16, 1, 4, 4, 1, 1) * w.reshape(1, 16, 3, 1, 1, 3, 3)).sum(1),
                                       lambda: np.einsum("bkyx,kcij->bcyxij", g4.numpy(), w.numpy())),
    # selects after the reduction (a Linear layer with ReLU; its backward's mask; a max with a per-column bound): vector
    # compares give lane masks, WHEREs and MAXes blend by them
    "matmul with bias and relu": (lambda: (a @ b + c).relu(), lambda: np.maximum(a.numpy() @ b.numpy() + c.numpy(), 0)),
    "relu mask of a matmul": (lambda: ((a @ b) > 0).where(m, 0), lambda: np.where(a.numpy() @ b.numpy() > 0, m.numpy(), 0)),
    "matmul, maximum with a row": (lambda: (a @ b).maximum(c), lambda: np.maximum(a.numpy() @ b.numpy(), c.numpy())),
    # a per-lane gate (an index comparison) used as a select's condition
    "matmul masked below the diagonal": (lambda: (Tensor.arange(32).reshape(32, 1) >= Tensor.arange(40).reshape(1, 40)).where(a @ b, -1.0),
                                         lambda: np.where(np.tril(np.ones((32, 40))) > 0, a.numpy() @ b.numpy(), -1.0)),
    "max over a middle axis": (lambda: g.max(1), lambda: g.numpy().max(1)),
    "max over the last axis": (lambda: g.max(3), lambda: g.numpy().max(3)),
    # exp has no vector form here: every vector plan declines, the scalar plan runs
    "reduction of a non-vector op": (lambda: (a.reshape(32, 1, 48) - bt.reshape(1, 40, 48)).exp().sum(2),
                                     lambda: np.exp(a.numpy()[:, None] - bt.numpy()[None]).sum(2)),
  }

def _np_windows(xp, k=3):
  n, c, h, w = xp.shape
  return np.stack([np.stack([xp[:, :, i:i + h - k + 1, j:j + w - k + 1] for j in range(k)], -1) for i in range(k)], -2)
def _np_conv(x, w): return np.einsum("bcyxij,kcij->bkyx", _np_windows(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))), w)

CASES = _cases()
# kernels whose output dim fits two vectors (32 columns or channels): the wide tile must build
WIDE = {"matmul", "matmul with a transposed operand", "matmul, 6 rows by 96 columns", "matmul, 12 rows, transposed operand", "conv with 32 output channels"}
# kernels with a select or a max after (or as) the reduction that must still get lanes along an output dim
PACKED = {"matmul, 26 rows by 1024 columns, B packed"}  # the 6-row tile must build, with B's panel packed
GATHERS_PACKED = {"conv on a 4x4 image, weights packed", "5x5 conv with 20-wide rows, weights packed"}  # a packed plan must build
OUTPUT_LANES = {"matmul with bias and relu", "relu mask of a matmul", "matmul, maximum with a row", "matmul masked below the diagonal", "max over a middle axis"}

@pytest.fixture
def fresh_choices(tmp_path, monkeypatch):
  """Plans chosen now, not remembered from an earlier run (whose cost model may have been another) or an earlier test."""
  from tinygrad.codegen import plan_cache
  monkeypatch.setattr(plan_cache, "plan_dir", lambda: tmp_path)
  monkeypatch.setattr(R, "_programs", {})

def _kernel(t: Tensor, last: bool = False):
  items, _ = create_schedule([t.uop])
  kernels = [it for it in items if it.kind == "kernel"]
  assert last or len(kernels) == 1, "the expression should be one kernel over realized inputs"
  return kernel_params(kernels[-1])

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
@pytest.mark.parametrize("lanes", [16, 8], ids=["16 lanes (AVX-512)", "8 lanes (AVX2)"])
@pytest.mark.parametrize("case", list(CASES))
def test_every_plan_matches_numpy(case, lanes):
  build, ref = CASES[case]
  ast, bufs = _kernel(build())
  sink, granges = lower_kernel(ast)
  plans = candidate_plans(sink, granges, vector=lanes)
  assert len(plans) >= 3, "a reduction kernel should have scalar and vector plans"
  dev, expected, ran, built = Device["CPU"], ref(), 0, []
  for k, (name, plan) in enumerate(plans):
    if (res := plan()) is None: continue
    p = linearize(res[0], res[1], f"test_plan_{k}", [u for u in ast.toposort() if u.op is Ops.DEFINE_GLOBAL])
    p.src = dev.renderer.render(p)
    dev.compile([p])
    out = Buffer("CPU", bufs[0].arg[1], bufs[0].dtype).ensure_allocated()
    dev.run(p, [out] + [R.buffer_for(b).ensure_allocated() for b in bufs[1:]])
    got = np.frombuffer(out.copyout(), dtype=np.float32).reshape(expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4, err_msg=f"plan {name!r}:\n{p.src}")
    if "6-row" in name: assert "local0[" in p.src and p.src.count("for (int ridx") == 2, p.src  # the packing loop, then the tile's
    if name.endswith(", packed"): assert "local0[" in p.src and "floatx" in p.src.split("local0[")[-1], p.src  # the scratch array read as vectors
    # a weight gradient's output gradient (1024 floats apart per batch element) packed once per output-channel tile
    if case == "conv weight gradient" and name == "lanes along the reduction": assert "local0[" in p.src, p.src
    ran += 1
    built.append(name)
  assert ran >= (1 if "non-vector" in case else 2)
  if case in OUTPUT_LANES: assert any("output dim" in n for n in built), built
  if case in WIDE: assert any("wide tile" in n for n in built), built
  if case in PACKED: assert any("6-row tile" in n for n in built), built
  if case in GATHERS_PACKED: assert any(n.endswith(", packed") for n in built), built

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_the_cost_model_vectorizes_matmuls_and_padded_convolutions(fresh_choices):
  src = lambda t: R.get_program(_kernel(t, last=True)[0], "CPU").src
  # vectors as wide as the machine's registers: 16 floats with AVX-512, 8 with AVX2
  W = Device.renderer("CPU").vector_floats
  a, b, bt = T(128, 784), T(784, 128), T(128, 784)
  # a Linear layer's forward (x @ w.T): both operands contiguous along k, so vector accumulators over k, their lanes
  # summed after the loop
  s = src(a @ bt.T)
  assert f"floatx{W} acc0" in s and f"acc0[{W - 1}]" in s, s
  # the usual layout: an 8 x 16 tile of scalar copies, which GCC's SLP pass packs into 8 rows x 2 vectors of 8 (it ran
  # faster than our own vector tile of that shape); the compiled loop is vector FMAs on the machine's registers
  s = src(a @ b)
  if W == 8:
    assert "acc127 " in s and "floatx" not in s, s
    import subprocess
    from tinygrad.runtime.ops_cpu import CFLAGS, find_compiler
    from tinygrad.renderer.cstyle import PRELUDE
    asm = subprocess.run([find_compiler(), *[f for f in CFLAGS if f != "-shared"], "-S", "-x", "c", "-", "-o", "-"], input=PRELUDE + s, capture_output=True, text=True, check=True).stdout
    assert asm.count("ps\t") > 16 and "%ymm" in asm and ("vfmadd" in asm or "vmulps" in asm), asm
  else:  # lanes along the output's columns: a wide tile, 8 rows x 2 vectors
    assert s.count(f"floatx{W} acc") == 16 and s.split("for (int ridx0")[1].count("__builtin_memcpy(&val") == 2, s
  # a matmul whose B is bigger than L2 with rows a page apart: 6 rows x 2 vectors (12 accumulators: no spills on AVX2's
  # 16 registers) reading B's column panel packed into a scratch array; the same numbers as numpy
  if W == 8:
    x, y = T(1024, 1024), T(1024, 1024)
    s = src(x @ y)
    assert "local0[16384]" in s and s.count("floatx8 acc") == 12, s
    np.testing.assert_allclose((x @ y).numpy(), x.numpy() @ y.numpy(), rtol=1e-3, atol=1e-3)
  # a convolution through Tensor.conv2d reads its padded input as whole vectors, no per-element bounds checks
  x, w = T(8, 8, 8, 8), T(16, 8, 3, 3)
  s = src(x.conv2d(w, padding=1))  # the last kernel of its schedule is the convolution
  assert "floatx" in s and "?" not in s, s
  # a Linear layer with ReLU keeps its output lanes: the ReLU is a vector compare and a blend, not a lane-by-lane select
  s = src((T(64, 96) @ T(96, 128) + T(128)).relu())
  assert f"floatx{W} acc0" in s and "__builtin_memcpy(data0" in s and f"boolx{W}" in s and "?" not in s, s
  # a per-channel sum over batch, y and x: one vector accumulator over the merged y*x loop
  s = src(T(32, 16, 8, 8).sum((0, 2, 3)))
  assert f"floatx{W} acc0" in s and s.count("for (") == 3, s

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_the_trace_shows_only_the_winning_plan(fresh_choices):
  """Under VIZ the kernel's codegen context holds the rewrites of the plan that runs, in order, and none of the plans
  that lost; the last optimizer rewrite's output is the kernel that was linearized."""
  from tinygrad import tracing
  from profiler.events import ContextBegin, Rewrite, from_json
  from profiler.recorder import Recorder
  a, bt = T(48, 64), T(40, 64)
  got: list[dict] = []
  rec = Recorder("viz", sinks=[got.extend])
  tracing.tracer = rec
  try: p = R.get_program(_kernel(a @ bt.T)[0], "CPU")
  finally:
    tracing.tracer = None
    rec.close()
  events = [from_json(d) for d in got]
  ctx = next(e.id for e in events if isinstance(e, ContextBegin) and e.kind == "kernel" and e.name == p.name)
  names = [e.name for e in events if isinstance(e, Rewrite) and e.ctx == ctx]
  assert names[:2] == ["lower: index to loops", "lower: simplify"], names
  opt = [n for n in names if n.startswith("opt:")]
  # one plan: its upcast, then the vectorized result; a losing plan would add another upcast
  assert len([n for n in opt if n.startswith("opt: upcast")]) == 1 and opt[-1] == "opt: vectorized", names

def test_the_chosen_plan_is_remembered_across_processes(tmp_path):
  """A second process with the same kernels builds only the plan the first one chose, and renders the same code (the
  program cache, which would skip the plan altogether, off)."""
  import os, subprocess, sys
  code = ("import json; from tinygrad import Tensor; from tinygrad.codegen import opts; from tinygrad.engine import realize as R; "
          "a, b = Tensor.rand(64, 96), Tensor.rand(96, 48); (a @ b).realize(); ((a @ b).relu().sum(1)).realize(); "
          "print(json.dumps([opts.stats, sorted(p.src for p in R._programs.values())]))")
  env = {**os.environ, "TINYVIZ_CACHE": str(tmp_path), "DEV": "CPU", "PROGRAM_CACHE": "0"}
  runs = [json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout.splitlines()[-1]) for _ in range(2)]
  (first, src1), (second, src2) = runs
  assert first["searched"] >= 1 and first["remembered"] == 0
  assert second["searched"] == 0 and second["remembered"] == first["searched"]
  assert src1 == src2

@pytest.mark.parametrize("case", list(CASES))
def test_pruning_keeps_the_winning_plan(case):
  """The plans left out before building (every load and store a cache line apart along the lanes) never include the
  one the full search picks; and pruning does leave plans out: a matmul's row lanes, whose every load is strided."""
  from tinygrad.codegen.cost import loop_cost
  from tinygrad.codegen.opts import merge_reduce_loops
  from tinygrad.uop.ops import untraced_rewrites
  sink, granges = lower_kernel(_kernel(CASES[case][0]())[0])
  with untraced_rewrites():
    sink = merge_reduce_loops(sink)
    kept = [n for n, _ in candidate_plans(sink, granges, vector=8, prune=True)]
    built = [(n, loop_cost(res[0])) for n, plan in candidate_plans(sink, granges, vector=8) if (res := plan()) is not None]
  assert min(built, key=lambda b: b[1])[0] in kept, (built, kept)
  big = lower_kernel(_kernel(T(64, 256) @ T(256, 128))[0])
  assert len(candidate_plans(*big, vector=8, prune=True)) < len(candidate_plans(*big, vector=8))

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_a_matmul_too_big_for_l3_is_k_blocked(fresh_choices, monkeypatch):
  """A matmul whose operands don't fit L3 (here: any, with L3_BYTES 0) runs k in blocks of K_BLOCK, in a loop between
  the column panels (split over threads) and the row tiles, each block adding to what the output holds: the same
  numbers as numpy, with what the output buffer held before (NaNs here) never read into the sum."""
  from tinygrad.codegen import cost
  monkeypatch.setattr(cost, "L3_BYTES", 0)
  a, b = T(64, 3 * cost.K_BLOCK), T(3 * cost.K_BLOCK, 64)
  ast, bufs = _kernel(a @ b)
  p = R.get_program(ast, "CPU")
  assert p.parallel and p.src.count("for (int gidx") == 3 and f"ridx0 < {cost.K_BLOCK};" in p.src, p.src
  out = Buffer("CPU", 64 * 64, bufs[0].dtype).ensure_allocated()
  out.copyin(memoryview(np.full(64 * 64, np.nan, np.float32).tobytes()))
  Device["CPU"].compile([p])
  Device["CPU"].run(p, [out] + [R.buffer_for(x).ensure_allocated() for x in bufs[1:]])
  np.testing.assert_allclose(np.frombuffer(out.copyout(), dtype=np.float32).reshape(64, 64), a.numpy() @ b.numpy(), rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose((a @ b).numpy(), a.numpy() @ b.numpy(), rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(((a + 1) @ b).numpy(), (a.numpy() + 1) @ b.numpy(), rtol=1e-4, atol=1e-4)
  # a bias or a ReLU after the sum: not blocked (each block's partial sum would get it), the same numbers
  c = T(64)
  np.testing.assert_allclose((a @ b + c).relu().numpy(), np.maximum(a.numpy() @ b.numpy() + c.numpy(), 0), rtol=1e-4, atol=1e-4)

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_a_select_of_arithmetic_is_vector_code(fresh_choices):
  """A ReLU mask applied to batchnorm's gradient (`x > 0 ? (g - m) * s + b : 0`) and a causal mask applied to a product:
  GCC keeps such a select a branch and the loop scalar, so the kernel gets vector lanes along its innermost dim (or its
  two innermost, a 4 x 4 image), a vector blend computing both arms. The same numbers as numpy, half the mask false."""
  W = Device.renderer("CPU").vector_floats
  for hw in (8, 4):
    x, g, m, s, b = T(16, 8, hw, hw), T(16, 8, hw, hw), T(1, 8, 1, 1), T(1, 8, 1, 1), T(1, 8, 1, 1)
    t = (x > 0).where((g - m) * s + b, 0)
    # lanes as wide as the machine's vectors, or as the row where it is shorter (8 floats of an 8 x 8 image with AVX-512)
    src = R.get_program(_kernel(t)[0], "CPU").src
    assert any(f"boolx{n}" in src for n in (min(W, hw * hw), min(W, hw * hw) // 2) if n >= 8) and "?" not in src, src
    xn, gn = x.numpy(), g.numpy()
    np.testing.assert_allclose(t.numpy(), np.where(xn > 0, (gn - m.numpy()) * s.numpy() + b.numpy(), 0), rtol=1e-5, atol=1e-6)
  a, c = T(4, 16, 16), T(4, 16, 1)
  t = Tensor.ones(16, 16).tril().reshape(1, 16, 16).where(a * c + 1, 0)
  assert f"boolx{W}" in (src := R.get_program(_kernel(t, last=True)[0], "CPU").src), src
  np.testing.assert_allclose(t.numpy(), np.where(np.tril(np.ones((16, 16))) > 0, a.numpy() * c.numpy() + 1, 0), rtol=1e-5, atol=1e-6)

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_a_big_elementwise_kernel_with_a_short_inner_loop_is_vector_code(fresh_choices):
  """Batchnorm over 4 x 4 images (64k elements): GCC vectorizes only the innermost loop, 4 long, so the kernel gets lanes
  along its two innermost dims merged into one; a per-channel value is one float for all lanes. The same numbers."""
  W = Device.renderer("CPU").vector_floats
  x, m, s = T(64, 64, 4, 4), T(1, 64, 1, 1), T(1, 64, 1, 1)
  t = (x - m) * s
  assert f"floatx{W}" in (src := R.get_program(_kernel(t)[0], "CPU").src), src
  np.testing.assert_allclose(t.numpy(), (x.numpy() - m.numpy()) * s.numpy(), rtol=1e-6)

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_a_max_pool_gradient_reads_its_pooled_values_as_one_vector_repeated(fresh_choices):
  """A max-pool's gradient over 8x8 images (64k elements or more): each element compares with, or is scaled by, its 2x2
  window's pooled value at (y // 2, x // 2). GCC left such a loop scalar, and a gather of {a, a, b, b, ...} went through
  the stack, so the pooled values are one 4-float load whose lanes a shuffle repeats (vectorize._repeats). The same
  numbers as numpy, bit for bit."""
  x = Tensor(rng.integers(0, 3, (64, 32, 8, 8)).astype(np.float32)).realize()
  p, c = Tensor(rng.integers(0, 3, (64, 32, 4, 4)).astype(np.float32)).realize(), T(64, 32, 4, 4) + 3
  up = lambda t: t.reshape(64, 32, 4, 1, 4, 1).expand(64, 32, 4, 2, 4, 2).reshape(64, 32, 8, 8)
  np_up = lambda a: a.repeat(2, 2).repeat(2, 3)
  for t, want in (((x == up(p)).float(), (x.numpy() == np_up(p.numpy())).astype(np.float32)), (x * up(p) / up(c), x.numpy() * np_up(p.numpy()) / np_up(c.numpy()))):
    src = R.get_program(_kernel(t)[0], "CPU").src
    assert re.search(r"floatx4 val\d+ = \{0\};", src) and re.search(r"\{(alu\d+), \1, (alu\d+), \2,", src), src
    np.testing.assert_array_equal(t.numpy(), want)
  # 4x4 images pooled to 2x2: 8 lanes would repeat 2 pooled values, so with AVX-512 the kernel takes 16 lanes (4 of them),
  x4, p4 = Tensor(rng.integers(0, 3, (64, 64, 4, 4)).astype(np.float32)).realize(), Tensor(rng.integers(0, 3, (64, 64, 2, 2)).astype(np.float32)).realize()
  t = (x4.reshape(64, 64, 2, 2, 2, 2) == p4.reshape(64, 64, 2, 1, 2, 1).expand(64, 64, 2, 2, 2, 2)).float()
  src = R.get_program(_kernel(t)[0], "CPU").src
  # the 16 lanes as two 8-lane shuffles joined: GCC widened 4 floats to 16 lanes through the stack (7.6x slower alone)
  if Device.renderer("CPU").vector_floats >= 16: assert "floatx16 val" in src and re.search(r"floatx4 val\d+ = \{0\};", src) and "tg_join16(((floatx8){" in src, src
  np.testing.assert_array_equal(t.numpy(), (x4.numpy().reshape(64, 64, 2, 2, 2, 2) == p4.numpy().reshape(64, 64, 2, 1, 2, 1)).astype(np.float32))

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_a_padded_row_is_a_vector_without_a_test_per_element(fresh_choices):
  """A convolution's zero padding (`0 < y & y < 5 & 0 < x & x < 5 ? in[...] : 0`): a gated load GCC keeps a branch per
  element, so the padded row (6 or 10 long) is its edges, zeros, and its inside, one vector load under the row's gate
  and one vector store, no loop over x left. A padding of 2 (the inside's lanes still tested): the row as copies.
  The same numbers as numpy, bit for bit."""
  for hw in (4, 8):
    x = T(8, 16, hw, hw)
    t = x.pad((1, 1, 1, 1))
    src = R.get_program(_kernel(t)[0], "CPU").src
    assert f"floatx{hw} " in src and "?data1" not in src and "gidx3" not in src and src.count("for (") == 3 and "= 0.0f;" in src, src
    np.testing.assert_array_equal(t.numpy(), np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1))))
  x = T(8, 16, 6, 6)
  t = x.pad((2, 2, 1, 1))
  src = R.get_program(_kernel(t)[0], "CPU").src
  assert "floatx" not in src and "gidx3" not in src and src.count("for (") == 3, src
  np.testing.assert_array_equal(t.numpy(), np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (2, 2))))

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_5x5_convolutions_like_beautiful_mnist_match_torch(fresh_choices):
  """tinygrad's beautiful_mnist's first two layers (5x5 kernels: 28x28 digits -> 24x24 -> 20x20, 32 channels), forward
  and backward, against torch. The 20-float rows fit no 8-float vector: the second convolution's forward and input
  gradient take lanes along the output channel with the weights packed (a scratch array read as vectors)."""
  torch = pytest.importorskip("torch")
  x, w1, w2 = rng.standard_normal((8, 1, 28, 28), dtype=np.float32), rng.standard_normal((32, 1, 5, 5), dtype=np.float32), rng.standard_normal((32, 32, 5, 5), dtype=np.float32)
  g = rng.standard_normal((8, 32, 20, 20), dtype=np.float32)
  X, W1, W2 = Tensor(x, requires_grad=True), Tensor(w1, requires_grad=True), Tensor(w2, requires_grad=True)
  out = X.conv2d(W1).relu().conv2d(W2)
  (out * Tensor(g)).sum().backward()
  tx, tw1, tw2 = (torch.tensor(a, requires_grad=True) for a in (x, w1, w2))
  tout = torch.nn.functional.conv2d(torch.nn.functional.conv2d(tx, tw1).relu(), tw2)
  (tout * torch.tensor(g)).sum().backward()
  for ours, theirs in ((out, tout), (X.grad, tx.grad), (W1.grad, tw1.grad), (W2.grad, tw2.grad)):
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-3, atol=1e-3 * float(np.abs(theirs.detach().numpy()).max()))
  packed = [p.name for p in R._programs.values() if "local0[" in p.src and "_32_5_5" in p.name and p.name.startswith("r_8_32_20_20")]
  assert packed, sorted(p.name for p in R._programs.values())

@pytest.mark.parametrize("lanes, pick", [(16, "lanes along output dim 1, wide tile"), (8, "scalar")], ids=["AVX-512", "AVX2"])
def test_a_matmul_tile_picked_for_the_machine_s_vectors(lanes, pick):
  """The MLP's 128x784x128: with AVX-512 a row of the scalar 8 x 16 tile is one vector, each of A's 8 broadcasts feeds
  one FMA, and the wide tile (8 rows x 2 vectors) ran 1.1-1.4x faster on a Zen 4 core; with AVX2 the scalar tile packs
  into 8 rows x 2 vectors in GCC's order, timed faster than our wide tile (docs/performance.md). The pick of each
  width, whatever this machine's is (the plans are built and costed, not run)."""
  from tinygrad.codegen.opts import plan_cost, MAX_UPCAST
  ast, _ = _kernel(T(128, 784) @ T(784, 128))
  sink, granges = lower_kernel(ast)
  costs = {name: plan_cost(name, res[0], sink, granges, lanes, MAX_UPCAST) for name, plan in candidate_plans(sink, granges, vector=lanes)
           if (res := plan()) is not None}
  assert min(costs, key=costs.get) == pick, costs

def _accs(n: int, vec: str, joined: bool):
  """A test of a plan's C: exactly n accumulators of type vec, and the two-halves join (tg_join16) or not."""
  return lambda src: f"{vec} acc{n - 1} = " in src and f"acc{n}" not in src and ("tg_join16(" in src) == joined

def _avx512_pick(t: Tensor, pick: str, built: dict, want: np.ndarray, merge: bool = False) -> None:
  """The kernel of t: the plans named in `built` (name -> a test of its C, see _accs) exist with 16 lanes only
  (AVX-512's 32 registers; AVX2's 16 would spill), `pick` is the cheapest there, and each built plan's C passes its test
  and computes `want` (numpy). Costed whatever this machine's width; the plans run on this one."""
  from tinygrad.codegen.opts import plan_cost, MAX_UPCAST, merge_reduce_loops
  ast, bufs = _kernel(t)
  sink, granges = lower_kernel(ast)
  if merge: sink = merge_reduce_loops(sink)  # as apply_opts does first (the 4x4 image's y and x, read contiguously)
  for lanes in (16, 8):
    plans = dict(candidate_plans(sink, granges, vector=lanes))
    assert all((name in plans) == (lanes == 16) for name in built), list(plans)
    if lanes == 8: continue
    costs = {n: plan_cost(n, res[0], sink, granges, lanes, MAX_UPCAST) for n, plan in plans.items() if (res := plan()) is not None}
    assert min(costs, key=costs.get) == pick, costs
    for name, ok in built.items():
      res = plans[name]()
      p = linearize(res[0], res[1], "tile", [u for u in ast.toposort() if u.op is Ops.DEFINE_GLOBAL])
      p.src = Device["CPU"].renderer.render(p)
      assert ok(p.src), p.src
      Device["CPU"].compile([p])
      out = Buffer("CPU", bufs[0].arg[1], bufs[0].dtype).ensure_allocated()
      Device["CPU"].run(p, [out] + [R.buffer_for(b).ensure_allocated() for b in bufs[1:]])
      np.testing.assert_allclose(np.frombuffer(out.copyout(), dtype=np.float32).reshape(want.shape), want, rtol=1e-3, atol=1e-3)

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_a_4x4_conv_weight_gradient_takes_the_packed_window_tile_with_avx512_registers():
  """The digits CNN's conv3 weight gradient (64 x 32 x 3 x 3 over a batch of 128 4x4 images): lanes along the output
  channel with the output gradient packed, and with AVX-512's 32 registers the whole 3 x 3 window as copies (9 x 2
  vectors, 18 accumulators: each packed vector feeds 9 FMAs, not 3), which is picked (1.27x alone on a Xeon) and
  computes numpy's numbers; with AVX2's 16 registers it is not built."""
  xp, g = T(128, 32, 6, 6), T(128, 64, 4, 4)
  t = (xp._pool((3, 3), (1, 1), (1, 1)).reshape(128, 1, 32, 4, 4, 3, 3) * g.reshape(128, 64, 1, 4, 4, 1, 1)).sum((0, 3, 4))
  window = "lanes along output dim 0, window tile, packed"
  _avx512_pick(t, window, {window: _accs(18, "floatx16", False)}, np.einsum("bcyxij,bkyx->kcij", _np_windows(xp.numpy()), g.numpy()), merge=True)

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_a_4x4_convolution_takes_the_packed_rows_tile_with_avx512_registers():
  """The digits CNN's conv3 forward (128 x 64 x 4 x 4 over 32 channels and a 3 x 3 window): lanes along the output
  channel with the weights packed, and with AVX-512's 32 registers a row's 4 x and 2 rows as copies (8 x 2 vectors, 16
  accumulators; its input gradient of the same shape 1.07-1.2x alone on a Xeon), picked and computing numpy's numbers;
  with AVX2's 16 registers not built."""
  xp, w = T(128, 32, 6, 6), T(64, 32, 3, 3)
  t = (xp._pool((3, 3), (1, 1), (1, 1)).reshape(128, 1, 32, 4, 4, 3, 3) * w.reshape(1, 64, 32, 1, 1, 3, 3)).sum((2, 5, 6))
  rows = "lanes along output dim 1, rows tile, packed"
  _avx512_pick(t, rows, {rows: _accs(16, "floatx16", False)}, np.einsum("bcyxij,kcij->bkyx", _np_windows(xp.numpy()), w.numpy()), merge=True)

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_a_conv_weight_gradient_takes_the_window_tile_with_avx512_registers():
  """The digits CNN's conv2 weight gradient (32 x 32 x 3 x 3 over a batch of 128 8x8 images): with AVX-512's 32
  registers the window tile (2 output channels x the 3 x 3 window as accumulators, each output-gradient vector feeding
  9 FMAs) is built, with lanes along x (8) and with two rows in 16 lanes, which is picked (each FMA 16 lanes wide:
  1.12-1.13x alone on a Xeon); both compute numpy's numbers. With AVX2's 16 registers neither is built (18
  accumulators would spill). Two rows: the padded input's vectors two 8-float loads joined."""
  xp, g = T(128, 32, 10, 10), T(128, 32, 8, 8)
  t = (xp._pool((3, 3), (1, 1), (1, 1)).reshape(128, 1, 32, 8, 8, 3, 3) * g.reshape(128, 32, 1, 8, 8, 1, 1)).sum((0, 3, 4))
  window, rows = "lanes along the reduction, window tile", "lanes along the reduction, window tile, two rows"
  _avx512_pick(t, rows, {window: _accs(18, "floatx8", False), rows: _accs(18, "floatx16", True)},
               np.einsum("bcyxij,bkyx->kcij", _np_windows(xp.numpy()), g.numpy()))

def _loop_body(src: str) -> list[str]:
  """The statements of a kernel's innermost loop (from its last `for (` to the closing brace at that depth)."""
  lines = src.splitlines()
  start = max(i for i, line in enumerate(lines) if line.lstrip().startswith("for (") and "lane <" not in line)
  depth, body = 0, []
  for line in lines[start + 1:]:
    depth += line.count("{") - line.count("}")
    if depth < 0: break
    body.append(line.strip())
  return body

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_each_input_vector_of_the_window_tile_feeds_both_channels_before_the_next_is_made():
  """The conv2 weight gradient's two-rows window tile: 18 accumulators (2 output channels x the 3 x 3 window), 2
  output-gradient vectors and 9 joined input vectors. In the copies' order all 9 input vectors were live at once beside
  the 18 accumulators and GCC spilled 2 accumulators in the inner loop; accumulated input by input (linearize's
  accumulate_order) one is live at a time. The numbers are numpy's."""
  xp, g = T(128, 32, 10, 10), T(128, 32, 8, 8)
  t = (xp._pool((3, 3), (1, 1), (1, 1)).reshape(128, 1, 32, 8, 8, 3, 3) * g.reshape(128, 32, 1, 8, 8, 1, 1)).sum((0, 3, 4))
  ast, bufs = _kernel(t)
  sink, granges = lower_kernel(ast)
  res = dict(candidate_plans(sink, granges, vector=16))["lanes along the reduction, window tile, two rows"]()
  p = linearize(res[0], res[1], "window_rows", [u for u in ast.toposort() if u.op is Ops.DEFINE_GLOBAL])
  p.src = Device["CPU"].renderer.render(p)
  body = _loop_body(p.src)
  joins = [i for i, line in enumerate(body) if "tg_join16(" in line]
  assert len(joins) == 9, p.src
  for a, b in zip(joins, joins[1:] + [len(body)]):
    name = body[a].split("=")[0].split()[-1]
    uses = [line for line in body[a + 1:] if re.search(rf"\b{name}\b", line)]
    assert len(uses) == 2 and all(re.search(rf"\b{name}\b", line) for line in uses) and all(u in body[a + 1:b] for u in uses), (name, p.src)
  Device["CPU"].compile([p])
  out = Buffer("CPU", bufs[0].arg[1], bufs[0].dtype).ensure_allocated()
  Device["CPU"].run(p, [out] + [R.buffer_for(b).ensure_allocated() for b in bufs[1:]])
  want = np.einsum("bcyxij,bkyx->kcij", _np_windows(xp.numpy()), g.numpy())
  np.testing.assert_allclose(np.frombuffer(out.copyout(), dtype=np.float32).reshape(want.shape), want, rtol=1e-3, atol=1e-3)

def test_accumulates_keep_a_tile_order_that_holds_few_operands():
  """accumulate_order: a matmul tile's products a_i * b_j in copy order (row by row: every b_j live across the rows)
  come out reading each row's broadcast for both vectors, then the next; an order that already reads each operand's
  users together (a convolution's weight by weight) is kept."""
  from tinygrad.codegen.linearize import accumulate_order
  a = [UOp.variable(f"a{i}", 0, 9).cast(dtypes.float32) for i in range(4)]
  b = [UOp.variable(f"b{j}", 0, 9).cast(dtypes.float32) for j in range(2)]
  def group(pairs): return [UOp(Ops.REDUCE, dtypes.float32, ((a[i] * b[j]),), Ops.ADD) for i, j in pairs]
  col_major = [(i, j) for j in range(2) for i in range(4)]  # acc0..3 with b0, acc4..7 with b1: each a_i live from its first use to its second
  g = group(col_major)
  order = [g.index(v) for v, _ in accumulate_order(g, list(range(len(g))), set())]
  assert [col_major[k] for k in order] == [(i, j) for i in range(4) for j in range(2)]
  row_major = [(i, j) for i in range(4) for j in range(2)]
  g = group(row_major)
  assert [g.index(v) for v, _ in accumulate_order(g, list(range(len(g))), set())] == list(range(8))

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
@pytest.mark.parametrize("lanes", [16, 8], ids=["16 lanes (AVX-512)", "8 lanes (AVX2)"])
def test_lanes_a_constant_stride_apart_are_stored_by_a_loop(lanes):
  """Lanes along a convolution's output channel (a 4x4 image: channels 16 floats apart) are stored by one loop over
  the lanes per vector, not a statement per lane (GCC took twice as long on such a kernel), with numpy's numbers."""
  build, ref = CASES["conv on a 4x4 image, weights packed"]
  ast, bufs = _kernel(build())
  sink, granges = lower_kernel(ast)
  plans = dict(candidate_plans(sink, granges, vector=lanes))
  res = plans["lanes along output dim 1, wide tile, packed"]()
  p = linearize(res[0], res[1], "strided_store", [u for u in ast.toposort() if u.op is Ops.DEFINE_GLOBAL])
  p.src = Device["CPU"].renderer.render(p)
  loops = [line for line in p.src.splitlines() if f"for (int lane = 0; lane < {lanes}; lane++) data0[" in line]
  assert loops and all(line.rstrip().endswith("[lane];") and f"+lane*16]" in line for line in loops), p.src
  assert not re.search(r"data0\[[^\]]*\] = acc\d+\[\d+\];", p.src), p.src  # no store per lane
  Device["CPU"].compile([p])
  out = Buffer("CPU", bufs[0].arg[1], bufs[0].dtype).ensure_allocated()
  Device["CPU"].run(p, [out] + [R.buffer_for(b).ensure_allocated() for b in bufs[1:]])
  np.testing.assert_allclose(np.frombuffer(out.copyout(), dtype=np.float32).reshape(ref().shape), ref(), rtol=1e-4, atol=1e-4)

def test_only_an_index_exactly_linear_in_the_lane_is_a_stride():
  from tinygrad.dtype import dtypes
  from tinygrad.uop.ops import UOp
  from tinygrad.codegen.vectorize import _stride
  V = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, 16),), (9, "vector"))
  G = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, 4),), (1, "global"))
  assert _stride(G * 1024 + (G * 16 + V) * 16 + 3, V)[1] == 16  # a product of a sum with the lane: distributed
  assert _stride(G * 64 - V * 5, V)[1] == -5
  assert _stride(G * 64 + V, V)[1] == 1  # contiguous: the vector store's case, tried first
  for idx in (G * 64 + (V // 2) * 16, G * 64 + (V % 8) * 16, G * 64 + V * G, G * 64 + V * 0): assert _stride(idx, V) is None, idx

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_two_rows_of_an_8x8_image_are_one_vector_with_16_lanes(fresh_choices):
  """The digits CNN's conv2 (32 -> 32 channels over a padded 8x8 image): with 16 lanes, lanes along y and x merged put two
  rows in a vector, each read as two 8-float loads joined (tg_join16); the wide tile (2 vectors x 8 output channels)
  is what the cost model picks (1.7-1.8x faster than lanes along x in the step, docs/performance.md), with numpy's numbers.
  With 8 lanes (AVX2) the plan is not offered."""
  from tinygrad.codegen.opts import plan_cost, MAX_UPCAST
  xp, w = T(16, 32, 10, 10), T(32, 32, 3, 3)
  ast, bufs = _kernel((xp._pool((3, 3), (1, 1), (1, 1)).reshape(16, 1, 32, 8, 8, 3, 3) * w.reshape(1, 32, 32, 1, 1, 3, 3)).sum((2, 5, 6)))
  sink, granges = lower_kernel(ast)
  assert not any("dims 2 and 3" in n for n, _ in candidate_plans(sink, granges, vector=8))
  plans = dict(candidate_plans(sink, granges, vector=16))
  costs = {n: plan_cost(n, res[0], sink, granges, 16, MAX_UPCAST) for n, plan in plans.items() if (res := plan()) is not None}
  assert min(costs, key=costs.get) == "lanes along output dims 2 and 3, wide tile", costs
  res = plans["lanes along output dims 2 and 3, wide tile"]()
  p = linearize(res[0], res[1], "two_rows", [u for u in ast.toposort() if u.op is Ops.DEFINE_GLOBAL])
  p.src = Device["CPU"].renderer.render(p)
  assert p.src.count("tg_join16(") == 2 and "floatx8 val" in p.src, p.src  # the tile's two row pairs, each from two loads
  Device["CPU"].compile([p])
  out = Buffer("CPU", bufs[0].arg[1], bufs[0].dtype).ensure_allocated()
  Device["CPU"].run(p, [out] + [R.buffer_for(b).ensure_allocated() for b in bufs[1:]])
  np.testing.assert_allclose(np.frombuffer(out.copyout(), dtype=np.float32).reshape(16, 32, 8, 8),
                             np.einsum("bcyxij,kcij->bkyx", _np_windows(xp.numpy()), w.numpy()), rtol=1e-4, atol=1e-4)

def test_only_lanes_in_two_consecutive_runs_are_halves():
  from tinygrad.dtype import dtypes
  from tinygrad.uop.ops import UOp
  from tinygrad.codegen.vectorize import _halves
  V = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, 16),), (9, "vector"))
  G = UOp(Ops.RANGE, dtypes.int32, (UOp.const(dtypes.int32, 4),), (1, "global"))
  m = G * 16 + V  # two rows of an 8-wide image, read from its 10-wide padded copy
  lo, hi = _halves((m // 8 + 1) * 10 + m % 8 + 1, V, 16)
  from tinygrad.uop.ops import graph_rewrite
  from tinygrad.uop.symbolic import symbolic
  for g in range(4):
    val = lambda u: graph_rewrite(u.substitute({G: UOp.const(dtypes.int32, g)}), symbolic).arg
    assert (val(lo), val(hi)) == ((2 * g + 1) * 10 + 1, (2 * g + 2) * 10 + 1)
  for idx in ((m // 4) * 10 + m % 4, m * 2, (m // 8) * 10 + (7 - m % 8)):  # runs of 4, a stride, a reversed run
    assert _halves(idx, V, 16) is None, idx
  assert _halves((m // 8) * 10 + m % 8, V, 8) is None  # 16 lanes only

@pytest.mark.skipif(Device.DEFAULT != "CPU", reason="needs the CPU device (a C compiler)")
def test_weights_packed_for_every_output_channel_are_packed_once_per_thread(fresh_choices):
  """A convolution on a 4x4 image whose 32 output channels are all one tile (2 vectors of 16 lanes): the packed
  weights depend on no output loop, so they are filled once before the loops, in a parallel region (each thread its
  own scratch array), not once per image (the digits' conv3 input gradient 1.7x faster), with numpy's numbers."""
  xp, w = T(128, 64, 6, 6), T(32, 64, 3, 3)
  t = (xp._pool((3, 3), (1, 1), (1, 1)).reshape(128, 1, 64, 4, 4, 3, 3) * w.reshape(1, 32, 64, 1, 1, 3, 3)).sum((2, 5, 6))
  src = R.get_program(_kernel(t)[0], "CPU").src
  if Device.renderer("CPU").vector_floats == 16:
    body = src.split("#pragma omp parallel\n", 1)[1]
    assert body.lstrip().startswith("{") and "local0[" in body.split("#pragma omp for", 1)[0], src  # filled before the split loop
  np.testing.assert_allclose(t.numpy(), np.einsum("bcyxij,kcij->bkyx", _np_windows(xp.numpy()), w.numpy()), rtol=1e-4, atol=1e-4)
