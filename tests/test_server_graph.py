"""The graph at rewrite step k (viz/server/graph.py) against a direct substitution done with the engine's own
UOps on a real engine run, and the timeline's lanes and span chunks (viz/server/timeline.py)."""
from __future__ import annotations
import json, random, sys
import numpy as np
import pytest
from profiler.recorder import Recorder, arg_repr
from viz.server.graph import UOpTable, RewriteSteps, rebuild, reachable
from viz.server.run import Run
from viz.server.timeline import Timeline, assign_lanes, decode_chunk

tracing = pytest.importorskip("tinygrad.tracing")
from tinygrad import Tensor, nn  # noqa: E402
from tinygrad.uop.ops import UOp  # noqa: E402

def record(fn) -> tuple[Recorder, list[dict]]:
  got: list[dict] = []
  rec = Recorder("viz", sinks=[got.extend])
  assert tracing.tracer is None
  tracing.tracer = rec
  try: fn()
  finally:
    tracing.tracer = None
    rec.close()
  return rec, got

def workload() -> None:
  # shapes and constants no other test uses: the engine caches programs per process, and these must be compiled here
  x = Tensor(np.linspace(-1, 1, 91, dtype=np.float32).reshape(7, 13))
  lin = nn.Linear(13, 5)
  out = (lin(x).relu() * 2.375 + 1.125).sum(axis=1)
  out.numpy()
  ((x @ x.T).exp() / 3.625).max(axis=0).numpy()

@pytest.fixture(scope="module")
def engine_run():
  rec, objs = record(workload)
  run = Run(1, "engine", "tinyviz", None, live=False)
  run.add(objs)
  uops = {rec._uop_ids[id(u)]: u for u in rec._keep if isinstance(u, UOp) and id(u) in rec._uop_ids}
  return rec, run, uops

def direct(root: UOp, subst: dict[UOp, UOp]) -> UOp:
  """The graph after substituting before -> after, done the plain way: recursion on the engine's UOps, whose
  constructor hash-conses (so a rebuilt node the engine also built is that very object). A node met inside its
  own replacement stays itself there, with its sources rebuilt."""
  memo: dict[UOp, UOp] = {}
  path: set[UOp] = set()
  def rebuilt(u: UOp) -> UOp:
    src = tuple(get(s) for s in u.src)
    return u if all(a is b for a, b in zip(src, u.src)) else UOp(u.op, u.dtype, src, u.arg)
  def get(u: UOp) -> UOp:
    if u in memo: return memo[u]
    if u in path or subst.get(u) in path: return rebuilt(u)
    path.add(u)
    if (t := subst.get(u)) is not None: r = get(t)
    else:
      v = rebuilt(u)
      t = subst.get(v) if v is not u else None
      r = get(t) if t is not None and t not in path else v
    path.discard(u)
    memo[u] = r
    return r
  old = sys.getrecursionlimit()
  sys.setrecursionlimit(max(old, 20000))
  try: return get(root)
  finally: sys.setrecursionlimit(old)

def same_graph(table: UOpTable, uid: int, u: UOp, ids: dict[int, int]) -> None:
  """uid's graph is u's graph, node for node; a node the engine interned has the engine's id."""
  seen: dict[int, int] = {}
  stack = [(uid, u)]
  while stack:
    i, v = stack.pop()
    if id(v) in seen:
      assert seen[id(v)] == i
      continue
    seen[id(v)] = i
    if id(v) in ids: assert i == ids[id(v)], f"rebuilt node {i} is the engine's uop {ids[id(v)]}"
    else: assert i < 0, f"node {i} is not the engine's, so it must have a negative id"
    op, dtype, arg, src = table.rows[i]
    assert (op, dtype, arg, len(src)) == (v.op.name, str(v.dtype), arg_repr(v.arg), len(v.src))
    stack.extend(zip(src, v.src))

def test_step_graphs_match_direct_substitution(engine_run):
  rec, run, uops = engine_run
  assert run.rewrites and sum(len(r["matches"]) for r in run.rewrites.values()) > 100
  assert any(c.kind == "kernel" and c.rewrites for c in run.contexts.values())  # codegen rewrites, not only scheduling
  checked = 0
  for rid, r in run.rewrites.items():
    n = len(r["matches"])
    steps = run.steps(rid)
    assert steps.graph(n).root == r["output"], f"rewrite {rid} ({r['name']}): all matches give its output"
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n} & set(range(n + 1))):
      subst: dict[UOp, UOp] = {}
      for _, b, a in r["matches"][:k]: subst.setdefault(uops[b], uops[a])
      want = direct(uops[r["input"]], subst)
      g = steps.graph(k)
      same_graph(run.uops, g.root, want, rec._uop_ids)
      assert len(g.nodes) == len(want.toposort())
      checked += 1
  assert checked > 50

def test_steps_in_any_order_from_checkpoints(engine_run):
  """Steps computed from kept checkpoints (jumping back and forth, then stepping forward) equal fresh rebuilds."""
  _, run, _ = engine_run
  for rid in sorted(run.rewrites, key=lambda r: -len(run.rewrites[r]["matches"]))[:3]:
    r = run.rewrites[rid]
    n = len(r["matches"])
    order = list(range(n + 1))
    random.Random(rid).shuffle(order)
    shared = RewriteSteps(run.uops, r["input"], r["matches"])
    for k in order + list(range(n + 1)):
      g, fresh = shared.graph(k), RewriteSteps(run.uops, r["input"], r["matches"]).graph(k)
      assert (g.root, g.nodes) == (fresh.root, fresh.nodes), (rid, k)

def test_step_json_diff_and_match(engine_run):
  _, run, _ = engine_run
  rid = max(run.rewrites, key=lambda r: len(run.rewrites[r]["matches"]))
  n = len(run.rewrites[rid]["matches"])
  prev = json.loads(run.step_json(rid, 0))
  assert prev["k"] == 0 and prev["match"] is None and prev["removed"] == prev["added"] == []
  for k in range(1, n + 1):
    cur = json.loads(run.step_json(rid, k))
    a, b = {u["id"] for u in prev["nodes"]}, {u["id"] for u in cur["nodes"]}
    assert cur["removed"] == sorted(a - b) and cur["added"] == sorted(b - a)
    ids = {u["id"] for u in cur["nodes"]}
    assert cur["root"] in ids and all(s in ids for u in cur["nodes"] for s in u["src"])  # closed under sources
    pid, before, after = run.rewrites[rid]["matches"][k - 1]
    m = cur["match"]
    assert (m["before"], m["after"]) == (before, after)
    assert m["pattern"]["id"] == pid and m["pattern"]["line"] > 0 and "UPat" in m["pattern"]["source"]
    prev = cur

def table_of(rows: dict[int, tuple]) -> UOpTable:
  t = UOpTable()
  for i, (op, src) in rows.items(): t.add(i, (op, "dtypes.int", "None", tuple(src)))
  return t

def test_rebuilt_parent_gets_engine_id_and_is_rewritten_again():
  # 1: x, 2: c0, 3: ADD(x, c0), 4: MUL(3, x), 5: MUL(x, x) (what the engine built after 3 -> x), 6: SHL(x)
  t = table_of({1: ("X", []), 2: ("C0", []), 3: ("ADD", [1, 2]), 4: ("MUL", [3, 1]), 5: ("MUL", [1, 1]), 6: ("SHL", [1]),
                7: ("SINK", [4])})
  assert rebuild(t, 7, {3: 1}) != 7  # SINK(MUL(x, x)): MUL(x, x) is the engine's uop 5
  assert t.rows[rebuild(t, 7, {3: 1})][3] == (5,)
  root = rebuild(t, 7, {3: 1, 5: 6})  # uop 5, met as the rebuilt parent, is a later match's `before`
  assert t.rows[root] == ("SINK", "dtypes.int", "None", (6,)) and root < 0
  assert rebuild(t, 7, {3: 1, 5: 6}) == root  # negative ids are stable
  assert sorted(reachable(t, root)) == sorted([root, 6, 1])

def test_node_inside_its_own_replacement_stays():
  # the engine's `x -> CONTIGUOUS(x)`: 2 is replaced by 3 = CONTIGUOUS(2); 2's source 1 is replaced by 4
  t = table_of({1: ("A", []), 2: ("ADD", [1, 1]), 3: ("CONTIGUOUS", [2]), 4: ("B", []), 5: ("SINK", [2])})
  root = rebuild(t, 5, {2: 3})
  assert t.rows[root][3] == (3,) and t.rows[3][3] == (2,)
  root = rebuild(t, 5, {1: 4, 2: 3})  # inside, 2 is rebuilt on B, and the CONTIGUOUS around it too
  (c,) = t.rows[root][3]
  assert t.rows[c][0] == "CONTIGUOUS" and t.rows[t.rows[c][3][0]] == ("ADD", "dtypes.int", "None", (4, 4))

def test_five_thousand_matches():
  # a chain of 5,000 (x_i + 0) terms summed: every (x_i + 0) -> x_i, so each parent is rebuilt
  rows: dict[int, tuple] = {1: ("C0", [])}
  acc, matches, nid = None, [], 2
  for i in range(5000):
    rows[nid] = ("X", []); rows[nid + 1] = ("ADD0", [nid, 1]); matches.append((None, nid + 1, nid))
    term = nid + 1
    nid += 2
    if acc is None: acc = term
    else: rows[nid] = ("ADD", [acc, term]); acc = nid; nid += 1
  t = table_of(rows)
  steps = RewriteSteps(t, acc, matches)
  g = steps.graph(5000)
  assert len(g.nodes) == 5000 + 4999  # the X's and the chain of ADDs
  mid = steps.graph(2500)
  assert len(mid.nodes) == len(g.nodes) + 2500 + 1  # half the ADD0s (and their shared C0) are still there
  assert g.root < 0 and steps.graph(5000).root == g.root
  for k in random.Random(0).sample(range(5001), 12):  # from checkpoints, as a fresh rebuild gives it
    fresh = RewriteSteps(t, acc, matches).graph(k)
    assert (steps.graph(k).root, steps.graph(k).nodes) == (fresh.root, fresh.nodes)

# *** timeline ***

def test_lanes_flame_and_overlaps():
  # a flame: parent, two children, a grandchild; then three overlapping kernels
  starts, ends = [0, 10, 12, 60, 200, 205, 210, 300], [100, 50, 20, 70, 220, 230, 215, 310]
  assert assign_lanes(starts, ends) == [0, 1, 2, 1, 0, 1, 2, 0]

def test_chunks_never_collide_and_decode():
  tl = Timeline()
  rng = np.random.default_rng(0)
  spans = [(int(s), int(s + d)) for s, d in zip(rng.integers(0, 10**6, 3000), rng.integers(0, 10**4, 3000))]
  for i, (s, e) in enumerate(spans): tl.span("CUDA:0", f"k{i % 7}", s, e, "kernel", {"kernel": i % 5})
  tl.span("CUDA:0", "marker-like", 5, 5, "other", {})
  t = tl.tracks[0]
  whole = decode_chunk(tl.chunk(t))
  assert whole["n"] == len(spans) + 1 and list(whole["index"]) == list(range(whole["n"]))
  assert (np.diff(whole["start"]) >= 0).all()
  lanes: dict[int, list[tuple[float, float]]] = {}
  for s, d, l in zip(whole["start"], whole["dur"], whole["depth"]): lanes.setdefault(int(l), []).append((s, s + d))
  for spans_in_lane in lanes.values():
    for (s0, e0), (s1, _) in zip(spans_in_lane, spans_in_lane[1:]): assert e0 <= s1
  assert set(whole["cat"]) == {0, 6} and set(whole["kernel"]) <= {-1, 0, 1, 2, 3, 4}
  names = [whole["names"][i] for i in whole["name"]]
  # a window: exactly the spans overlapping it, with the whole track's lanes and indices
  lo, hi = 400_000.0, 450_000.0
  win = decode_chunk(tl.chunk(t, lo, hi))
  want = {i for i, (s, d) in enumerate(zip(whole["start"], whole["dur"])) if s <= hi and s + d >= lo}
  assert set(win["index"].tolist()) == want
  for j, i in enumerate(win["index"]):
    assert win["depth"][j] == whole["depth"][i] and win["names"][win["name"][j]] == names[i]
  detail = tl.span_json(t, int(win["index"][0]))
  assert detail["start_ns"] - tl.start_ns == win["start"][0] and detail["cat"] == "kernel" and "kernel" in detail["args"]

def test_counters_and_markers_relative_to_start():
  tl = Timeline()
  tl.origin = 1000
  tl.counter("CPU", "memory", 3000, 5.0); tl.counter("CPU", "memory", 2000, 4.0); tl.marker("epoch 1", 2500)
  assert tl.counter_json(0) == {"name": "memory", "track": "CPU", "ts": [1000, 2000], "values": [4.0, 5.0]}
  j = tl.tracks_json()
  assert j["start_ns"] == 1000 and j["end_ns"] == 3000 and j["markers"] == [{"name": "epoch 1", "ts_ns": 2500}]
