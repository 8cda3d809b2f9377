"""Every change to a kernel's graph is a recorded rewrite (issue 15): within each kernel's codegen context, each
rewrite starts from the graph the previous one returned, and every match names the pattern that made it. Checked
over kernels of many shapes (elementwise, reductions, matmuls, convolutions, pools, their gradients)."""
from __future__ import annotations
import collections
import numpy as np
import pytest
from profiler.events import ContextBegin, PatternDef, Rewrite, from_json
from profiler.recorder import Recorder
from tinygrad import Tensor, nn, tracing

def _record(fn) -> list:
  got: list = []
  rec = Recorder("viz", sinks=[got.extend])
  old, tracing.tracer = tracing.tracer, rec
  try: fn()
  finally:
    rec.close()
    tracing.tracer = old
  return [from_json(e) if isinstance(e, dict) else e for e in got]

def _workload() -> None:
  rng = np.random.default_rng(0)
  x = Tensor(rng.random((4, 2, 12, 12), dtype=np.float32), requires_grad=True)
  c, l = nn.Conv2d(2, 8, 3, padding=1), nn.Linear(8 * 6 * 6, 10)
  out = l(c(x).relu().max_pool2d().flatten(1)).log_softmax().sum()
  out.backward()
  Tensor.realize(out, x.grad, c.weight.grad, l.weight.grad)
  a = Tensor(rng.random((64, 48), dtype=np.float32))
  Tensor.realize((a @ a.T).relu().sum(axis=1), a.max(axis=0), (a * 2 + 1).exp().mean(), a.reshape(4, 4, 4, 48).sum(axis=(1, 2)),
                 a[:16, :16].reshape(4, 4, 16).avg_pool2d((2, 2)) if a.ndim else a)

@pytest.fixture(scope="module")
def events():
  return _record(_workload)

def test_every_kernel_rewrite_starts_where_the_last_one_ended(events):
  ctxs = {e.id: e for e in events if isinstance(e, ContextBegin)}
  by_ctx: dict[int, list[Rewrite]] = collections.defaultdict(list)
  for e in events:
    if isinstance(e, Rewrite): by_ctx[e.ctx].append(e)
  kernels = [c for c in ctxs.values() if c.kind == "kernel"]
  assert len(kernels) >= 10
  gaps = [(ctxs[c].name, p.name, n.name) for c, rs in by_ctx.items() if ctxs.get(c) is not None and ctxs[c].kind == "kernel"
          for p, n in zip(rs, rs[1:]) if n.input != p.output]
  assert gaps == [], gaps
  for c in kernels:  # and the rewrites of a kernel end in the graph its program was made from: more than one step
    assert len(by_ctx[c.id]) >= 2, c.name

def test_every_match_names_its_pattern(events):
  pats = {e.id: e for e in events if isinstance(e, PatternDef)}
  ctxs = {e.id: e for e in events if isinstance(e, ContextBegin)}
  missing = [(r.name, i) for r in events if isinstance(r, Rewrite) and ctxs.get(r.ctx) is not None and ctxs[r.ctx].kind == "kernel"
             for i, (p, _, _) in enumerate(r.matches) if p is None or p not in pats]
  assert missing == [], missing[:10]
  steps = [r for r in events if isinstance(r, Rewrite) and r.name.startswith("opt: ") and r.matches and "lanes" in r.name]
  assert steps, "the vector plans are traced steps"
  for r in steps:  # a whole-graph step's pattern is the function that made it, with its file and line
    p = pats[r.matches[0][0]]
    assert p.file.endswith(".py") and p.line > 0 and p.source.startswith("def ")
