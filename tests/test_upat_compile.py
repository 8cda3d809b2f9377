"""PatternMatcher compiles its rules (tinygrad/uop/upat_compile.py): each table tries, on every node, the matches
UPat.match lists, in the same order and as many times, and the first that fn rewrites wins, as the interpreter did.
Checked against UPat.match itself on random graphs: commutative sources, allow_any_len, a name used twice, dtype and
op sets, args, a pattern for every source, and the engine's own tables."""
from __future__ import annotations
import inspect, random
import pytest
from tinygrad.dtype import dtypes
from tinygrad.uop.ops import UOp, Ops, UPat, PatternMatcher, GroupOp, graph_rewrite
from tinygrad.uop.symbolic import symbolic

def _ref_rewrite_pat(pm: PatternMatcher, u: UOp, ctx=None):
  """The interpreter: every pattern naming u's op in table order, every match UPat.match lists, fn called on each."""
  for p, fn in pm.patterns:
    if p.op is not None and u.op not in p.op: continue
    for m in p.match(u, {}):
      r = fn(ctx=ctx, **m) if "ctx" in inspect.signature(fn).parameters else fn(**m)
      if r is not None and r is not u: return r, p
  return None

def _random_graph(rng: random.Random, n: int = 60) -> list[UOp]:
  x, y = UOp.variable("x", 0, 9), UOp.variable("y", -3, 5)
  fx = UOp(Ops.DEFINE_VAR, dtypes.float32, (), ("f", 0, 1))
  ints = [x, y, UOp.const(dtypes.int32, 0), UOp.const(dtypes.int32, 1), UOp.const(dtypes.int32, 3)]
  floats = [fx, UOp.const(dtypes.float32, 2.0), UOp.const(dtypes.float32, 0.0)]
  z, three = UOp.variable("z", 1, 4), UOp.const(dtypes.int32, 3)
  # a few nodes every pattern below matches (some in several ways), then random ones built on everything so far
  ints += [(x * three) + y, y + (three * x), x + x, (x * y) + (y * z), (y * x) + (z * y), three + three, x + 1,
           UOp(Ops.SINK, dtypes.void, (three, three)), UOp(Ops.SINK, dtypes.void, ()), UOp(Ops.SINK, dtypes.void, (x + 3, three + x))]
  floats += [fx * 2.0, (fx * 2.0) * 2.0]
  sinks: list[UOp] = []
  for _ in range(n):
    pool = ints if rng.random() < 0.7 else floats
    op = rng.choice([Ops.ADD, Ops.MUL, Ops.MAX, Ops.SUB, Ops.CMPLT, Ops.WHERE, Ops.NEG, Ops.CAST, Ops.SINK])
    a, b = rng.choice(pool), rng.choice(pool)
    if op is Ops.WHERE: u = (rng.choice(ints) < rng.choice(ints)).where(a, b)
    elif op is Ops.NEG: u = -a
    elif op is Ops.CAST: u = a.cast(dtypes.float32 if a.dtype == dtypes.int32 else dtypes.int32)
    elif op is Ops.CMPLT: u = a < b; ints.append(u.cast(dtypes.int32))
    elif op is Ops.SINK: sinks.append(UOp(Ops.SINK, dtypes.void, tuple(rng.choice(pool) for _ in range(rng.randint(0, 4))))); continue
    else: u = a.alu(op, b)
    pool.append(u)
  return list(dict.fromkeys(u for root in ints + floats + sinks for u in root.toposort()))

def _calls(pat: UPat, u: UOp) -> tuple[list[dict], list[dict]]:
  """(the stores UPat.match lists, the keyword arguments the compiled rule passed fn, in call order)."""
  got: list[dict] = []
  pm = PatternMatcher([(pat, lambda **kw: got.append(kw))])
  pm.rewrite(u)
  return pat.match(u, {}), got

x, y, c = UPat.var("x"), UPat.var("y"), UPat.cvar("c")
PATTERNS = {
  "commutative": x + c,
  "nested commutative": (x * c) + y,
  "name used twice": x + x,
  "name used twice, commutative and nested": (x * y) + (y * UPat.var("z")),
  "op set with dtype set": UPat((Ops.ADD, Ops.MUL, Ops.MAX), dtype=(dtypes.int32, dtypes.bool), src=[UPat.var("a"), UPat.var("b")]),
  "arg": UPat(Ops.ADD, src=(x, UPat.const(dtypes.int32, 1))),
  "float arg": UPat(Ops.MUL, src=[x, UPat.const(None, 2.0)]),
  "where": UPat.var("g").where(x, y),
  "any length": UPat(Ops.SINK, src=(UPat.var("first"),), allow_any_len=True, name="s"),
  "any length, empty prefix": UPat(Ops.SINK, src=(), allow_any_len=True, name="s"),
  "exact empty": UPat(Ops.SINK, src=(), name="s"),
  "every source plain": UPat(Ops.SINK, src=UPat(Ops.CONST), name="s"),
  "every source with sources": UPat((Ops.SINK, Ops.ADD), src=UPat(src=[UPat(), UPat(Ops.CONST)])),
  "every source binding a name (interpreted)": UPat(Ops.SINK, src=UPat.var("v")),
  "any op, named": UPat(name="anything"),
  "source of any op, dtype": UPat(src=(UPat(dtype=dtypes.float32, name="f"),), name="x"),
}

@pytest.mark.parametrize("name", list(PATTERNS))
def test_compiled_rule_calls_fn_at_every_match_in_the_interpreters_order(name):
  pat, rng = PATTERNS[name], random.Random(list(PATTERNS).index(name))
  seen = 0
  for u in _random_graph(rng):
    want, got = _calls(pat, u)
    assert got == want, (name, u.op, u.src)
    # and the keyword arguments in the order the interpreter stored them (a **kw fn sees them in that order)
    assert [list(g) for g in got] == [list(w) for w in want]
    seen += len(got)
  assert seen > 0, f"{name}: no node of the random graphs matched: the test checks nothing"

def test_first_rewrite_that_fn_accepts_wins():
  # fn declines the first order of the commutative sources: the second order's match is the one taken, as before
  a, three = UOp.variable("a", 0, 9), UOp.const(dtypes.int32, 3)
  u = UOp(Ops.ADD, dtypes.int32, (three, three))
  seen = []
  def fn(x, c):
    seen.append((x, c))
    return None if len(seen) == 1 else x * 2
  pm = PatternMatcher([(UPat.var("x") + UPat.cvar("c"), fn)])
  assert pm.rewrite(u) is three * 2 and len(seen) == 2
  # a rule whose fn returns the node itself did not rewrite it: the next rule is tried
  pm = PatternMatcher([(UPat(Ops.ADD, name="n"), lambda n: n), (UPat(Ops.ADD, src=(UPat.var("x"), UPat())), lambda x: x)])
  r = pm.rewrite_pat(a + 1)
  assert r is not None and r[0] is a and r[1] is pm.patterns[1][0]

def test_ctx_and_names_passed_as_keywords():
  got = []
  pm = PatternMatcher([(UPat(Ops.MUL, src=[UPat.var("x"), UPat.cvar("c")], name="m"), lambda ctx, m, x, c: got.append((ctx, m, x, c)))])
  a = UOp.variable("a", 0, 9)
  u = a * 4
  pm.rewrite(u, ctx="the ctx")
  assert got == [("the ctx", u, a, u.src[1])]

def _engine_tables() -> list[PatternMatcher]:
  import sys
  import tinygrad.engine.realize, tinygrad.codegen.opts, tinygrad.gradient  # noqa: F401  (the modules that hold the tables)
  return list({id(v): v for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith("tinygrad.")
               for v in vars(m).values() if isinstance(v, PatternMatcher)}.values())

def _outcome(f):
  try: return f()
  except Exception as e: return type(e)

@pytest.mark.parametrize("seed", range(3))
def test_engine_tables_pick_what_the_interpreter_picks(seed):
  # every table of the engine, on every node of random int/float graphs: the same result from the same pattern (or the
  # same error: some rules want a ctx these nodes don't have)
  tables = _engine_tables()
  assert len(tables) >= 10 and symbolic in tables
  rewrote = 0
  for u in _random_graph(random.Random(seed), 80):
    for pm in tables:
      want, got = _outcome(lambda: _ref_rewrite_pat(pm, u)), _outcome(lambda: pm.rewrite_pat(u))
      assert want == got, u  # (result, pattern): UOps and UPats compare by identity; a renderer's result is its text
      rewrote += isinstance(want, tuple)
  assert rewrote > 50

def _ref_graph_rewrite(sink: UOp, pm: PatternMatcher) -> UOp:
  memo: dict[UOp, UOp] = {}
  def rw(n: UOp) -> UOp:
    if n in memo: return memo[n]
    nn = n.replace(src=tuple(rw(s) for s in n.src)) if n.src else n
    r = _ref_rewrite_pat(pm, nn)
    memo[n] = out = nn if r is None else rw(r[0])
    return out
  return rw(sink)

@pytest.mark.parametrize("seed", range(3))
def test_graph_rewrite_same_as_with_the_interpreter(seed):
  nodes = _random_graph(random.Random(100 + seed), 50)
  for u in nodes[-40:]:
    assert graph_rewrite(u, symbolic) is _ref_graph_rewrite(u, symbolic)

def test_compiled_source_is_readable_and_rules_fall_back_for_names_under_a_repeat():
  pm = PatternMatcher([(UPat(Ops.SINK, src=UPat.var("v")), lambda v: v), (UPat.var("x") + 0, lambda x: x)])
  assert "p.match" not in pm.compiled(Ops.ADD).source and "def rules_ADD(u, ctx):" in pm.compiled(Ops.ADD).source
  assert "_interp" in pm.compiled(Ops.SINK).source  # the names bound depend on the number of sources: interpreted
  assert pm.compiled(Ops.LOAD) is None
  a = UOp.variable("a", 0, 9)
  assert pm.rewrite(UOp(Ops.SINK, dtypes.void, (a, a))) is a and pm.rewrite(UOp(Ops.SINK, dtypes.void, (a, a + 1))) is None

def test_ops_hash_like_identity_and_print_as_before():
  assert hash(Ops.ADD) != hash(Ops.MUL) and {Ops.ADD: 1}[Ops.ADD] == 1 and Ops.ADD in GroupOp.Commutative
  assert (str(Ops.ADD), repr(Ops.ADD), f"{Ops.ADD}", Ops.ADD.name) == ("Ops.ADD", "Ops.ADD", "Ops.ADD", "ADD")
  assert Ops["ADD"] is Ops.ADD and Ops(Ops.ADD.value) is Ops.ADD
