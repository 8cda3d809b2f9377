"""With nothing traced, create_schedule makes its graphs with walks instead of the recorded rewrites (engine/schedule.py:
remove_noop_movement, mark_realize, split_kernels, kernel_params): the same kernels, in the same order, as under a
tracer, where every step is the rewrite. Checked on graphs that take each path, the rewrite's fallbacks included."""
from __future__ import annotations
import numpy as np
import pytest
from profiler.recorder import Recorder
from tinygrad import Tensor, nn, tracing
from tinygrad.engine.schedule import create_schedule

def _plan(targets) -> list:
  """What the schedule does, buffer numbers aside: each item's kind, kernel (numbered parameters: hash-consed, so
  equal kernels are the same object), sizes, and which of the graph's buffers it reads and writes."""
  items, becomes = create_schedule(targets)
  made = {o: i for i, it in enumerate(items) for o in it.outputs}
  leaves: dict = {}  # the graph's own buffers, numbered as first read (each make() builds new ones)
  name = lambda b: ("made", made[b]) if b in made else ("leaf", leaves.setdefault(b, len(leaves)))
  out = [(it.kind, it.params_ast if it.kind == "kernel" else it.ast.src[1].arg, [name(b) for b in (it.bufs or [])],
          [o.arg[1] for o in it.outputs], name(it.overwrites) if it.overwrites is not None else None) for it in items]
  return out + [(becomes[t].shape, becomes[t].op) for t in targets]

def _both(make):
  plain = _plan(make())
  got: list = []
  rec = Recorder("viz", sinks=[got.extend])
  old, tracing.tracer = tracing.tracer, rec
  try: traced = _plan(make())
  finally:
    rec.close()
    tracing.tracer = old
  assert got, "the recorder saw nothing: the second schedule was not traced"
  return plain, traced

def _conv_step():
  rng = np.random.default_rng(0)
  x = Tensor(rng.random((4, 2, 12, 12), dtype=np.float32), requires_grad=True)
  c, l = nn.Conv2d(2, 8, 3, padding=1), nn.Linear(8 * 6 * 6, 10)
  out = l(c(x).relu().max_pool2d().flatten(1)).log_softmax().sum()
  out.backward()
  return [out.uop, x.grad.uop, c.weight.grad.uop, l.weight.grad.uop]

def _realized(*shape):
  return Tensor(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)).realize()

def _reduce_and_its_contiguous():  # y and y.contiguous() in one graph, y a realize point: the rewrite's fallback
  y = _realized(8, 8).sum(axis=1)
  return [(y.contiguous() + 1).uop, y.reshape(2, 4).max(axis=1).uop, y.uop]

def _f_of_y_and_of_y_contiguous():  # f(y) and f(y.contiguous()): a rebuilt node that is already a node of the graph
  y = _realized(16).exp()
  return [(y.sum() * 2).uop, (y.contiguous().sum() * 2).uop, y.uop]

def _noop_views_and_detach():
  a = _realized(4, 6)
  b = a.reshape(4, 6).detach().permute(0, 1).reshape(2, 12).reshape(24).expand(24)
  return [(b * 3).uop, a.pad(((0, 0), (0, 0))).shrink(((0, 4), (0, 6))).flip((0,)).sum().uop]

def _assigns():
  t, u = _realized(8), _realized(8)
  t.assign(t + u)
  u.assign(t.flip(0) * 2)  # reads t moved: computed into a temporary first
  return [t.uop, u.uop]

def _big_sum():
  return [Tensor.ones(1 << 22).contiguous().sum().uop]

def _draw():
  Tensor.manual_seed(1)
  return [Tensor.kaiming_uniform(16, 4, 3, 3).uop, Tensor.randint(9, high=5).uop]

@pytest.mark.parametrize("make", [_conv_step, _reduce_and_its_contiguous, _f_of_y_and_of_y_contiguous, _noop_views_and_detach,
                                  _assigns, _big_sum, _draw])
def test_untraced_schedule_is_the_traced_one(make):
  plain, traced = _both(make)
  assert len(plain) > 1
  assert plain == traced

def test_values_of_the_fallback_graphs():
  y = _realized(8, 8).sum(axis=1)
  a, b = (y.contiguous() + 1), y.reshape(2, 4).max(axis=1)
  Tensor.realize(a, b, y)
  ref = np.arange(64, dtype=np.float32).reshape(8, 8).sum(axis=1)
  np.testing.assert_allclose(a.numpy(), ref + 1)
  np.testing.assert_allclose(b.numpy(), ref.reshape(2, 4).max(axis=1))
  np.testing.assert_allclose(y.numpy(), ref)
  z = _realized(16).exp()
  p, q = z.sum() * 2, z.contiguous().sum() * 2
  Tensor.realize(p, q, z)
  np.testing.assert_allclose([p.item(), q.item()], [np.exp(np.arange(16, dtype=np.float32)).sum() * 2] * 2, rtol=1e-5)
