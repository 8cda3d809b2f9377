"""Every change to a kernel's graph is a recorded rewrite (issue 15): within each kernel's codegen context, each
rewrite starts from the graph the previous one returned, and every match names the pattern that made it. Checked
over kernels of many shapes (elementwise, reductions, matmuls, convolutions, pools, their gradients)."""
from __future__ import annotations
import collections, os, pathlib, subprocess, sys
import numpy as np
import pytest
from profiler.events import ContextBegin, Kernel, PatternDef, Rewrite, UOpDef, from_json
from profiler.load import load
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

def test_every_match_has_its_time(events):
  # the match panel shows how long each match's rewrite took: within its rewrite's span, also for an optimizer plan's
  # rewrites, which are handed to the trace after the plan won (with the times they ran, not the hand-over's)
  rws = [r for r in events if isinstance(r, Rewrite)]
  assert all(len(r.match_ns) == len(r.matches) and all(ns >= 0 for ns in r.match_ns) for r in rws)
  assert sum(ns > 0 for r in rws for ns in r.match_ns) > len(rws)
  over = [(r.name, sum(r.match_ns), r.dur_ns) for r in rws if sum(r.match_ns) > r.dur_ns]
  assert over == [], over[:5]

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

# *** the op suite under the recorder (issue 15's done-means): every kernel context, from lowering to the rendered code

# what a uop's text holds, whatever else is around it: its C spelling (an operator or a function's name)
SPELLING = {"ADD": "+", "SUB": "-", "MUL": "*", "FDIV": "/", "IDIV": "/", "MOD": "%", "CMPLT": "<", "CMPNE": "!=", "CMPEQ": "==",
            "AND": "&", "OR": "|", "XOR": "^", "SHL": "<<", "SHR": ">>", "MAX": "<", "WHERE": "?", "MULACC": "*", "RECIP": "1/",
            "EXP2": "exp2", "LOG2": "log2", "SIN": "sin", "SQRT": "sqrt", "TRUNC": "trunc", "POW": "pow", "NEG": "-"}
ALU = set(SPELLING)

def _renders(op: str, arg: str, srcs: list, line: str) -> bool:
  """Whether `line` holds what a uop renders: its operator (a vector WHERE/MAX blends with & and |, a bool NEG is !),
  the buffer a LOAD/STORE reads or writes, the bound of a loop, and an ALU's integer constants."""
  if op == "LOAD" or op == "STORE": return f"data{srcs[0].arg.strip('()').split(',')[0]}" in line
  if op == "RANGE": return f"< {srcs[0].arg};" in line or "gid" in line
  if op == "NEG" and "!" in line: return True
  if op in ("WHERE", "MAX") and "&~" in line: return True
  return SPELLING[op] in line and all(s.arg in line for s in srcs if s.op == "CONST" and s.arg.lstrip("-").isdigit())

@pytest.fixture(scope="module")
def op_suite(tmp_path_factory):
  """tests/test_ops.py on the CPU device with VIZ=-1, as a user would record it: the trace file's events."""
  d = tmp_path_factory.mktemp("ops")
  root = pathlib.Path(__file__).resolve().parent.parent
  env = {**os.environ, "VIZ": "-1", "TINYVIZ_TRACE": str(d / "ops.jsonl"), "TINYVIZ_CACHE": str(d / "cache"), "PYTHONPATH": str(root)}
  env.pop("VIZ_PLANS", None); env.pop("DEBUG", None)
  p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider", "-k", "CPU",
                      str(root / "tests" / "test_ops.py")], cwd=root, env=env, capture_output=True, text=True, timeout=900)
  assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
  return load(str(d / "ops.jsonl")).events

def test_op_suite_every_kernel_context_is_whole(op_suite):
  evs = op_suite
  table = {e.id: e for e in evs if isinstance(e, UOpDef)}
  pats = {e.id for e in evs if isinstance(e, PatternDef)}
  ctxs = {e.id: e for e in evs if isinstance(e, ContextBegin)}
  by_ctx: dict[int, list[Rewrite]] = collections.defaultdict(list)
  for e in evs:
    if isinstance(e, Rewrite): by_ctx[e.ctx].append(e)
  kernels = [e for e in evs if isinstance(e, Kernel)]
  assert len(kernels) >= 100 and all(ctxs[k.ctx].kind == "kernel" for k in kernels)
  problems: list[tuple] = []
  for k in kernels:
    rws = by_ctx[k.ctx]
    # no gap: each rewrite starts from the graph the previous one returned, from the lowering to the rendered program
    problems += [(k.name, "gap", p.name, n.name) for p, n in zip(rws, rws[1:]) if n.input != p.output]
    # no match without a pattern
    problems += [(k.name, "no pattern", r.name) for r in rws for pid, _, _ in r.matches if pid is None or pid not in pats]
    if [r.name for r in rws[-2:]] != ["linearize", "render"]: problems.append((k.name, "ends with", [r.name for r in rws[-2:]])); continue
    prog, lin = table[rws[-1].output], table[rws[-1].input]
    assert prog.op == "PROGRAM" and prog.src[0] == lin.id and lin.op == "LINEAR" and table[prog.src[1]].op == "SOURCE"
    # line_uops: every ALU, LOAD, STORE and loop of the final program on a line of src that holds what it renders
    lines = k.src.split("\n")
    assert len(k.line_uops) == len(lines), k.name
    where: dict[int, list[int]] = collections.defaultdict(list)
    for i, ids in enumerate(k.line_uops):
      for u in ids: where[u].append(i)
    for u in lin.src:
      d = table[u]
      if d.op not in ALU | {"LOAD", "STORE", "RANGE"}: continue
      srcs = [table[s] for s in d.src]
      if not any(_renders(d.op, d.arg, srcs, lines[i]) for i in where.get(u, [])):
        problems.append((k.name, d.op, u, [lines[i] for i in where.get(u, [])]))
  assert problems == [], problems[:10]
