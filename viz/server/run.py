"""One run on the server: the index of one trace (a file, or a script streaming live), fed events incrementally,
and the JSON answers of docs/server-api.md built from it (no I/O, except reading back a span's details that a
live run left in its trace file).

Events come in as JSON objects (a trace line each). Each is checked against profiler/events.py's schema
(the one definition): an event that does not fit is skipped with a warning, never an exception. Live
batches are also summarised as deltas (contexts, rewrites, kernels added; counts per event type) that become
the run's numbered `events` messages; the deltas are kept, small, so that a page that reconnects can be sent
everything after the last message it saw.
"""
from __future__ import annotations
import json, os
from dataclasses import dataclass, field
from typing import Any
from profiler.events import SchemaError, from_json, to_json, Event
from profiler.tracefile import ReadWarning, Trace, Warnings
from viz.server.graph import UOpTable, RewriteSteps, step_json
from viz.server.timeline import Timeline

@dataclass
class Context:
  id: int
  parent: int | None
  kind: str
  name: str
  loc: list[Any]
  start_ns: int | None
  end_ns: int | None = None
  rewrites: list[int] = field(default_factory=list)

@dataclass
class Delta:
  """What one live batch added; message seq = its index in Run.history + 1."""
  contexts: list[tuple[int, int, int]]  # (context id, first new rewrite index, end rewrite index)
  kernels: tuple[int, int]              # range of indices into Run.kernel_order
  counts: dict[str, int]
  tracks_changed: bool
  n_events: int                         # the run's total after this batch

NO_CONTEXT = 0  # rewrites whose context is unknown are listed under this synthetic context

def _loc(v: Any) -> list[Any]: return [v[0], v[1]] if isinstance(v, (list, tuple)) and len(v) == 2 else ["", 0]

class Run:
  def __init__(self, rid: int, name: str, kind: str, path: str | None, live: bool):
    self.id, self.name, self.kind, self.path, self.live = rid, name, kind, path, live
    self.meta: dict[str, Any] | None = None  # the `run` event
    self.ended = False
    self.n_events = 0
    self.counts: dict[str, int] = {}
    self.warnings = Warnings()
    self.uops = UOpTable()
    self.patterns: dict[int, dict[str, Any]] = {}
    self.contexts: dict[int, Context] = {}
    self.rewrites: dict[int, dict[str, Any]] = {}
    self.kernels: dict[int, dict[str, Any]] = {}
    self.kernel_order: list[int] = []
    self.timeline = Timeline(chrome=kind == "chrome")
    self.history: list[Delta] = []
    self._steps: dict[int, RewriteSteps] = {}
    self._pending: dict[int, int] = {}        # context id -> its number of rewrites when the delta began
    self._pending_counts: dict[str, int] = {}
    self._pending_kernels = 0
    self._pending_tracks = False
    self._at: int | None = None  # byte offset of the event being added, in the run's trace file

  @classmethod
  def from_trace(cls, rid: int, path: str, trace: Trace) -> "Run":
    """A run of a trace file read by profiler.load (ours or Chrome); its reader's warnings come along."""
    ours = trace.kind == "tinyviz" or bool(isinstance(trace.meta.get("otherData"), dict) and trace.meta["otherData"].get("tinyviz"))
    run = cls(rid, os.path.basename(path), trace.kind, path, live=False)
    if ours and trace.kind == "chrome": run.timeline.chrome = False  # our own export: our track names
    run.timeline.processes = dict(trace.meta.get("processes") or {})  # Chrome threads' processes, as the reader named them
    for w in trace.warnings: run.warnings.items.append(w)
    run.add_events(trace.events)
    run.commit()
    return run

  # *** feeding ***

  def add_events(self, events: list[Event]) -> None:
    for i in range(0, len(events), 10_000): self.add([to_json(e) for e in events[i:i + 10_000]])  # in pieces: less at once

  def add(self, objs: list[Any], first_line: int | None = None, offsets: list[int] | None = None) -> None:
    """Indexes a batch of event objects; one that does not fit the schema is skipped with a warning
    (first_line: the line of objs[0] in the run's trace file, for the warning). With the byte offset of each
    event's line in the run's trace file, span details are left there instead of kept in memory."""
    handlers, counts, table = _HANDLERS, self._pending_counts, self.uops
    rows = table.rows
    plain = not table.indexed  # no structural index or users lists to keep up to date yet: a dict insert will do
    n_uops = 0
    for i, d in enumerate(objs):
      try:
        typ = d["type"]
        if typ == "uop":  # nine events in ten: checked inline, against the same schema as from_json
          uid, src, op, dtype, arg = d["id"], d["src"], d["op"], d["dtype"], d["arg"]
          if type(uid) is not int or type(src) not in (list, tuple) or type(op) is not str or type(dtype) is not str or type(arg) is not str:
            from_json(d)
            raise SchemaError("uop: bad field")
          if uid in rows: raise SchemaError(f"uop {uid} defined twice; second skipped")
          for s in src:
            if type(s) is not int or s not in rows: raise SchemaError(f"uop {uid} refers to an undefined uop {s!r}")
          if plain: rows[uid] = (op, dtype, arg, tuple(src))
          else: table.add(uid, (op, dtype, arg, tuple(src)))
          n_uops += 1
          continue
        self._at = offsets[i] if offsets is not None else None
        handlers[typ](self, d)
      except (SchemaError, KeyError, TypeError, ValueError, IndexError) as e:
        what = f"{type(e).__name__}: {e}" if not isinstance(e, SchemaError) else str(e)
        if isinstance(d, dict) and d.get("type") not in _HANDLERS and not isinstance(e, SchemaError):
          what = f"unknown event type {d.get('type')!r}"
        self.warnings.add(f"event skipped: {what}", None, None if first_line is None else first_line + i)
        continue
      counts[typ] = counts.get(typ, 0) + 1
      self.counts[typ] = self.counts.get(typ, 0) + 1
    if n_uops:
      counts["uop"] = counts.get("uop", 0) + n_uops
      self.counts["uop"] = self.counts.get("uop", 0) + n_uops
    self.n_events += len(objs)

  def _pattern(self, d: dict[str, Any]) -> None:
    p = from_json(d)
    self.patterns[p.id] = {"id": p.id, "file": p.file, "line": p.line, "source": p.source}

  def _context_begin(self, d: dict[str, Any]) -> None:
    c = from_json(d)
    if c.id in self.contexts: raise SchemaError(f"context {c.id} begun twice")
    self.contexts[c.id] = Context(c.id, c.parent, c.kind, c.name, _loc(c.loc), c.ts_ns)
    self._touch(c.id)

  def _context_end(self, d: dict[str, Any]) -> None:
    c = from_json(d)
    if (ctx := self.contexts.get(c.id)) is not None: ctx.end_ns = c.ts_ns

  def _rewrite(self, d: dict[str, Any]) -> None:
    rid, ctx, matches = d["id"], d["ctx"], d["matches"]
    rows = self.uops.rows
    # the matches (thousands in a big pass) are checked here, as lists, rather than turned into tuples by from_json
    if type(matches) not in (list, tuple): raise SchemaError("rewrite.matches: expected array")
    for m in matches:
      if type(m) not in (list, tuple) or len(m) != 3 or (m[0] is not None and type(m[0]) is not int) or m[1] not in rows or m[2] not in rows:
        raise SchemaError(f"rewrite {rid}: match {m!r} is not [pattern id, before, after] of defined uops")
    r = from_json({**d, "matches": []})
    if r.input not in rows or r.output not in rows: raise SchemaError(f"rewrite {r.id} refers to an undefined uop")
    if r.id in self.rewrites: raise SchemaError(f"rewrite {r.id} defined twice")
    ctx = r.ctx if r.ctx in self.contexts else NO_CONTEXT
    if ctx == NO_CONTEXT and NO_CONTEXT not in self.contexts:
      self.contexts[NO_CONTEXT] = Context(NO_CONTEXT, None, "user", "(no context)", ["", 0], r.start_ns)
    self._touch(ctx)
    self.contexts[ctx].rewrites.append(r.id)
    self.rewrites[r.id] = {"id": r.id, "ctx": ctx, "name": r.name, "loc": _loc(r.loc), "input": r.input, "output": r.output,
                           "matches": matches, "start_ns": r.start_ns, "dur_ns": r.dur_ns, "match_ns": r.match_ns}

  def _kernel(self, d: dict[str, Any]) -> None:
    k = from_json(d)
    if k.id not in self.kernels: self.kernel_order.append(k.id); self._pending_kernels += 1
    self.kernels[k.id] = {"id": k.id, "name": k.name, "device": k.device, "ctx": k.ctx, "global_size": list(k.global_size),
                          "local_size": list(k.local_size), "flops": k.flops, "mem_bytes": k.bytes, "src": k.src, "uops": k.uops,
                          "line_uops": k.line_uops, "plans": k.plans}

  def _span(self, d: dict[str, Any]) -> None:
    track, name, start, end, cat = d["track"], d["name"], d["start_ns"], d["end_ns"], d["cat"]
    args = d.get("args", {})
    if type(track) is not str or type(name) is not str or type(start) is not int or type(end) is not int \
       or type(cat) is not str or type(args) is not dict:
      from_json(d)
      raise SchemaError("span: bad field")
    self.timeline.span(track, name, start, end, cat, args, self._at)
    self._pending_tracks = True

  def _counter(self, d: dict[str, Any]) -> None:
    c = from_json(d)
    self.timeline.counter(c.track, c.name, c.ts_ns, c.value)
    self._pending_tracks = True

  def _marker(self, d: dict[str, Any]) -> None:
    m = from_json(d)
    self.timeline.marker(m.name, m.ts_ns)
    self._pending_tracks = True

  def _flow(self, d: dict[str, Any]) -> None:
    f = from_json(d)
    self.timeline.flow(f.id, f.phase, f.track, f.name, f.cat, f.ts_ns)
    self._pending_tracks = True

  def _run(self, d: dict[str, Any]) -> None:
    r = from_json(d)
    if self.meta is None:
      self.meta = to_json(r)
      self.timeline.origin = r.clock_ns

  def _run_end(self, d: dict[str, Any]) -> None:
    from_json(d)
    self.ended = True

  def _header(self, d: dict[str, Any]) -> None: pass  # a trace file's first line, if a client sends it along

  def _touch(self, ctx: int) -> None:
    if ctx not in self._pending: self._pending[ctx] = len(self.contexts[ctx].rewrites)

  def commit(self) -> Delta | None:
    """Closes the current batch into a numbered delta (None when it added nothing)."""
    if not self._pending_counts: return None
    ctxs = [(cid, start, len(self.contexts[cid].rewrites)) for cid, start in self._pending.items()]
    n = len(self.kernel_order)
    d = Delta(ctxs, (n - self._pending_kernels, n), self._pending_counts, self._pending_tracks, self.n_events)
    self._pending, self._pending_counts, self._pending_kernels, self._pending_tracks = {}, {}, 0, False
    self.history.append(d)
    return d

  # *** answers ***

  @property
  def seq(self) -> int: return len(self.history)

  def summary(self) -> dict[str, Any]:
    return {"id": self.id, "name": self.name, "kind": self.kind, "path": self.path, "live": self.live,
            "n_events": self.n_events, "warnings": [_warning(w) for w in self.warnings.done()], "seq": self.seq,
            "ended": self.ended, "script": (self.meta or {}).get("script"), "start_time": (self.meta or {}).get("start_time")}

  def rewrite_json(self, rid: int) -> dict[str, Any]:
    r = self.rewrites[rid]
    return {"id": r["id"], "name": r["name"], "loc": r["loc"], "input": r["input"], "output": r["output"],
            "n_matches": len(r["matches"]), "start_ns": r["start_ns"], "dur_ns": r["dur_ns"]}

  def context_json(self, c: Context, rewrites: list[int] | None = None) -> dict[str, Any]:
    return {"id": c.id, "parent": c.parent, "kind": c.kind, "name": c.name, "loc": c.loc, "start_ns": c.start_ns,
            "end_ns": c.end_ns, "rewrites": [self.rewrite_json(r) for r in (c.rewrites if rewrites is None else rewrites)]}

  def kernel_json(self, kid: int, full: bool = False) -> dict[str, Any]:
    k = self.kernels[kid]
    return dict(k) if full else {n: v for n, v in k.items() if n not in ("src", "uops", "line_uops", "plans")}

  def contexts_json(self) -> dict[str, Any]:
    return {"contexts": [self.context_json(c) for c in self.contexts.values()],
            "kernels": [self.kernel_json(k) for k in self.kernel_order]}

  def events_message(self, seq: int) -> dict[str, Any]:
    """The `events` message number seq (1-based), rebuilt from its delta: the contexts it touched with the
    rewrites it added, the kernels it added."""
    d = self.history[seq - 1]
    return {"type": "events", "run": self.id, "seq": seq, "counts": d.counts, "n_events": d.n_events,
            "contexts": [self.context_json(self.contexts[c], self.contexts[c].rewrites[a:b]) for c, a, b in d.contexts],
            "kernels": [self.kernel_json(k) for k in self.kernel_order[d.kernels[0]:d.kernels[1]]],
            "tracks_changed": d.tracks_changed}

  STEPS_KEPT = 4  # rewrites whose step graphs (and checkpoints) are kept; the least recently viewed goes first

  def steps(self, rid: int) -> RewriteSteps:
    if (s := self._steps.pop(rid, None)) is None:
      r = self.rewrites[rid]
      s = RewriteSteps(self.uops, r["input"], r["matches"])
      while len(self._steps) >= self.STEPS_KEPT: self._steps.pop(next(iter(self._steps)))
    self._steps[rid] = s
    return s

  def step_json(self, rid: int, k: int) -> str:
    return step_json(self.steps(rid), k, self.patterns, self.rewrites[rid].get("match_ns"))

  def read_args(self, offset: int) -> dict[str, Any]:
    """The args of the span whose line starts at `offset` in this run's trace file."""
    assert self.path is not None
    with open(self.path, "rb") as f:
      f.seek(offset)
      args = json.loads(f.readline()).get("args")
    return args if isinstance(args, dict) else {}

  def uop_json(self, uid: int) -> dict[str, Any]:
    op, dtype, arg, src = self.uops.rows[uid]
    return {"id": uid, "op": op, "dtype": dtype, "arg": arg, "src": list(src), "users": self.uops.users(uid)}

def _warning(w: ReadWarning) -> dict[str, Any]: return {"message": w.message, "offset": w.offset, "line": w.line}

_HANDLERS = {"pattern": Run._pattern, "context_begin": Run._context_begin, "context_end": Run._context_end,
             "rewrite": Run._rewrite, "kernel": Run._kernel, "span": Run._span, "counter": Run._counter,
             "marker": Run._marker, "flow": Run._flow, "run": Run._run, "run_end": Run._run_end, "header": Run._header}
