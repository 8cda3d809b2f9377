"""The recorder on the real engine: a realize and a training step give contexts, rewrites and matches whose graphs
rebuild exactly from the interned table, and pattern locations that point at real source lines."""
import linecache
import pytest
from profiler.events import ContextBegin, Kernel, PatternDef, Rewrite, Span, UOpDef, from_json
from profiler.recorder import Recorder, arg_repr

tracing = pytest.importorskip("tinygrad.tracing")
tinygrad = pytest.importorskip("tinygrad")
Tensor = tinygrad.Tensor

class Capturing(Recorder):
  """Also keeps the engine's own objects, to compare the trace against."""
  def __init__(self, *a, **kw):
    super().__init__(*a, **kw)
    self.seen: list[tuple] = []
  def rewrite_begin(self, name, loc, sink, start_ns=None):
    super().rewrite_begin(name, loc, sink, start_ns)
    self.seen.append(("begin", sink))
  def rewrite_match(self, pat, before, after, ns=0):
    super().rewrite_match(pat, before, after, ns)
    self.seen.append(("match", pat, before, after))
  def rewrite_end(self, sink, end_ns=None):
    super().rewrite_end(sink, end_ns)
    self.seen.append(("end", sink))

def capture(fn) -> tuple[Capturing, list]:
  got: list[dict] = []
  rec = Capturing("viz", sinks=[got.extend])
  assert tracing.tracer is None
  tracing.tracer = rec
  try: fn()
  finally:
    tracing.tracer = None
    rec.close()
  return rec, [from_json(d) for d in got]

def check_image(table: dict, u, uid: int, seen: dict) -> None:
  stack = [(u, uid)]
  while stack:
    u, i = stack.pop()
    if id(u) in seen:
      assert seen[id(u)] == i
      continue
    seen[id(u)] = i
    d = table[i]
    assert (d.op, d.dtype, d.arg, len(d.src)) == (u.op.name, str(u.dtype), arg_repr(u.arg), len(u.src))
    stack.extend(zip(u.src, d.src))

def check_trace(rec: Capturing, evs: list) -> None:
  table = {e.id: e for e in evs if isinstance(e, UOpDef)}
  pats = {e.id: e for e in evs if isinstance(e, PatternDef)}
  ctxs = {e.id: e for e in evs if isinstance(e, ContextBegin)}
  rws = [e for e in evs if isinstance(e, Rewrite)]
  assert rws and any(r.matches for r in rws)
  # rewrites end in order of their ends: pair the engine's calls with the recorded rewrites
  stack, done, seen = [], [], {}
  for s in rec.seen:
    if s[0] == "begin": stack.append([s[1], []])
    elif s[0] == "match": stack[-1][1].append(s[1:])
    else: done.append((*stack.pop(), s[1]))
  assert len(done) == len(rws)
  for (sink, matches, out), rw in zip(done, rws):
    assert rw.ctx in ctxs
    check_image(table, sink, rw.input, seen)
    check_image(table, out, rw.output, seen)
    assert len(matches) == len(rw.matches)
    for (pat, before, after), (pid, b, a) in zip(matches, rw.matches):
      check_image(table, before, b, seen)
      check_image(table, after, a, seen)
      assert (pats[pid].file, pats[pid].line) == pat.location
  for p in pats.values():
    line = linecache.getline(p.file, p.line)
    # a table's pattern, or a whole-graph step's function (graph_step: linearize, render, the optimizer's walks)
    assert ("UPat" in p.source or p.source.startswith("def ")) and p.source.splitlines()[0].strip() in line, (p.file, p.line, p.source)
  kernels = [e for e in evs if isinstance(e, Kernel)]
  assert all(k.ctx in ctxs and ctxs[k.ctx].kind == "kernel" and k.src for k in kernels)

def test_capture_of_a_realize():
  def run():
    a = Tensor.ones(13, 11) * 3 + Tensor.arange(11).reshape(1, 11)
    assert float(a.sum().numpy()) == pytest.approx(13 * (33 + 55))
  rec, evs = capture(run)
  check_trace(rec, evs)
  kspans = [e for e in evs if isinstance(e, Span) and e.cat == "kernel"]
  assert kspans and all(isinstance(s.args.get("kernel"), int) for s in kspans)

def test_capture_of_a_training_step():
  if not hasattr(Tensor, "backward"): pytest.skip("the engine has no autograd yet")
  def run():
    x, w = Tensor.rand(4, 3), Tensor.rand(3, 2, requires_grad=True)
    loss = (x @ w).relu().mean()
    loss.backward()
    (w - w.grad * 0.1).realize()
  rec, evs = capture(run)
  check_trace(rec, evs)
