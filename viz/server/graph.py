"""The graph of a rewrite after its first k matches, rebuilt from the interned UOp table (pure: no I/O).

The graph after k matches is the rewrite's input graph with `before -> after` substituted for matches 0..k-1
(docs/trace-format.md). A rebuild walks the input graph sources-first: a node that is a `before` becomes its
`after` (itself rebuilt); a node whose sources changed becomes the node with those sources, looked up in a
structural index (op, dtype, arg, src ids) -> id, so a parent the engine also built gets the engine's id and
can in turn be a later match's `before`. A structure the engine never interned gets a negative id, stable for
the life of the table. Nothing is replayed: a step costs at most one pass over the graph whatever k is, and
stepping on from a kept step only what the matches in between touched (RewriteSteps).
"""
from __future__ import annotations
import json
from dataclasses import dataclass
from typing import Any

UOpRow = tuple[str, str, str, tuple[int, ...]]  # op, dtype, arg, src ids

class UOpTable:
  """The interned UOps of one run, plus the nodes substitutions built that the engine never interned (negative ids)."""
  def __init__(self) -> None:
    self.rows: dict[int, UOpRow] = {}
    self._struct: dict[UOpRow, int] | None = None  # built on the first rebuild, then kept up to date
    self._next_neg = -1
    self._users: dict[int, list[int]] | None = None
    self.fragments: dict[int, str] = {}  # uop id -> its JSON object, written once

  @property
  def indexed(self) -> bool: return self._struct is not None or self._users is not None

  def add(self, uid: int, row: UOpRow) -> None:
    self.rows[uid] = row
    if self._struct is not None: self._struct.setdefault(row, uid)
    if self._users is not None:
      for s in row[3]: self._add_user(s, uid)

  def struct(self) -> dict[UOpRow, int]:
    if self._struct is None:
      self._struct = {}
      for uid, row in self.rows.items(): self._struct.setdefault(row, uid)
    return self._struct

  def intern(self, row: UOpRow) -> int:
    """The id of the node with this structure: the engine's where it built one, else a new negative id."""
    st = self.struct()
    uid = st.get(row)
    if uid is None:
      uid = st[row] = self._next_neg
      self._next_neg -= 1
      self.rows[uid] = row
      if self._users is not None:
        for s in row[3]: self._add_user(s, uid)
    return uid

  USERS_MAX = 100
  def _add_user(self, s: int, uid: int) -> None:
    lst = self._users.setdefault(s, [])  # type: ignore[union-attr]
    if len(lst) < self.USERS_MAX and (not lst or lst[-1] != uid): lst.append(uid)

  def users(self, uid: int) -> list[int]:
    if self._users is None:
      self._users = {}
      for u, row in sorted(self.rows.items(), key=lambda x: (x[0] < 0, abs(x[0]))):
        for s in row[3]: self._add_user(s, u)
    return self._users.get(uid, [])

INF = 1 << 62

class _Rebuild:
  """Rebuilds under the substitutions of step k, reusing `memo` (values known valid at k) and recording for each
  value the step it stays valid until: the first later match whose `before` the computation met (as a node, a
  source or a structural lookup). A later step reuses every value still valid and recomputes the rest: stepping
  k -> k+1 redoes only what match k touched."""
  def __init__(self, steps: "RewriteSteps", k: int, memo: dict[int, int], until: dict[int, int]):
    self.table, self.k = steps.table, k
    self.subst = steps.subst(k)
    self.fb, self.first = steps.first_before, steps.first
    self.memo, self.until = memo, until
    self.raw: dict[int, int] = {}   # nodes met inside their own replacement: rebuilt without their substitution
    self.busy: set[int] = set()     # nodes whose rebuild is under way

  def later(self, u: int) -> int:
    """The first match after step k whose `before` is u (INF if none): u's value may change from then on."""
    i = self.fb.get(u, INF)
    return i if i >= self.k else INF

  def clean(self, u: int) -> bool:
    """An input-graph node with no `before` of the first k matches below it: it rebuilds to itself."""
    return self.first.get(u, -1) >= self.k

  def node(self, u: int) -> None:
    """Rebuilds u, an input-graph node whose sources were rebuilt before it (sources-first order): the fast path."""
    memo, subst, until, first = self.memo, self.subst, self.until, self.first
    if (t := subst.get(u)) is not None:  # a `before`: it becomes its `after`, itself rebuilt
      if t not in memo: self.resolve(t, hold=u)
      memo[u], until[u] = memo[t], until[t]
      return
    op, dtype, arg, src = self.table.rows[u]
    valid = self.later(u)
    new = []
    for s in src:
      if s in memo:
        new.append(memo[s])
        if until[s] < valid: valid = until[s]
      else:  # clean
        new.append(s)
        if first[s] < valid: valid = first[s]
    new_src = tuple(new)
    if new_src == src:
      memo[u], until[u] = u, valid
      return
    v = self.table.intern((op, dtype, arg, new_src))
    t = subst.get(v)
    if t is None:
      memo[u], until[u] = v, min(valid, self.later(v))
      return
    if t not in memo: self.resolve(t, hold=u)  # the rebuilt node is itself an earlier match's `before`
    memo[u], until[u] = memo[t], min(valid, until[t])

  def resolve(self, root: int, hold: int | None = None) -> int:
    """Rebuilds any node, depth first with an explicit stack (graphs can be deeper than Python's recursion)."""
    rows, memo, raw, subst, busy, until, k = self.table.rows, self.memo, self.raw, self.subst, self.busy, self.until, self.k
    first = self.first
    if hold is not None: busy.add(hold)
    alias: dict[int, int] = {}
    # frames [node, state]: 0 visit, 1 sources done, 2 waiting on alias, 3 visit raw, 4 raw sources done
    stack: list[list[int]] = [[root, 0]]
    def push_sources(u: int) -> None:
      for s in reversed(rows[u][3]):
        if s in memo or (s not in subst and self.clean(s)): continue
        stack.append([s, 3] if s in busy or subst.get(s) in busy else [s, 0])
    while stack:
      frame = stack[-1]
      u, state = frame
      if state == 0:
        if u in memo: stack.pop(); continue
        if u in busy or subst.get(u) in busy: frame[1] = 3; continue
        t = subst.get(u)
        if t is None and self.clean(u): memo[u], until[u] = u, first[u]; stack.pop(); continue
        busy.add(u)
        if t is not None:
          if t in memo: memo[u], until[u] = memo[t], until[t]; busy.discard(u); stack.pop()
          else: alias[u], frame[1] = t, 2; stack.append([t, 0])
          continue
        frame[1] = 1
        push_sources(u)
      elif state == 1 or state == 4:
        op, dtype, arg, src = rows[u]
        valid, new = self.later(u), []
        for s in src:
          if s in memo:
            new.append(memo[s])
            if until[s] < valid: valid = until[s]
          elif s in raw: new.append(raw[s]); valid = k  # depends on where it was met: valid at this step only
          else:
            new.append(s)
            if first[s] < valid: valid = first[s]
        new_src = tuple(new)
        v = u if new_src == src else self.table.intern((op, dtype, arg, new_src))
        stack.pop()
        if state == 4: raw[u] = v; continue
        busy.discard(u)
        t = subst.get(v) if v != u else None
        if t is None: memo[u], until[u] = v, min(valid, self.later(v)); continue
        if t in busy: memo[u], until[u] = v, k; continue
        if t in memo: memo[u], until[u] = memo[t], min(valid, until[t]); continue
        busy.add(u)
        alias[u] = t
        until[u] = valid  # the part of u's validity its sources give; the alias's is added when it is done
        stack.append([u, 2]); stack.append([t, 0])
      elif state == 2:
        t = alias.pop(u)
        memo[u], until[u] = memo[t], min(until.get(u, INF), until[t])
        busy.discard(u); stack.pop()
      else:  # state 3
        if u in raw or u in memo: stack.pop(); continue
        frame[1] = 4
        push_sources(u)
    if hold is not None: busy.discard(hold)
    return memo[root]

def toposort(table: UOpTable, root: int) -> list[int]:
  """Ids of root's graph, sources before users."""
  rows, seen, out = table.rows, set(), []
  stack: list[tuple[int, bool]] = [(root, False)]
  while stack:
    u, done = stack.pop()
    if done: out.append(u); continue
    if u in seen: continue
    seen.add(u)
    stack.append((u, True))
    stack.extend([(s, False) for s in reversed(rows[u][3]) if s not in seen])
  return out

def reachable(table: UOpTable, root: int) -> list[int]:
  """Ids of root's graph, sorted."""
  rows, seen, stack = table.rows, {root}, [root]
  while stack:
    for s in rows[stack.pop()][3]:
      if s not in seen: seen.add(s); stack.append(s)
  return sorted(seen)

def _members(table: UOpTable, root: int, base: "StepGraph | None") -> tuple[set[int], dict[int, int]]:
  """The nodes of root's graph and, per node, how many references it has inside it (users, +1 for the root),
  derived from a base graph's: add what is new, then drop the old root and whatever only it kept alive."""
  rows = table.rows
  nodes, refs = (set(base.nodes), dict(base.refs)) if base is not None else (set(), {})
  refs[root] = refs.get(root, 0) + 1
  if root not in nodes:
    nodes.add(root)
    stack = [root]
    while stack:
      for s in rows[stack.pop()][3]:
        refs[s] = refs.get(s, 0) + 1
        if s not in nodes: nodes.add(s); stack.append(s)
  if base is not None:
    stack = [base.root]
    while stack:
      u = stack.pop()
      refs[u] -= 1
      if refs[u] == 0:
        del refs[u]
        nodes.discard(u)
        stack.extend(rows[u][3])
  return nodes, refs

@dataclass
class StepGraph:
  k: int
  root: int
  nodes: set[int]
  refs: dict[int, int]
  memo: dict[int, int]
  until: dict[int, int]

class RewriteSteps:
  """Graphs of one rewrite at any step k. Precomputed once per rewrite: the input graph's sources-first order;
  per node, the first match whose `before` it is, and for input nodes the first such match at or below them
  (a rebuild skips every subgraph no match has touched yet). The last CACHE graphs are kept with their rebuild
  state as checkpoints: step k starts from the nearest one at or before k and recomputes only the values that
  a match since then touched, so stepping forward costs what the match changed, and a jump one full rebuild."""
  CACHE = 8
  def __init__(self, table: UOpTable, input: int, matches: list[Any]):
    self.table, self.input, self.matches = table, input, matches
    self._cache: dict[int, StepGraph] = {}
    self._topo = toposort(table, input)
    self.first_before: dict[int, int] = {}
    for i, (_, b, _) in enumerate(matches): self.first_before.setdefault(b, i)
    never = len(matches) + 1
    fb, rows = self.first_before, table.rows
    first = self.first = {u: fb.get(u, never) for u in self._topo}
    for u in self._topo:
      src = rows[u][3]
      if src: first[u] = min(first[u], *[first[s] for s in src])

  def subst(self, k: int) -> dict[int, int]:
    m: dict[int, int] = {}
    for _, b, a in self.matches[:k]: m.setdefault(b, a)  # a node is replaced by its first match
    return m

  def graph(self, k: int) -> StepGraph:
    if (g := self._cache.get(k)) is not None:
      self._cache[k] = self._cache.pop(k)  # most recently used last
      return g
    base = max((c for c in self._cache if c <= k), default=None)
    old = self._cache[base] if base is not None else None
    if old is None: memo, until = {}, {}
    else:
      until = {u: t for u, t in old.until.items() if t >= k}
      memo = {u: old.memo[u] for u in until}
    rb = _Rebuild(self, k, memo, until)
    first = self.first
    for u in self._topo:
      if first[u] < k and u not in memo: rb.node(u)
    root = memo.get(self.input, self.input)
    nodes, refs = _members(self.table, root, old)
    g = StepGraph(k, root, nodes, refs, memo, until)
    if len(self._cache) >= self.CACHE: self._cache.pop(next(iter(self._cache)))
    self._cache[k] = g
    return g

def rebuild(table: UOpTable, root: int, subst: dict[int, int]) -> int:
  """root's graph with every substitution applied (sources first, to a fixed point). A node met inside its own
  replacement (the engine's `x -> CONTIGUOUS(x)`) stays itself there, with its sources rebuilt."""
  return RewriteSteps(table, root, [(None, b, a) for b, a in subst.items()]).graph(len(subst)).root

def node_json(table: UOpTable, uid: int) -> dict[str, Any]:
  op, dtype, arg, src = table.rows[uid]
  return {"id": uid, "op": op, "dtype": dtype, "arg": arg, "src": list(src)}

def step_json(steps: RewriteSteps, k: int, patterns: dict[int, dict[str, Any]], match_ns: list[int] | None = None) -> str:
  """The answer of GET /api/runs/{run}/rewrites/{rw}/step/{k} (docs/server-api.md), as JSON text: nodes are
  written from per-node fragments cached on the table, since a 10k-node graph is sent again at every step."""
  n = len(steps.matches)
  prev_g = steps.graph(k - 1) if k > 0 else None  # first: step k then starts from its state
  g = steps.graph(k)
  head: dict[str, Any] = {"k": k, "n_matches": n, "root": g.root, "removed": [], "added": [], "match": None}
  if prev_g is not None:
    prev, cur = prev_g.nodes, g.nodes
    head["removed"], head["added"] = sorted(prev - cur), sorted(cur - prev)
    pid, before, after = steps.matches[k - 1]
    head["match"] = {"pattern": patterns.get(pid) if pid is not None else None, "before": before, "after": after,
                     "ns": match_ns[k - 1] if match_ns and len(match_ns) == n else None}  # how long its rewrite took
  frag, rows = steps.table.fragments, steps.table.rows
  def one(u: int) -> str:
    op, dtype, arg, src = rows[u]
    f = frag[u] = f'{{"id":{u},"op":{_str(op)},"dtype":{_str(dtype)},"arg":{_str(arg)},"src":[{",".join(map(str, src))}]}}'
    return f
  return _dumps(head)[:-1] + ',"nodes":[' + ",".join([frag[u] if u in frag else one(u) for u in sorted(g.nodes)]) + "]}"

_str = json.encoder.encode_basestring  # type: ignore[attr-defined]  # a JSON string literal, in C
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
