"""The recorder driven by the real engine's UOp, UPat, PatternMatcher, graph_rewrite and track_context."""
import os, sys, threading, time
from contextlib import contextmanager
from tinygrad import dtypes
from tinygrad import tracing
from tinygrad.uop.ops import UOp, Ops, UPat, PatternMatcher, graph_rewrite, track_context
from profiler.events import ContextBegin, ContextEnd, Kernel, PatternDef, Rewrite, Run, RunEnd, UOpDef, from_json
from profiler.patsource import pattern_source
from profiler.recorder import Recorder
from test_profiler_engine import check_image

# pattern tables laid out the way real ones are: entries spread over several lines
SIMPLIFY = PatternMatcher([
  (UPat(Ops.ADD, src=(UPat.var("x"),
                      UPat.cvar("c"))),
   lambda x, c: x if c.arg == 0 else None),
  (UPat.var("x") * 1, lambda x: x),
  (UPat(Ops.MUL, src=(UPat.var("x"), UPat.cvar("c"))),
   lambda x, c: c if c.arg == 0 else None),
])
ADD0, MUL1, MUL0 = (p for p, _ in SIMPLIFY.patterns)

STANDALONE = UPat(Ops.SINK,
                  name="sink")

@contextmanager
def recording(mode: str = "viz", **kw):
  """Installs a recorder as the engine's tracer; the events are in the yielded list once the block has ended."""
  got: list[dict] = []
  evs: list = []
  rec = Recorder(mode, sinks=[got.extend], **kw)
  assert tracing.tracer is None
  tracing.attach(rec)  # as recorder.install plugs it in
  try: yield rec, evs
  finally:
    tracing.attach(None)
    rec.close()
    evs.extend(from_json(d) for d in got)

def of(evs: list, kind: type) -> list: return [e for e in evs if isinstance(e, kind)]

x = UOp.variable("x", 0, 9)
zero = UOp.const(dtypes.int, 0)

def expr() -> UOp:
  a, b = x * 1 + 0, (x + x) * 0
  return UOp(Ops.SINK, dtypes.void, (a, b, a + b))

def test_rewrite_graphs_rebuild_exactly_from_interned_table():
  with recording() as (rec, evs):
    with track_context("schedule", "realize") as ctx:
      out = graph_rewrite(expr(), SIMPLIFY, name="simplify"); line = sys._getframe().f_lineno
  assert isinstance(evs[0], Run) and isinstance(evs[-1], RunEnd)
  assert out is UOp(Ops.SINK, dtypes.void, (x, zero, x))
  # sources first, and every replacement rewritten again: a + b is rebuilt as x + 0 and matched once more
  applied = [(MUL1, x * 1, x), (ADD0, x + 0, x), (MUL0, (x + x) * 0, zero), (ADD0, x + 0, x)]
  table = {e.id: e for e in of(evs, UOpDef)}
  (rw,) = of(evs, Rewrite)
  assert (rw.ctx, rw.name, rw.loc) == (ctx.id, "simplify", (__file__, line)) and len(rw.matches) == len(applied)
  seen: dict[int, int] = {}
  check_image(table, expr(), rw.input, seen)
  check_image(table, out, rw.output, seen)
  pats = {e.id: e for e in of(evs, PatternDef)}
  for (pid, b, a), (pat, before, after) in zip(rw.matches, applied):
    check_image(table, before, b, seen)
    check_image(table, after, a, seen)
    assert (pats[pid].file, pats[pid].line) == pat.location
  assert len(pats) == 3 and len({pid for pid, _, _ in rw.matches}) == 3, "every pattern sent once"
  assert len(table) == len(seen) == len({id(u) for u in seen}), "every UOp sent once"
  # defs come before any use, so a reader can rebuild while streaming
  defined: set[int] = set()
  for e in evs:
    if isinstance(e, UOpDef): assert all(s in defined for s in e.src); defined.add(e.id)
    if isinstance(e, Rewrite): assert {e.input, e.output} | {u for _, b, a in e.matches for u in (b, a)} <= defined

def test_pattern_source_covers_multiline_entries():
  with recording() as (rec, evs):
    graph_rewrite(expr(), SIMPLIFY)
    graph_rewrite(UOp(Ops.SINK, dtypes.void, (x,)), PatternMatcher([(STANDALONE, lambda sink: sink.src[0])]))
  src = {(p.file, p.line): p.source for p in of(evs, PatternDef)}
  assert src[ADD0.location] == '(UPat(Ops.ADD, src=(UPat.var("x"),\n                      UPat.cvar("c"))),\n' \
                               '   lambda x, c: x if c.arg == 0 else None)'
  assert src[MUL1.location] == '(UPat.var("x") * 1, lambda x: x)'  # operator sugar is located where it was written
  assert src[MUL0.location] == '(UPat(Ops.MUL, src=(UPat.var("x"), UPat.cvar("c"))),\n   lambda x, c: c if c.arg == 0 else None)'
  assert src[STANDALONE.location] == 'UPat(Ops.SINK,\n                  name="sink")'
  assert pattern_source("/nonexistent/file.py", 3) == ""
  assert pattern_source(__file__, 10**6) == ""

def test_pattern_source_is_taken_at_record_time(tmp_path):
  f = tmp_path / "pats.py"
  f.write_text("# é\nP = [\n  (UPat('é', 1,\n        2), fn),\n]\n", encoding="utf-8")
  pm = PatternMatcher([(UPat(Ops.ADD, src=(UPat.var("x"), UPat.cvar("c")), location=(str(f), 3)), lambda x, c: x)])
  with recording() as (rec, evs):
    graph_rewrite(x + 0, pm)
    f.write_text("edited\n")
  (pat,) = of(evs, PatternDef)
  assert pat.source == "(UPat('é', 1,\n        2), fn)" and pat.line == 3

def test_deep_graph_interns_without_recursion():
  u = UOp.const(dtypes.int, 0)
  for i in range(30_000): u = UOp(Ops.ADD, dtypes.int, (u, UOp.const(dtypes.int, i % 7)))
  with recording() as (rec, evs): graph_rewrite(u, PatternMatcher([]), name="deep")
  table = {e.id: e for e in of(evs, UOpDef)}
  assert len(table) == 30_000 + 7
  (rw,) = of(evs, Rewrite)
  assert rw.input == rw.output and rw.matches == []
  check_image(table, u, rw.input, {})

def test_contexts_nest_and_rewrites_outside_get_a_user_context():
  with recording() as (rec, evs):
    with track_context("schedule", "realize") as s:
      with track_context("kernel", "E_4") as k: pass
    graph_rewrite(x, SIMPLIFY, name="user pass"); line = sys._getframe().f_lineno
  begins = of(evs, ContextBegin)
  assert [(b.kind, b.name, b.parent) for b in begins] == [("schedule", "realize", None), ("kernel", "E_4", s.id), ("user", "user pass", None)]
  assert begins[0].loc[0] == __file__ and begins[2].loc == (__file__, line)
  (rw,) = of(evs, Rewrite)
  assert rw.ctx == begins[2].id and rw.matches == []
  assert [e.id for e in of(evs, ContextEnd)] == [k.id, s.id, begins[2].id]

def test_kernel_and_timeline_events():
  with recording("profile") as (rec, evs):
    assert rec.capture_rewrites is False
    with track_context("kernel", "E_4") as ctx: graph_rewrite(expr(), SIMPLIFY)  # the engine skips both
    assert ctx.id == -1
    rec.rewrite_begin("called anyway", ("a.py", 1), x)  # and the recorder ignores them if called
    rec.rewrite_match(None, x, x)
    rec.rewrite_end(x)
    kid = rec.kernel("E_4", "CPU", "void E_4() {}", (4, 1, 1), (1, 1, 1), 8, 48, ctx.id, ["DEFINE_GLOBAL", "STORE"])
    rec.span("CPU", "E_4", 100, 250, "kernel", {"kernel": kid})
    rec.counter("CPU", "memory", 120, 4096)
    rec.marker("epoch 1", 300)
  (k,) = of(evs, Kernel)
  assert (k.id, k.global_size, k.flops, k.bytes, k.ctx, k.uops) == (kid, (4, 1, 1), 8, 48, -1, ["DEFINE_GLOBAL", "STORE"])
  assert [e.TYPE for e in evs] == ["run", "kernel", "track", "span", "counter", "marker", "run_end"]  # a track said once, first

def test_each_track_is_declared_once_with_the_engines_kind_before_its_first_use():
  from profiler.events import TrackDef, Span
  with recording("profile") as (rec, evs):
    rec.span("HOST", "codegen E_4", 1, 2, "codegen", {})
    rec.span("CPU:1/copy", "copy", 3, 4, "copy", {})
    rec.span("HOST", "compile", 5, 6, "compile", {})
    rec.counter("TENSOR", "x", 7, 1.0)
  tracks = [(e.name, e.kind) for e in evs if isinstance(e, TrackDef)]
  assert tracks == [("HOST", "host"), ("CPU:1/copy", "device"), ("TENSOR", "tensor")]  # tinygrad/tracing.py's TRACK_KINDS
  first = {}
  for i, e in enumerate(evs): first.setdefault(getattr(e, "track", None) or getattr(e, "name", None), (i, e.TYPE))
  assert all(first[n][1] == "track" for n, _ in tracks)

def test_the_viewer_takes_a_tracks_kind_from_the_trace_not_its_name():
  from viz.server.run import Run
  from profiler.events import TrackDef, Span, Run as RunEvent
  run = Run(0, "t", "ours", None, False)  # the server's index of a run, fed events as a file or /ingest feeds it
  run.add_events([RunEvent("/a.py", [], 0.0, 0, 1, "0", "profile"), TrackDef("HOST", "device"), TrackDef("GPU?", "host"),
                  Span("HOST", "k", 1, 2, "kernel", {}), Span("GPU?", "codegen", 3, 4, "codegen", {}), Span("OLD", "k", 5, 6, "kernel", {})])
  kinds = {t["name"]: t["kind"] for t in run.timeline.tracks_json()["tracks"]}
  assert kinds == {"HOST": "device", "GPU?": "host", "OLD": "device"}  # OLD: no track event (an old trace): its name decides

def test_run_event_carries_the_package_version():
  import re, profiler
  pyproject = open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "pyproject.toml")).read()
  assert profiler.__version__ == re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
  with recording() as (rec, evs): pass
  assert [e.TYPE for e in evs] == ["run", "run_end"] and evs[0].version == profiler.__version__

def test_background_flush_without_explicit_calls():
  got: list[dict] = []
  rec = Recorder("viz", sinks=[got.extend], flush_interval=0.05)
  rec.marker("m", 1)
  deadline = time.monotonic() + 5
  while not any(d["type"] == "marker" for d in got) and time.monotonic() < deadline: time.sleep(0.01)
  assert any(d["type"] == "marker" for d in got)
  rec.close()

def test_threads_keep_their_own_rewrite_stacks():
  inputs = {n: [UOp.variable(f"v{n}_{i}", 0, 9) for i in range(50)] for n in range(4)}
  def work(n: int) -> None:
    for v in inputs[n]: assert graph_rewrite(v + 0, SIMPLIFY) is v
  with recording() as (rec, evs):
    ts = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in ts: t.start()
    for t in ts: t.join()
  table = {e.id: e for e in of(evs, UOpDef)}
  rws = of(evs, Rewrite)
  assert len(rws) == 200 and all(len(r.matches) == 1 for r in rws)
  assert len({r.ctx for r in rws}) == 200, "each call outside a context gets its own user context"
  for r in rws:  # v + 0 -> the same thread's v
    _, b, a = r.matches[0]
    assert table[a].op == "DEFINE_VAR" and table[b].src[0] == a and r.output == a and r.input == b

def test_sink_errors_do_not_stop_recording(tmp_path, capsys):
  def bad(batch): raise RuntimeError("socket closed")
  path = str(tmp_path / "t.jsonl")
  rec = Recorder("viz", path=path, sinks=[bad])
  rec.marker("still written", 5)
  rec.close()
  assert "dropping event sink" in capsys.readouterr().err
  assert "still written" in open(path).read()

def test_install_sets_and_clears_the_engine_hook(tmp_path):
  from profiler import recorder
  assert tracing.tracer is None
  rec = recorder.install("profile", path=str(tmp_path / "i.jsonl"), announce=False, attach=tracing.attach)
  try: assert tracing.tracer is rec and rec.capture_rewrites is False
  finally: assert recorder.uninstall() == str(tmp_path / "i.jsonl")
  assert tracing.tracer is None and rec.closed

def test_importing_profiler_does_not_import_the_engine():
  import subprocess
  code = "import sys, profiler.recorder, profiler.load, profiler.summary; print(any(m.startswith('tinygrad') for m in sys.modules))"
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=os.path.dirname(os.path.dirname(__file__)))
  assert out.stdout.strip() == "False", out.stderr

def test_env_mode_and_default_path(monkeypatch, tmp_path):
  from profiler.recorder import default_trace_path, mode_from_env
  monkeypatch.delenv("VIZ", raising=False)
  monkeypatch.setenv("PROFILE", "1")
  assert mode_from_env() == "profile"
  monkeypatch.setenv("VIZ", "-1")
  assert mode_from_env() == "viz"
  monkeypatch.setenv("TINYVIZ_TRACE_DIR", str(tmp_path))
  monkeypatch.delenv("TINYVIZ_TRACE", raising=False)
  assert default_trace_path().startswith(str(tmp_path)) and default_trace_path().endswith(".tinyviz.jsonl")

def test_bad_arg_repr_and_long_args_are_safe():
  class Bad:
    def __repr__(self): raise ValueError("no")
    def __hash__(self): return 1
  a, b = UOp(Ops.NOOP, dtypes.void, (), Bad()), UOp(Ops.NOOP, dtypes.void, (), "y" * 10_000)
  with recording() as (rec, evs): graph_rewrite(UOp(Ops.SINK, dtypes.void, (a, b)), PatternMatcher([]))
  args = [e.arg for e in of(evs, UOpDef)]
  assert "<Bad>" in args and max(map(len, args)) == 200

def test_forked_child_leaves_the_parents_file_alone(tmp_path):
  from profiler import recorder
  path = str(tmp_path / "fork.jsonl")
  rec = recorder.install("profile", path=path, announce=False, attach=tracing.attach)
  try:
    rec.marker("parent", 1)
    rec.flush()
    pid = os.fork()
    if pid == 0:
      ok = tracing.tracer is None
      os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
  finally: recorder.uninstall()
  text = open(path).read()
  assert text.count('"parent"') == 1 and text.count('"run_end"') == 1
