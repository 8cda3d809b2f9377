"""@function (tinygrad/function.py): a call node traced once per input signature, its kernels reused, gradients
through it equal to the plain function's (checked against torch), implicit inputs, writes, nesting, errors. The
digits script written in beautiful_mnist's idiom (tests/scripts/mnist_function_style.py) trains, also under VIZ=-1."""
import json, pathlib, subprocess, sys, os
import numpy as np, pytest, torch
from tinygrad import Tensor, function, nn, GlobalCounters
from tinygrad.engine import schedule_cache, realize
from tinygrad.uop.ops import Ops
from test_compat_scripts import mnist_dir, accuracy  # noqa: F401  (the digits as MNIST files, a fixture)

ROOT = pathlib.Path(__file__).resolve().parent.parent
rng = np.random.default_rng(0)

class MLP:
  def __init__(self, w1: np.ndarray, w2: np.ndarray):
    self.w1, self.w2 = Tensor(w1, requires_grad=True), Tensor(w2, requires_grad=True)
  def plain(self, x: Tensor) -> Tensor: return (x @ self.w1).relu() @ self.w2
  @function
  def __call__(self, x: Tensor) -> Tensor: return (x @ self.w1).relu() @ self.w2

def weights() -> tuple[np.ndarray, np.ndarray]: return rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)

def test_a_function_is_one_call_node_with_the_arguments_tensors_as_its_sources():
  @function
  def f(a: Tensor, b: Tensor) -> Tensor: return a + b
  a, b = Tensor([1, 2, 3]), Tensor([4, 5, 6])
  out = f(a, b)
  assert out.uop.op is Ops.GETTUPLE and out.uop.src[0].op is Ops.CALL
  assert out.uop.src[0].src[1:] == (a.uop, b.uop) and out.uop.src[0].arg.name.endswith("f")
  np.testing.assert_equal(out.numpy(), [5, 7, 9])
  np.testing.assert_equal(f(a, a).numpy(), [2, 4, 6])  # the same tensor twice is one parameter

def test_a_forward_called_three_times_traces_once_and_reuses_its_schedule_and_kernels():
  m = MLP(*weights())
  xs = [rng.standard_normal((4, 6)).astype(np.float32) for _ in range(3)]
  outs = [m(Tensor(xs[0])).numpy()]
  programs, hits = len(realize._programs), schedule_cache.stats["hits"]
  outs += [m(Tensor(x)).numpy() for x in xs[1:]]
  assert MLP.__call__.trace_count == 1
  assert len(realize._programs) == programs  # no kernel compiled again
  assert schedule_cache.stats["hits"] == hits + 2  # nor scheduled again
  for x, o in zip(xs, outs): np.testing.assert_allclose(o, np.maximum(x @ m.w1.numpy(), 0) @ m.w2.numpy(), rtol=1e-5, atol=1e-5)
  # another shape is another signature: traced again
  m(Tensor(xs[0][:2])).realize()
  assert MLP.__call__.trace_count == 2

def test_a_method_reads_its_weights_as_parameters_so_updated_weights_are_used_without_tracing_again():
  m = MLP(*weights())
  x = Tensor(rng.standard_normal((2, 6)).astype(np.float32)).realize()
  body = m(x).uop.src[0].src[0]
  assert {p.arg.name for p in body.toposort() if p.op is Ops.PARAM} == {"self.w1", "self.w2", "x"}  # named as the user wrote them
  n = MLP.__call__.trace_count
  m.w2.assign(m.w2 * 2).realize()
  np.testing.assert_allclose(m(x).numpy(), m.plain(x).numpy(), rtol=1e-5)
  assert MLP.__call__.trace_count == n

def test_gradients_through_a_call_equal_the_plain_functions_and_torchs():
  w1, w2 = weights()
  x = rng.standard_normal((4, 6)).astype(np.float32)
  m = MLP(w1, w2)
  for step in range(2):  # the second backward reuses the backward call's body
    m.w1.grad = m.w2.grad = None
    m(Tensor(x)).square().mean().backward()
    got = m.w1.grad.numpy(), m.w2.grad.numpy()
  m.w1.grad = m.w2.grad = None
  m.plain(Tensor(x)).square().mean().backward()
  plain = m.w1.grad.numpy(), m.w2.grad.numpy()
  tw1, tw2 = torch.tensor(w1, requires_grad=True), torch.tensor(w2, requires_grad=True)
  ((torch.tensor(x) @ tw1).relu() @ tw2).square().mean().backward()
  for g, p, t in zip(got, plain, (tw1.grad.numpy(), tw2.grad.numpy())):
    np.testing.assert_allclose(g, p, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)

def test_the_gradient_of_an_argument_the_body_does_not_read_is_zero_and_of_two_outputs_sums():
  @function
  def f(a: Tensor, b: Tensor, c: Tensor) -> tuple[Tensor, Tensor]: return a * c, a + c
  a, b, c = (Tensor([1., 2., 3.], requires_grad=True) for _ in range(3))
  p, q = f(a, b, c)
  (p + q).sum().backward()
  np.testing.assert_allclose(a.grad.numpy(), [2, 3, 4])  # c + 1
  np.testing.assert_allclose(b.grad.numpy(), [0, 0, 0])
  np.testing.assert_allclose(c.grad.numpy(), [2, 3, 4])  # a + 1

def test_calls_nest_forward_and_backward():
  w = Tensor([[1., 2.], [3., 4.]]).contiguous().realize()
  @function(allow_implicit=True)
  def inner(x: Tensor) -> Tensor: return x + w
  @function(allow_implicit=True)
  def outer(a: Tensor, b: Tensor) -> Tensor: return inner(a.reshape(1, 2) + b.reshape(1, 2)) * inner(a.reshape(1, 2))
  a, b = Tensor([1., 2.], requires_grad=True), Tensor([3., 4.], requires_grad=True)
  out = outer(a, b)
  A, B, W = np.array([[1., 2.]]), np.array([[3., 4.]]), w.numpy()
  np.testing.assert_allclose(out.numpy(), (A + B + W) * (A + W))
  out.sum().backward()
  np.testing.assert_allclose(a.grad.numpy(), ((A + W) + (A + B + W)).sum(0))
  np.testing.assert_allclose(b.grad.numpy(), (A + W).sum(0))
  assert inner.trace_count == 1  # both inner calls have one signature

def test_implicit_inputs_are_refused_with_tinygrads_message_or_taken_as_parameters():
  inp = Tensor([7, 8, 9]).realize()
  @function
  def f(a: Tensor) -> Tensor: return a + inp
  with pytest.raises(RuntimeError) as e: f(Tensor([1, 2, 3]))
  assert str(e.value) == "function test_implicit_inputs_are_refused_with_tinygrads_message_or_taken_as_parameters.<locals>.f has 1 implicit " \
                         "buffer(s), but allow_implicit=False\n  0: dtype=dtypes.int, size=3, device=CPU"
  @function(allow_implicit=True)
  def g(a: Tensor) -> Tensor: return a + inp
  out = g(Tensor([1, 2, 3]))
  assert inp.uop in out.uop.src[0].src[1:]  # the implicit buffer is an argument of the call
  np.testing.assert_equal(out.numpy(), [8, 10, 12])
  # a lazy tensor outside that reads an argument is that argument, not an implicit input
  x = Tensor([1, 2, 3]).realize()
  y = x * 10
  @function
  def h(a: Tensor) -> Tensor: return a + y
  np.testing.assert_equal(h(x).numpy(), [11, 22, 33])

def test_a_bodys_writes_happen_on_every_call_like_batchnorms_running_statistics():
  bn, ref = nn.BatchNorm(3), nn.BatchNorm(3)
  bn.weight.realize(); bn.bias.realize()  # as an optimizer does (else they are the same constants as the running statistics)
  step = function(lambda bn, x: bn(x))
  with Tensor.train():
    for i in range(3):
      x = rng.standard_normal((8, 3)).astype(np.float32)
      step(bn, Tensor(x)).realize(); ref(Tensor(x)).realize()
  assert step.trace_count == 1
  np.testing.assert_allclose(bn.running_mean.numpy(), ref.running_mean.numpy(), rtol=1e-6)
  np.testing.assert_allclose(bn.running_var.numpy(), ref.running_var.numpy(), rtol=1e-6)
  assert bn.num_batches_tracked.item() == 3

def test_a_body_that_draws_random_numbers_is_traced_on_every_call():
  @function
  def noisy(x: Tensor) -> Tensor: return x + Tensor.rand(*x.shape)
  with pytest.raises(RuntimeError, match="implicit buffer"): noisy(Tensor.zeros(4).contiguous())  # its random key is an input
  noisy2 = function(allow_implicit=True)(lambda x: x + Tensor.rand(*x.shape))
  a, b = noisy2(Tensor.zeros(4).contiguous()).numpy(), noisy2(Tensor.zeros(4).contiguous()).numpy()
  assert noisy2.trace_count == 2 and not np.array_equal(a, b)

def test_training_mode_and_other_argument_values_are_part_of_the_signature():
  @function
  def f(x: Tensor, scale: float) -> Tensor: return x * scale if Tensor.training else x
  x = Tensor([1., 2.])
  np.testing.assert_allclose(f(x, 3.0).numpy(), [1, 2])
  with Tensor.train():
    np.testing.assert_allclose(f(x, 3.0).numpy(), [3, 6])
    np.testing.assert_allclose(f(x, 4.0).numpy(), [4, 8])
  assert f.trace_count == 3

def test_a_methods_other_attributes_are_part_of_the_signature():
  class Scale:
    def __init__(self, k: float): self.k = k
    @function
    def __call__(self, x: Tensor) -> Tensor: return x * self.k
  x = Tensor([1., 2.])
  np.testing.assert_allclose(Scale(2.0)(x).numpy(), [2, 4])
  np.testing.assert_allclose(Scale(3.0)(x).numpy(), [3, 6])  # not the body traced for k=2
  np.testing.assert_allclose(Scale(2.0)(x).numpy(), [2, 4])
  assert Scale.__call__.trace_count == 2

def test_precompile_keeps_the_bodys_kernels_its_own():
  plain, pre = function(lambda x: x * 2), function(precompile=True)(lambda x: x * 2)
  x = Tensor([1., 2., 3.]).realize()
  counts = []
  for f in (plain, pre):
    GlobalCounters.reset()
    np.testing.assert_allclose((f(x) + 1).numpy(), [3, 5, 7])
    counts.append(GlobalCounters.kernel_count)
  assert counts[1] == counts[0] + 1  # the call's output is a buffer of its own, not fused into the + 1

def test_precompile_backward_makes_the_backward_call_precompiled():
  @function(precompile_backward=True)
  def f(t: Tensor, w: Tensor) -> Tensor: return t @ w
  t, w = Tensor.ones(4, 4), Tensor.ones(4, 4, requires_grad=True)
  f(t, w).sum().backward()
  call = w.grad.uop.base.src[0]
  assert call.op is Ops.CALL and call.arg.precompile and call.arg.name.endswith("f_backward")
  np.testing.assert_allclose(w.grad.numpy(), np.full((4, 4), 4.0))

def test_grad_fxn_gives_the_calls_gradient():
  @function(grad_fxn=lambda g, call: (g * 100,))
  def f(x: Tensor) -> Tensor: return x * 2
  x = Tensor([1., 2.], requires_grad=True)
  f(x).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), [100, 100])
  @function(grad_fxn=lambda g, call: g)
  def bad(x: Tensor) -> Tensor: return x * 2
  y = Tensor([1.], requires_grad=True)
  with pytest.raises(RuntimeError, match="must return a tuple of 1 gradients"): bad(y).sum().backward()

@pytest.mark.parametrize("ret", [3, [1], (1, 2)], ids=["int", "list", "tuple of ints"])
def test_a_body_returning_something_else_than_tensors_is_refused_as_tinygrad_does(ret):
  f = function(lambda x: ret)
  with pytest.raises(RuntimeError, match=f"function return type {type(ret)} not supported"): f(Tensor([1.]))

def test_other_wrong_uses_name_the_problem():
  with pytest.raises(TypeError, match="@function needs a callable, got int"): function(3)
  @function
  def peek(x: Tensor) -> Tensor: return x * x.sum().item()
  with pytest.raises(RuntimeError, match="a @function body realized a tensor computed from its input"): peek(Tensor([1., 2.]))
  # the failed trace left the argument as it was
  x = Tensor([1., 2.])
  with pytest.raises(RuntimeError): peek(x)
  np.testing.assert_allclose((x * 2).numpy(), [2, 4])

def run_script(mnist_dir, **env) -> subprocess.CompletedProcess:
  e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG")}
  return subprocess.run([sys.executable, str(ROOT / "tests" / "scripts" / "mnist_function_style.py")], capture_output=True, text=True,
                        env={**e, "MNIST_DIR": str(mnist_dir), "STEPS": "40", "BS": "128", **env}, timeout=600, cwd=ROOT)

def test_the_function_style_digits_script_trains(mnist_dir):  # noqa: F811
  assert accuracy(run_script(mnist_dir)) >= 95

def test_the_function_style_script_under_viz_records_the_call_and_its_body(mnist_dir, tmp_path):  # noqa: F811
  trace = tmp_path / "fn.tinyviz.jsonl"
  assert accuracy(run_script(mnist_dir, VIZ="-1", TINYVIZ_TRACE=str(trace), STEPS="20")) >= 80
  events = [json.loads(line) for line in trace.read_text().splitlines()[1:]]
  calls = {e["id"]: e for e in events if e["type"] == "context_begin" and e["kind"] == "call"}
  assert {c["name"] for c in calls.values()} >= {"Model.__call__", "Model.__call___backward"}
  bodies = {e["output"] for e in events if e["type"] == "rewrite" and e["ctx"] in calls}
  uops = {e["id"]: e for e in events if e["type"] == "uop"}
  call_nodes = [u for u in uops.values() if u["op"] == "CALL"]
  assert call_nodes and all(u["src"][0] in bodies for u in call_nodes)  # every call node's body is a call context's graph
  assert any(e["type"] == "rewrite" and e["name"] == "schedule: inline calls" and e["matches"] for e in events)
