import os, sys, threading, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures"))
import fake_engine as fe
from fake_engine import Ops, UOp
from profiler.events import ContextBegin, ContextEnd, Kernel, PatternDef, Rewrite, Run, RunEnd, UOpDef, from_json
from profiler.patsource import pattern_source
from profiler.recorder import Recorder

def record(mode: str = "viz", **kw) -> tuple[Recorder, list[dict]]:
  got: list[dict] = []
  return Recorder(mode, sinks=[got.extend], **kw), got

def events(rec: Recorder, got: list[dict]) -> list:
  rec.close()
  return [from_json(d) for d in got]

def check_image(table: dict[int, UOpDef], u: UOp, uid: int, seen: dict[int, int]) -> None:
  """u's whole graph rebuilds from the table: same op, dtype, arg at every node, shared nodes shared."""
  stack = [(u, uid)]
  while stack:
    u, i = stack.pop()
    if id(u) in seen:
      assert seen[id(u)] == i, "one UOp interned under two ids"
      continue
    seen[id(u)] = i
    d = table[i]
    assert (d.op, d.dtype, d.arg, len(d.src)) == (u.op.name, u.dtype, repr(u.arg), len(u.src))
    stack.extend(zip(u.src, d.src))

def expr() -> UOp:
  x = UOp(Ops.LOAD, arg="x")
  a = UOp(Ops.ADD, src=(UOp(Ops.MUL, src=(x, UOp.const(1))), UOp.const(0)))
  b = UOp(Ops.MUL, src=(UOp(Ops.ADD, src=(x, x)), UOp.const(0)))
  return UOp(Ops.SINK, src=(a, b, UOp(Ops.ADD, src=(a, b))))

def test_rewrite_graphs_rebuild_exactly_from_interned_table():
  rec, got = record()
  ctx = rec.context_begin("schedule", "realize", ("script.py", 3))
  out, applied = fe.graph_rewrite(expr(), fe.PATTERNS, rec, name="simplify")
  rec.context_end(ctx)
  evs = events(rec, got)
  assert isinstance(evs[0], Run) and isinstance(evs[-1], RunEnd)
  table = {e.id: e for e in evs if isinstance(e, UOpDef)}
  (rw,) = [e for e in evs if isinstance(e, Rewrite)]
  assert rw.ctx == ctx and rw.name == "simplify" and len(rw.matches) == len(applied) >= 4
  seen: dict[int, int] = {}
  check_image(table, expr(), rw.input, seen)
  check_image(table, out, rw.output, seen)
  pats = {e.id: e for e in evs if isinstance(e, PatternDef)}
  for (pid, b, a), (pat, before, after) in zip(rw.matches, applied):
    check_image(table, before, b, seen)
    check_image(table, after, a, seen)
    assert (pats[pid].file, pats[pid].line) == pat.location
  assert len(table) == len(seen) == len({id(u) for u in seen}), "every UOp sent once"
  # defs come before any use, so a reader can rebuild while streaming
  defined: set[int] = set()
  for e in evs:
    if isinstance(e, UOpDef): assert all(s in defined for s in e.src); defined.add(e.id)
    if isinstance(e, Rewrite): assert {e.input, e.output} | {u for _, b, a in e.matches for u in (b, a)} <= defined

def test_pattern_source_covers_multiline_entries():
  path = fe.__file__
  lines = open(path).read().splitlines()
  add_line = next(i + 1 for i, l in enumerate(lines) if "(UPat(Ops.ADD" in l)
  src = pattern_source(path, add_line)
  assert src.startswith("(UPat(Ops.ADD") and src.endswith("lambda x, c: x)") and src.count("\n") == 2
  one_line = add_line + 3
  assert pattern_source(path, one_line) == '(UPat(Ops.MUL, src=(UPat.var("x"), UPat.cvar("c", 1))), lambda x, c: x)'
  assert pattern_source(path, add_line + 4).endswith("lambda x, c: c)")
  standalone = next(i + 1 for i, l in enumerate(lines) if l.startswith("STANDALONE"))
  assert pattern_source(path, standalone) == 'UPat(Ops.SINK,\n                  name="sink")'
  assert pattern_source("/nonexistent/file.py", 3) == ""
  assert pattern_source(path, 10**6) == ""

def test_pattern_source_is_taken_at_record_time(tmp_path):
  f = tmp_path / "pats.py"
  f.write_text("# é\nP = [\n  (UPat('é', 1,\n        2), fn),\n]\n", encoding="utf-8")
  rec, got = record()
  class P: location = (str(f), 3)
  x = UOp.const(5)
  rec.rewrite_begin("r", ("a.py", 1), x)
  rec.rewrite_match(P(), x, x)
  rec.rewrite_end(x)
  f.write_text("edited\n")
  (pat,) = [e for e in events(rec, got) if isinstance(e, PatternDef)]
  assert pat.source == "(UPat('é', 1,\n        2), fn)" and pat.line == 3

def test_deep_graph_interns_without_recursion():
  u = UOp.const(0)
  for i in range(30_000): u = UOp(Ops.ADD, src=(u, UOp.const(i % 7)))
  rec, got = record()
  rec.rewrite_begin("deep", ("a.py", 1), u)
  rec.rewrite_end(u)
  evs = events(rec, got)
  table = {e.id: e for e in evs if isinstance(e, UOpDef)}
  assert len(table) == 30_000 + 7
  check_image(table, u, next(e for e in evs if isinstance(e, Rewrite)).input, {})

def test_contexts_nest_and_rewrites_outside_get_a_user_context():
  rec, got = record()
  s = rec.context_begin("schedule", "realize", ("a.py", 1))
  k = rec.context_begin("kernel", "E_4", ("a.py", 2))
  rec.context_end(k)
  rec.context_end(s)
  x = UOp.const(1)
  rec.rewrite_begin("user pass", ("user.py", 9), x)
  rec.rewrite_end(x)
  evs = events(rec, got)
  begins = [e for e in evs if isinstance(e, ContextBegin)]
  assert [(b.kind, b.parent) for b in begins] == [("schedule", None), ("kernel", s), ("user", None)]
  (rw,) = [e for e in evs if isinstance(e, Rewrite)]
  assert rw.ctx == begins[2].id and begins[2].loc == ("user.py", 9) and rw.matches == []
  assert [e.id for e in evs if isinstance(e, ContextEnd)] == [k, s, begins[2].id]

def test_kernel_and_timeline_events():
  rec, got = record("profile")
  assert rec.capture_rewrites is False
  x = UOp.const(1)
  rec.rewrite_begin("ignored in profile mode", ("a.py", 1), x)
  rec.rewrite_match(None, x, x)
  rec.rewrite_end(x)
  kid = rec.kernel("E_4", "CPU", "void E_4() {}", (4, 1, 1), (1, 1, 1), 8, 48, 0, ["DEFINE_GLOBAL", "STORE"])
  rec.span("CPU", "E_4", 100, 250, "kernel", {"kernel": kid})
  rec.counter("CPU", "memory", 120, 4096)
  rec.marker("epoch 1", 300)
  evs = events(rec, got)
  assert not [e for e in evs if isinstance(e, (Rewrite, UOpDef))]
  (k,) = [e for e in evs if isinstance(e, Kernel)]
  assert (k.id, k.global_size, k.flops, k.bytes, k.uops) == (kid, (4, 1, 1), 8, 48, ["DEFINE_GLOBAL", "STORE"])
  assert [e.TYPE for e in evs] == ["run", "kernel", "span", "counter", "marker", "run_end"]

def test_background_flush_without_explicit_calls():
  rec, got = record(flush_interval=0.05)
  rec.marker("m", 1)
  deadline = time.monotonic() + 5
  while not any(d["type"] == "marker" for d in got) and time.monotonic() < deadline: time.sleep(0.01)
  assert any(d["type"] == "marker" for d in got)
  rec.close()

def test_threads_keep_their_own_rewrite_stacks():
  rec, got = record()
  def work(n: int) -> None:
    for i in range(50): fe.graph_rewrite(UOp(Ops.ADD, src=(UOp(Ops.LOAD, arg=(n, i)), UOp.const(0))), fe.PATTERNS, rec)
  ts = [threading.Thread(target=work, args=(n,)) for n in range(4)]
  for t in ts: t.start()
  for t in ts: t.join()
  evs = events(rec, got)
  table = {e.id: e for e in evs if isinstance(e, UOpDef)}
  rws = [e for e in evs if isinstance(e, Rewrite)]
  assert len(rws) == 200 and all(len(r.matches) == 1 for r in rws)
  for r in rws:  # ADD(LOAD, 0) -> LOAD of the same thread's input
    _, b, a = r.matches[0]
    assert table[a].op == "LOAD" and table[b].src[0] == a and r.output == a

def test_sink_errors_do_not_stop_recording(tmp_path, capsys):
  def bad(batch): raise RuntimeError("socket closed")
  path = str(tmp_path / "t.jsonl")
  rec = Recorder("viz", path=path, sinks=[bad])
  rec.marker("still written", 5)
  rec.close()
  assert "dropping event sink" in capsys.readouterr().err
  assert "still written" in open(path).read()

def test_install_sets_and_clears_the_engine_hook(tmp_path):
  import tinygrad.tracing as tracing
  from profiler import recorder
  assert tracing.tracer is None
  rec = recorder.install("profile", path=str(tmp_path / "i.jsonl"), announce=False)
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
  rec, got = record()
  a, b = UOp(Ops.LOAD, arg=Bad()), UOp(Ops.LOAD, arg="y" * 10_000)
  rec.rewrite_begin("r", ("a.py", 1), UOp(Ops.SINK, src=(a, b)))
  rec.rewrite_end(a)
  args = [e.arg for e in events(rec, got) if isinstance(e, UOpDef)]
  assert "<Bad>" in args and max(map(len, args)) == 200

def test_forked_child_leaves_the_parents_file_alone(tmp_path):
  import tinygrad.tracing as tracing
  from profiler import recorder
  path = str(tmp_path / "fork.jsonl")
  rec = recorder.install("profile", path=path, announce=False)
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
