"""A script's first run and its next ones: the kernels' programs and libraries are found on disk by the next process
(codegen/program_cache.py, runtime/ops_cpu.py), libraries start compiling while the schedule's other kernels are still
generated, and a compiler error still names its kernel."""
import json, os, pathlib, subprocess, sys
import numpy as np, pytest
from tinygrad import Tensor
from tinygrad.runtime import ops_cpu
from tinygrad.renderer.cstyle import PRELUDE

ROOT = pathlib.Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not ops_cpu.compiler_works(), reason="no working C compiler")

# a matmul, a reduction after it and an elementwise kernel, checked against numpy in the child
SCRIPT = """
import json, numpy as np
from tinygrad import Tensor
from tinygrad.codegen import opts, program_cache
from tinygrad.engine import realize as R
from tinygrad.runtime import ops_cpu
builds = []
real = ops_cpu.Build.__init__
def init(self, cc, src): builds.append(src.count("void ")); real(self, cc, src)
ops_cpu.Build.__init__ = init
rng = np.random.default_rng(0)
a, b = rng.standard_normal((40, 56)).astype(np.float32), rng.standard_normal((56, 24)).astype(np.float32)
ta, tb = Tensor(a), Tensor(b)
out = ((ta @ tb).relu().sum(1) * 2 + 1).numpy()
np.testing.assert_allclose(out, np.maximum(a @ b, 0).sum(1) * 2 + 1, rtol=1e-4, atol=1e-4)
e = (ta.exp() - 1).numpy()
np.testing.assert_allclose(e, np.exp(a) - 1, rtol=1e-5, atol=1e-6)
out = {"opts": dict(opts.stats), "programs": dict(program_cache.stats), "builds": builds, "src": sorted(p.src for p in R._programs.values())}
# read after the counts: a program loaded from disk makes its uops again when they are read
out["uops"] = sorted([p.name, [f"{u.op.name} {u.dtype.name} {u.arg}" for u in p.uops], len(p.line_uops)] for p in R._programs.values())
print(json.dumps(out))
"""

def run(cache: pathlib.Path, **env) -> dict:
  e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG", "PROGRAM_CACHE")}
  res = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=300,
                       env={**e, "TINYVIZ_CACHE": str(cache), "DEV": "CPU", **env})
  assert res.returncode == 0, res.stderr[-3000:]
  return json.loads(res.stdout.splitlines()[-1])

def test_a_second_process_makes_no_program_and_builds_no_library(tmp_path):
  first = run(tmp_path)
  libs = {p: p.stat().st_mtime_ns for p in (tmp_path / "cpu").glob("*.so")}
  second = run(tmp_path)
  assert first["opts"]["searched"] >= 1 and first["programs"]["stored"] >= 3 and first["programs"]["hits"] == 0
  # no plan searched or even built, every program from disk, the same C source, and the same libraries (not rebuilt)
  assert second["opts"] == {"searched": 0, "remembered": 0} and second["programs"]["hits"] == first["programs"]["stored"]
  assert second["src"] == first["src"]
  # what code inspecting a kernel sees: its uops, one list per line of its source, the same as the process that made it
  assert second["uops"] == first["uops"] and all(uops and lines for _, uops, lines in first["uops"])
  assert {p: p.stat().st_mtime_ns for p in (tmp_path / "cpu").glob("*.so")} == libs

def test_program_cache_off_plans_again(tmp_path):
  run(tmp_path)
  again = run(tmp_path, PROGRAM_CACHE="0")
  assert again["programs"]["hits"] == 0 and again["opts"]["remembered"] >= 1  # the plan cache still answers

def test_a_changed_engine_makes_its_programs_again(tmp_path, monkeypatch):
  """The key holds a hash of the engine's source: a program made by other code is not reused."""
  from tinygrad.codegen import program_cache
  from tinygrad.uop.ops import UOp, Ops
  ast = UOp(Ops.SINK, src=())
  k1 = program_cache.program_key(ast, "E_1", (8,))
  monkeypatch.setattr(program_cache, "engine_hash", lambda: "other")
  assert program_cache.program_key(ast, "E_1", (8,)) != k1

def test_a_plan_chosen_by_other_code_is_searched_again(tmp_path, monkeypatch):
  """The plan cache's key holds the engine's hash: a choice remembered by other code (another cost model, other plans
  under the same names) is not reused; the kernel's plans are searched and today's pick is made. The same code finds
  its own choice."""
  from tinygrad.codegen import opts, plan_cache
  from tinygrad.codegen.lowerer import lower_kernel
  from tinygrad.engine.schedule import create_schedule, kernel_params
  a, b = Tensor(np.ones((64, 64), np.float32)).realize(), Tensor(np.ones((64, 64), np.float32)).realize()
  items, _ = create_schedule([(a @ b).uop])
  sink, granges = lower_kernel(kernel_params([it for it in items if it.kind == "kernel"][-1])[0])
  def search() -> tuple[dict, str, list]:
    before, tried = dict(opts.stats), []
    opts.apply_opts(sink, granges, vector=8, tried=tried)
    return {k: opts.stats[k] - before[k] for k in before}, next(t["name"] for t in tried if t["chosen"]), tried
  monkeypatch.setenv("TINYVIZ_CACHE", str(tmp_path / "fresh"))
  counts, pick, tried = search()
  assert counts == {"searched": 1, "remembered": 0} and len(tried) >= 2
  assert search()[:2] == ({"searched": 0, "remembered": 1}, pick)  # the same code: its own choice
  loser = next(t["name"] for t in tried if not t["chosen"] and t["cost"] is not None)
  monkeypatch.setenv("TINYVIZ_CACHE", str(tmp_path / "older"))
  real_hash = plan_cache.engine_hash()
  monkeypatch.setattr(plan_cache, "engine_hash", lambda: "older code")
  plan_cache.remember(plan_cache.plan_key(opts.merge_reduce_loops(sink), 8, opts.MAX_UPCAST), loser)  # older code's choice
  monkeypatch.setattr(plan_cache, "engine_hash", lambda: real_hash)
  assert search()[:2] == ({"searched": 1, "remembered": 0}, pick)

def test_libraries_start_while_the_schedule_is_generated(tmp_path):
  """With a tiny EARLY_CHARS every new kernel's library starts as soon as it is rendered (one kernel each), and every
  kernel still runs right; the next process finds those same libraries on disk."""
  code = "import tinygrad.runtime.ops_cpu as C; C.EARLY_CHARS = 1\n" + SCRIPT
  def go():
    e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG")}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**e, "TINYVIZ_CACHE": str(tmp_path), "DEV": "CPU", "PROGRAM_CACHE": "0"})
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.splitlines()[-1])
  first = go()
  assert len(first["builds"]) >= 3 and set(first["builds"]) == {1}
  libs = set((tmp_path / "cpu").glob("*.so"))
  go()
  assert set((tmp_path / "cpu").glob("*.so")) == libs

def test_a_compile_error_names_its_kernel(tmp_path, monkeypatch):
  """A library holds several kernels: the error names the one that failed and shows its source, not the others'."""
  monkeypatch.setattr(ops_cpu, "CACHE_DIR", tmp_path)
  good = "void E_4(float* restrict data0) {\n  data0[0] = 1.0f;\n}"
  bad = "void r_8_3(float* restrict data0) {\n  data0[0] = undefined_name;\n}"
  with pytest.raises(ops_cpu.CompileError, match=r"failed to compile kernel r_8_3:") as e:
    ops_cpu.compile_many([PRELUDE + good + "\n\n" + bad])
  msg = str(e.value)
  assert "undefined_name" in msg and "E_4" not in msg.split("--- source ---")[1]
  assert not list(tmp_path.glob("*.tmp"))  # the failed build left nothing behind

def test_early_library_error_reaches_the_user(tmp_path, monkeypatch):
  """A library started early (compile_soon) that fails raises at compile(), naming the kernel."""
  from tinygrad.codegen.linearize import Program
  monkeypatch.setattr(ops_cpu, "CACHE_DIR", tmp_path)
  monkeypatch.setattr(ops_cpu, "EARLY_CHARS", 1)
  dev = ops_cpu.CPUDevice("CPU")
  p = Program("r_9_9", [], {}, [], (1,), (), 0, 0, src="void r_9_9(float* restrict data0) {\n  data0[0] = nope;\n}")
  dev.compile_soon(p)
  with pytest.raises(ops_cpu.CompileError, match="failed to compile kernel r_9_9:"): dev.compile([p])
  assert not list(tmp_path.glob("*.tmp"))

def test_rewrite_memo_reuses_untraced_results_and_traced_rewrites_still_match():
  """Inside rewrite_memo an untraced rewrite with the same table skips the nodes an earlier one rewrote (fewer pattern
  calls, the same result); a traced rewrite in the block still runs (and records) every match."""
  from tinygrad import tracing
  from tinygrad.uop.ops import UOp, UPat, PatternMatcher, graph_rewrite, rewrite_memo
  calls = []
  def fold(x: UOp, c: UOp):
    calls.append(x)
    return x if c.arg == 0 else None
  pm = PatternMatcher([(UPat.var("x") + UPat.cvar("c"), fold)])
  a = UOp.variable("a", 0, 9)
  g = (a + 0) * 3 + (a + 0)
  plain = graph_rewrite(g, pm)
  n_plain = len(calls)
  with rewrite_memo():
    assert graph_rewrite(g, pm) is plain
    calls.clear()
    assert graph_rewrite(g, pm) is plain and calls == []  # every node's fixed point remembered
    class Rec:
      capture_rewrites = True
      def __init__(self): self.matches = []
      def rewrite_begin(self, *a): pass
      def rewrite_match(self, pat, before, after, ns): self.matches.append(before)
      def rewrite_end(self, *a): pass
    rec = Rec()
    tracing.tracer = rec  # type: ignore[assignment]
    try: assert graph_rewrite(g, pm) is plain
    finally: tracing.tracer = None
    assert len(calls) == n_plain and rec.matches  # traced: matched again, and recorded

def test_toposort_inside_rewrite_memo_is_the_same_and_a_fresh_list():
  from tinygrad.uop.ops import UOp, rewrite_memo
  a = UOp.variable("a", 0, 9)
  g = (a + 1) * (a + 2) + a
  plain = g.toposort()
  with rewrite_memo():
    first = g.toposort()
    first.pop()  # a caller's list is its own: the remembered walk is not changed by it
    assert g.toposort() == plain and first == plain[:-1]

def test_codegen_pauses_the_garbage_collector_and_restores_it(monkeypatch):
  import gc
  from tinygrad.engine import realize as R
  seen: list[bool] = []
  real = R.apply_opts
  monkeypatch.setattr(R, "apply_opts", lambda *a, **k: (seen.append(gc.isenabled()), real(*a, **k))[1])
  x = np.arange(37 * 53, dtype=np.float32).reshape(37, 53)
  for enabled in (True, False):
    (gc.enable if enabled else gc.disable)()
    try:
      got = (Tensor(x) * (3.25 if enabled else 4.75)).sum(1).numpy()  # a kernel nobody made before: generated here
      assert gc.isenabled() is enabled  # as the user left it
    finally: gc.enable()
    np.testing.assert_allclose(got, (x * (3.25 if enabled else 4.75)).sum(1), rtol=1e-5)
  assert seen == [False, False]  # off while each kernel was generated

def run_grouped(cache: pathlib.Path, early: int, min_lib: int) -> dict:
  """SCRIPT with the compilers' grouping set (EARLY_CHARS, MIN_LIB_CHARS) and no program cache (every kernel made)."""
  code = f"import tinygrad.runtime.ops_cpu as C; C.EARLY_CHARS = {early}; C.MIN_LIB_CHARS = {min_lib}\n" + SCRIPT
  e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG")}
  res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                       env={**e, "TINYVIZ_CACHE": str(cache), "DEV": "CPU", "PROGRAM_CACHE": "0"})
  assert res.returncode == 0, res.stderr[-3000:]
  return json.loads(res.stdout.splitlines()[-1])

def test_a_second_process_finds_kernels_grouped_otherwise(tmp_path):
  """Which kernels share a library depends on how the compilers kept up with the codegen: a later process whose
  kernels come in other groups (here: every kernel alone, then all of them together) still finds each kernel's library
  on disk and builds none."""
  first = run_grouped(tmp_path, 1, 1)
  assert len(first["builds"]) >= 3 and set(first["builds"]) == {1}
  libs = {p: p.stat().st_mtime_ns for p in (tmp_path / "cpu").glob("*.so")}
  second = run_grouped(tmp_path, 10 ** 9, 10 ** 9)
  assert second["src"] == first["src"]
  assert {p: p.stat().st_mtime_ns for p in (tmp_path / "cpu").glob("*.so")} == libs

def test_an_index_whose_libraries_are_gone_builds_them_again(tmp_path, monkeypatch):
  """The kernel index names libraries; where one was deleted (or the entry is garbage) the kernel is built again and
  runs right (SCRIPT checks its results against numpy)."""
  run_grouped(tmp_path, 1, 1)
  for p in (tmp_path / "cpu").glob("*.so"): p.unlink()
  entries = sorted((tmp_path / "cpu" / "kernels").iterdir())
  entries[0].write_text("../../elsewhere.so")
  again = run_grouped(tmp_path, 10 ** 9, 10 ** 9)
  assert sum(again["builds"]) >= 3 and list((tmp_path / "cpu").glob("*.so"))
  # every entry naming a library that holds none of these kernels: each kernel is built again
  monkeypatch.setattr(ops_cpu, "CACHE_DIR", tmp_path / "cpu")
  other = ops_cpu.compile_c("void unrelated(float* restrict data0) { data0[0] = 1.0f; }")
  for e in (tmp_path / "cpu" / "kernels").iterdir(): e.write_text(other.name)
  run_grouped(tmp_path, 10 ** 9, 10 ** 9)

def test_a_cached_run_starts_no_compiler_and_a_broken_answer_is_asked_again(tmp_path, monkeypatch):
  """A second process finds its kernels' libraries and the CPU's vector width on disk: it starts no compiler process
  at all (here `cc` on PATH is a script that logs each call, then runs the real compiler). A vector-width answer on
  disk that is garbage is asked of the compiler again, and the kernels still run right."""
  real = ops_cpu.find_compiler()
  import shutil
  real_path = shutil.which(real)
  bindir, log = tmp_path / "bin", tmp_path / "calls.log"
  bindir.mkdir()
  (bindir / "cc").write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nexec {real_path} \"$@\"\n")
  (bindir / "cc").chmod(0o755)
  for k in ("CC", "CPU_VECTOR_WIDTH"): monkeypatch.delenv(k, raising=False)
  env = {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}
  first = run(tmp_path / "cache", **env)
  calls = log.read_text().splitlines()
  assert any("-dM" in c for c in calls) and any(" -c " in f" {c} " for c in calls), calls
  log.unlink()
  second = run(tmp_path / "cache", **env)
  assert not log.exists(), log.read_text()
  assert second["src"] == first["src"]
  answers = list((tmp_path / "cache" / "cpu" / "vector_floats").iterdir())
  assert len(answers) == 1 and int(answers[0].read_text()) in (4, 8, 16)
  answers[0].write_text("garbage")
  third = run(tmp_path / "cache", **env)
  assert [c for c in log.read_text().splitlines() if "-dM" in c] and third["src"] == first["src"]
  assert int(answers[0].read_text()) in (4, 8, 16)
