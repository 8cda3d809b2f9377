"""One run on the server: the index of one trace (a file, or a script streaming live), fed events incrementally,
and the JSON answers of docs/server-api.md built from it (no I/O, except reading back a span's details that a
live run left in its trace file).

Events come in typed (profiler/events.py): a file's from its reader, a live run's as the JSON texts of an /ingest
frame, decoded and checked by the one decoder (profiler.events.Checker); one that does not fit is skipped with a warning, never an exception. Live
batches are also summarised as deltas (contexts, rewrites, kernels added; counts per event type) that become
the run's numbered `events` messages; the deltas are kept, small, so that a page that reconnects can be sent
everything after the last message it saw.
"""
from __future__ import annotations
import json, os
from dataclasses import dataclass, field
from typing import Any
from profiler.events import (Checker, Event, SchemaError, to_json, Run as RunEvent, RunEnd, UOpDef, PatternDef, ContextBegin,
                             ContextEnd, Rewrite, Kernel, Schedule, TrackDef, Span, Counter, Marker, Flow)
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
  detail: str = ""

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
    self.schedules: dict[int, list[dict[str, Any]]] = {}  # schedule context id -> its kernels and copies in run order
    self.timeline = Timeline(chrome=kind == "chrome")
    self.history: list[Delta] = []
    self._steps: dict[int, RewriteSteps] = {}
    self._pending: dict[int, int] = {}        # context id -> its number of rewrites when the delta began
    self._pending_counts: dict[str, int] = {}
    self._pending_kernels = 0
    self._pending_tracks = False
    self._at: int | None = None  # byte offset of the event being added, in the run's trace file
    self._checker: Checker | None = None  # a live run's: checks what /ingest brings

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

  def add_events(self, events: list[Event], lines: list[int] | None = None, offsets: list[int] | None = None) -> None:
    """Indexes checked events (a reader's, or Checker's): one the index cannot take (a context begun twice, ...) is
    skipped with a warning (lines: each event's line in the run's trace file, for it). With each event's byte offset
    in the run's trace file, span details are left there instead of kept in memory."""
    counts, total, table, handlers = self._pending_counts, self.counts, self.uops, _HANDLERS
    rows = table.rows
    plain = not table.indexed  # no structural index or users lists to keep up to date yet: a dict insert will do
    n_uops = 0
    for i, ev in enumerate(events):
      t = type(ev)
      if t is UOpDef:  # nine events in ten
        if plain: rows[ev.id] = (ev.op, ev.dtype, ev.arg, ev.src)
        else: table.add(ev.id, (ev.op, ev.dtype, ev.arg, ev.src))
        n_uops += 1
        continue
      self._at = offsets[i] if offsets is not None else None
      try: handlers[t](self, ev)
      except SchemaError as e:
        self.warnings.add(f"event skipped: {e}", None, None if lines is None else lines[i])
        continue
      counts[t.TYPE] = counts.get(t.TYPE, 0) + 1
      total[t.TYPE] = total.get(t.TYPE, 0) + 1
    if n_uops:
      counts["uop"] = counts.get("uop", 0) + n_uops
      total["uop"] = total.get("uop", 0) + n_uops
    self.n_events += len(events)

  def add(self, objs: list[Any], first_line: int | None = None, offsets: list[int] | None = None) -> None:
    """Checks a live batch of events, each its JSON text (an /ingest frame's elements) or a decoded JSON object, with
    the one decoder (profiler.events.Checker) and indexes those that fit; the rest are skipped with a warning
    (first_line: the line of objs[0] in the run's trace file) but counted."""
    if self._checker is None:  # a run read again from its file goes on: the uops it has are defined
      self._checker = Checker()
      self._checker.uops.update(self.uops.rows)
    events, where = [], []
    for i, ev in enumerate(self._checker.events(objs)):
      if isinstance(ev, SchemaError): self.warnings.add(f"event skipped: {ev}", None, None if first_line is None else first_line + i)
      else: events.append(ev); where.append(i)
    self.add_events(events, None if first_line is None else [first_line + i for i in where],
                    None if offsets is None else [offsets[i] for i in where])
    self.n_events += len(objs) - len(events)

  def _pattern(self, p: PatternDef) -> None:
    self.patterns[p.id] = {"id": p.id, "file": p.file, "line": p.line, "source": p.source}

  def _context_begin(self, c: ContextBegin) -> None:
    if c.id in self.contexts: raise SchemaError(f"context {c.id} begun twice")
    self.contexts[c.id] = Context(c.id, c.parent, c.kind, c.name, _loc(c.loc), c.ts_ns, detail=c.detail)
    self._touch(c.id)

  def _schedule(self, s: Schedule) -> None:
    if s.ctx not in self.contexts: raise SchemaError(f"schedule of an unknown context {s.ctx}")
    self.schedules[s.ctx] = s.items  # checked by the decoder (profiler.events.Checker)
    self._touch(s.ctx)

  def _context_end(self, c: ContextEnd) -> None:
    if (ctx := self.contexts.get(c.id)) is not None: ctx.end_ns = c.ts_ns

  def _rewrite(self, r: Rewrite) -> None:
    if r.id in self.rewrites: raise SchemaError(f"rewrite {r.id} defined twice")
    ctx = r.ctx if r.ctx in self.contexts else NO_CONTEXT
    if ctx == NO_CONTEXT and NO_CONTEXT not in self.contexts:
      self.contexts[NO_CONTEXT] = Context(NO_CONTEXT, None, "user", "(no context)", ["", 0], r.start_ns)
    self._touch(ctx)
    self.contexts[ctx].rewrites.append(r.id)
    self.rewrites[r.id] = {"id": r.id, "ctx": ctx, "name": r.name, "loc": _loc(r.loc), "input": r.input, "output": r.output,
                           "matches": r.matches, "start_ns": r.start_ns, "dur_ns": r.dur_ns, "match_ns": r.match_ns}

  def _kernel(self, k: Kernel) -> None:
    if k.id not in self.kernels: self.kernel_order.append(k.id); self._pending_kernels += 1
    self.kernels[k.id] = {n: v for n, v in to_json(k).items() if n != "type"}  # the trace's fields, by the trace's names

  def _track(self, t: TrackDef) -> None:
    self.timeline.declare(t.name, t.kind)
    if t.process: self.timeline.processes[t.name] = t.process  # a merged Chrome trace's thread: grouped by its process
    self._pending_tracks = True

  def _span(self, s: Span) -> None:
    self.timeline.span(s.track, s.name, s.start_ns, s.end_ns, s.cat, s.args, self._at)
    self._pending_tracks = True

  def _counter(self, c: Counter) -> None:
    self.timeline.counter(c.track, c.name, c.ts_ns, c.value)
    self._pending_tracks = True

  def _marker(self, m: Marker) -> None:
    self.timeline.marker(m.name, m.ts_ns)
    self._pending_tracks = True

  def _flow(self, f: Flow) -> None:
    self.timeline.flow(f.id, f.phase, f.track, f.name, f.cat, f.ts_ns)
    self._pending_tracks = True

  def _run(self, r: RunEvent) -> None:
    if self.meta is None:
      self.meta = to_json(r)
      self.timeline.origin = r.clock_ns

  def _run_end(self, r: RunEnd) -> None: self.ended = True

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
            "end_ns": c.end_ns, "rewrites": [self.rewrite_json(r) for r in (c.rewrites if rewrites is None else rewrites)],
            "detail": c.detail, "n_items": len(self.schedules.get(c.id, ()))}

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
      line = f.readline()
    try: obj = json.loads(line)
    except ValueError: obj = _LENIENT.decode(line.decode(errors="replace"))  # an int past Python's 4,300-digit limit
    args = obj.get("args") if isinstance(obj, dict) else None
    return args if isinstance(args, dict) else {}

  def uop_json(self, uid: int) -> dict[str, Any]:
    op, dtype, arg, src = self.uops.rows[uid]
    return {"id": uid, "op": op, "dtype": dtype, "arg": arg, "src": list(src), "users": self.uops.users(uid)}

# the trace's lines were accepted with such ints (the reader counts them as numbers): read back, one is a float
_LENIENT = json.JSONDecoder(parse_int=lambda t: int(t) if len(t) < 4300 else float(t))

def _warning(w: ReadWarning) -> dict[str, Any]: return {"message": w.message, "offset": w.offset, "line": w.line}

_HANDLERS: dict[type, Any] = {PatternDef: Run._pattern, ContextBegin: Run._context_begin, ContextEnd: Run._context_end,
                              Rewrite: Run._rewrite, Kernel: Run._kernel, Schedule: Run._schedule, TrackDef: Run._track, Span: Run._span,
                              Counter: Run._counter, Marker: Run._marker, Flow: Run._flow, RunEvent: Run._run, RunEnd: Run._run_end}
