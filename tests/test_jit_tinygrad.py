# TinyJit behaviours tinygrad 0.14 users (and its own test_jit.py) rely on: what `jit.captured` shows, the errors a
# jit gives for calls it cannot replay, inputs found by name and inside lists, prune=True, free_intermediates,
# Context(CAPTURING=0), and random numbers that are the same with and without the jit.
import numpy as np
import pytest
from tinygrad import Tensor, TinyJit, Device, GlobalCounters, Context
from tinygrad.engine.jit import JitError, graph_class
from tinygrad.uop.ops import Ops

def kernels(jit) -> int: return len(jit.captured.linear.src)

def test_no_graph_runner_and_captured_linear_counts_what_a_replay_runs():
  assert graph_class(Device[Device.DEFAULT]) is None and Device[Device.DEFAULT].graph is None  # as tinygrad 0.14's CPU
  @TinyJit
  def f(a, b): return (a + b).realize(), (a * b).realize()
  assert f.captured is None
  for i in range(3): f(Tensor([1.0, 2.0]) + i, Tensor([3.0, 4.0]))
  lin = f.captured.linear
  assert lin.op is Ops.LINEAR and kernels(f) == 2
  assert all(c.op is Ops.CALL and c.src[0].op is Ops.PROGRAM and c.arg == Device.DEFAULT for c in lin.src)
  GlobalCounters.reset()
  s, p = f(Tensor([5.0, 6.0]).realize(), Tensor([1.0, 2.0]).realize())
  assert GlobalCounters.kernel_count == kernels(f)
  np.testing.assert_allclose(s.numpy(), [6, 8]); np.testing.assert_allclose(p.numpy(), [5, 12])

def test_errors_for_calls_a_replay_cannot_serve():
  nothing = TinyJit(lambda a: None)
  with pytest.raises(JitError, match="didn't JIT anything"):
    for _ in range(2): nothing(Tensor([1.0]))
  counter = TinyJit(lambda a, i: ((a + 1).realize(), i))
  with pytest.raises(JitError, match="only tensors"):  # a replay would hand back the captured i
    for i in range(2): counter(Tensor([1.0]), i)
  inner = TinyJit(lambda t: t + 1)
  outer = TinyJit(lambda t: inner(t) * 3)
  outer(Tensor([1.0])).realize()  # the first call only runs the function
  with pytest.raises(RuntimeError, match="TinyJit inside another TinyJit"): outer(Tensor([1.0])).realize()

def test_keyword_inputs_in_any_order_and_tensors_inside_lists():
  div = TinyJit(lambda first, second: (first / second).realize())
  add = TinyJit(lambda a, arr: (a + arr[0]).realize())
  for i in range(4):
    a, b = np.float32([1, 2]) + i, np.float32([4, 8]) + i
    got = div(second=Tensor(b), first=Tensor(a)) if i % 2 else div(first=Tensor(a), second=Tensor(b))
    np.testing.assert_allclose(got.numpy(), a / b, rtol=1e-6)
    np.testing.assert_allclose(add(Tensor(a), [Tensor(b)]).numpy(), a + b)  # the list's tensor is an input: new each call
  with pytest.raises(JitError, match="positions, keywords"): div(Tensor(a), second=Tensor(b))

def test_prune_replays_only_what_depends_on_the_inputs():
  w = Tensor([1.0, 2.0, 3.0]).realize()
  def step(x): return (w * 2).contiguous() + x
  plain, pruned = TinyJit(step), TinyJit(step, prune=True)
  deco = TinyJit(prune=True)(step)  # the decorator form
  for i in range(3):
    x = np.float32([i, 10, 20])
    for j in (plain, pruned, deco): np.testing.assert_allclose(j(Tensor(x)).numpy(), [2, 4, 6] + x)
  assert kernels(plain) == 2 and kernels(pruned) == kernels(deco) == 1

def test_capturing_0_runs_a_kernel_without_capturing_it():
  @TinyJit
  def f(a):
    with Context(CAPTURING=0): Tensor.zeros(4).contiguous().realize()
    return (a + 1).realize()
  for i in range(3): np.testing.assert_allclose(f(Tensor([float(i)])).numpy(), [i + 1])
  assert kernels(f) == 1

def test_free_intermediates_gives_memory_back_and_the_next_replay_reallocates():
  ext = Tensor([1, 24, 23, 45, 1]).realize()
  @TinyJit
  def f(x):
    t1 = (x * 2).contiguous().realize()
    return ((t1 + ext).contiguous().realize()).sum().contiguous().realize()
  for i in range(3): assert f(Tensor([i, 1, 2, 3, 4])).item() == 114 + 2 * i
  before = GlobalCounters.mem_used
  f.captured.free_intermediates()
  assert before - GlobalCounters.mem_used >= 5 * 4 * 2 + 4  # t1, t1 + ext, the sum
  assert f(Tensor([11, 1, 2, 3, 4])).item() == 136
  assert ext.tolist() == [1, 24, 23, 45, 1]  # not written by the jit: kept

def test_free_intermediates_keeps_a_buffer_updated_in_place():
  x = Tensor([1]).realize()
  @TinyJit
  def f(y):
    x.assign(x + y)
    return x.realize()
  for _ in range(5): f(Tensor([1]))
  before = GlobalCounters.mem_used
  f.captured.free_intermediates()
  assert GlobalCounters.mem_used == before
  f(Tensor([2]))
  assert x.item() == 8

def test_random_numbers_are_the_same_with_and_without_the_jit():
  def draw(a): return (a * Tensor.rand(3)).realize(), Tensor.randint(4, high=100).realize()
  a = Tensor.ones(3).contiguous().realize()
  runs = {}
  for jit in (False, True):
    Tensor.manual_seed(7)
    f = TinyJit(draw) if jit else draw
    runs[jit] = [[t.tolist() for t in f(a)] for _ in range(5)]
  assert runs[True] == runs[False]
  assert len({str(r) for r in runs[True]}) == 5  # every replay draws new numbers
  Tensor.manual_seed(7)
  Tensor.rand(2).realize()  # a draw outside the jit moves the stream on, as it would without the jit
  g = TinyJit(draw)
  got = [[t.tolist() for t in g(a)] for _ in range(4)]
  Tensor.manual_seed(7)
  Tensor.rand(2).realize()
  assert got == [[t.tolist() for t in draw(a)] for _ in range(4)]

def test_a_returned_input_is_this_calls_input():
  @TinyJit
  def f(a, b): return b.assign(a + 1)
  for i in range(4):
    a = Tensor([i])
    b = Tensor.empty_like(a)
    c = f(a, b)
    assert c is b and c.item() == i + 1

def test_a_jitted_method_has_one_jit_per_instance():
  class Model:
    def __init__(self, scale): self.scale = Tensor([float(scale)])
    @TinyJit
    def forward(self, x): return (x * self.scale).realize()
  m1, m2 = Model(2), Model(3)
  for _ in range(3): assert m1.forward(Tensor([5.0])).item() == 10  # captured and replayed with m1's scale
  assert [m2.forward(Tensor([5.0])).item() for _ in range(3)] == [15, 15, 15]  # m2 replays its own capture
  j1, j2 = m1.forward.func.__self__, m2.forward.func.__self__
  assert j1 is not j2 and j1.captured is not None and j2.captured is not None
  class Slots:  # no weak reference possible: the instances share the one jit, as before
    __slots__ = ("s",)
    def __init__(self): self.s = Tensor([1.0])
    f = TinyJit(lambda self, x: (x + self.s).realize())
  a = Slots()
  assert a.f(Tensor([1.0])).item() == 2 and a.f.func.__self__ is Slots.f

def test_last_output_fed_back_as_input_is_copied_first():
  # `buf = f(buf, frame)`: the input is the buffer the kernels write; read and written in one replay it would race
  @TinyJit
  def f(buf, frame):
    new = buf[1:].cat(frame, dim=0)
    return new.contiguous(), new[:1].contiguous()
  buf, ref = Tensor([[0], [1], [2]]).contiguous().realize(), [0, 1, 2]
  for i in range(5):
    buf, first = f(buf, Tensor([[10 + i]]).contiguous().realize())
    ref = ref[1:] + [10 + i]
    assert buf.flatten().tolist() == ref and first.item() == ref[0], i

def test_reading_values_while_capturing_is_refused():
  @TinyJit
  def f(x): return Tensor.zeros(int(x.sum().item()))
  f(Tensor([1, 1]))  # the first call runs the function: reading is fine
  with pytest.raises(JitError, match="while TinyJit captures"): f(Tensor([1, 1]))
  g = TinyJit(lambda x: Tensor(x.tolist()))
  g(Tensor([1, 2]))
  with pytest.raises(JitError, match="frozen"): g(Tensor([1, 2]))
  assert Tensor([3]).item() == 3  # and outside a capture, as always
