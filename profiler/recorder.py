"""The recorder: implements tinygrad.tracing.Tracer, turns engine callbacks into events, and a background
thread flushes them (to the trace file and any other sink) at least once a second.

The hot path (rewrite_match, span) only looks ids up in dicts and appends to in-memory lists; JSON encoding
and I/O happen on the flush thread. UOps and patterns are interned by identity, and the recorder keeps a
reference to each so that Python never reuses an id() we have already handed out.
"""
from __future__ import annotations
import atexit, gc, itertools, os, sys, tempfile, threading, time
from collections import deque
from typing import Any, Callable, Iterable
from profiler import __version__
from profiler.events import (ARG_MAX, Event, Run, RunEnd, UOpDef, PatternDef, ContextBegin, ContextEnd, Rewrite,
                             Kernel, Schedule, TrackDef, Span, Counter, Marker, Flow, to_json_batch)
from profiler.patsource import pattern_source
from profiler.tracefile import TraceWriter
from profiler.safefile import private_dir
from profiler import settings

Sink = Callable[[list[dict[str, Any]]], None]
FLUSH_INTERVAL_S = 0.5

def arg_repr(x: Any) -> str:
  try: r = repr(x)
  except Exception: r = f"<{type(x).__name__}>"  # a broken __repr__ in user code must not break the run
  return r if len(r) <= ARG_MAX else r[:ARG_MAX-3] + "..."

class _OpenRewrite:
  __slots__ = ("id", "ctx", "name", "loc", "input", "matches", "match_ns", "start_ns", "own_ctx")
  def __init__(self, id: int, ctx: int, name: str, loc: tuple[str, int], input: int, own_ctx: bool, start_ns: int | None = None):
    self.id, self.ctx, self.name, self.loc, self.input, self.own_ctx = id, ctx, name, loc, input, own_ctx
    self.matches: list[tuple[int | None, int, int]] = []
    self.match_ns: list[int] = []  # per match, how long its rewrite took
    self.start_ns = time.perf_counter_ns() if start_ns is None else start_ns

class Recorder:
  """A Tracer (see tinygrad/tracing.py). mode "viz" records rewrites and the timeline, "profile" the timeline only.
  Events go to `path` (a new trace file) when given, and to each sink as batches of JSON-ready dicts."""
  def __init__(self, mode: str = "viz", path: str | None = None, sinks: Iterable[Sink] = (),
               flush_interval: float = FLUSH_INTERVAL_S, exclusive: bool = False):
    if mode not in ("viz", "profile"): raise ValueError(f"mode must be 'viz' or 'profile', not {mode!r}")
    self.mode, self.path, self.capture_rewrites = mode, path, mode == "viz"
    self.capture_plans = self.capture_rewrites and settings.plans()  # VIZ_PLANS=1: the losing plans' rewrites too
    self._q: deque[Event] = deque()  # append/popleft are atomic: engine threads and the flusher need no lock
    # what each track is, as the engine says (track_kinds): carried in a track event before the track's first use
    self._track_kinds: dict[str, str] = {}
    self._track_default = "device"
    self._tracks: set[str] = set()
    self._uop_ids: dict[int, int] = {}
    self._pat_ids: dict[int, int] = {}
    self._keep: list[Any] = []
    self._names: dict[Any, str] = {}
    self._intern_lock = threading.Lock()
    self._flush_lock = threading.Lock()
    self._uop_n, self._pat_n, self._ctx_n, self._rw_n, self._kernel_n = (itertools.count(1) for _ in range(5))
    self._tls = threading.local()
    self._sinks: list[Sink] = list(sinks)
    self._writer = TraceWriter(path, exclusive) if path is not None else None
    self.closed = False
    argv = list(sys.argv)
    self._q.append(Run(os.path.abspath(argv[0]) if argv and argv[0] else "", argv, time.time(), time.perf_counter_ns(),
                       os.getpid(), __version__, mode))
    self._stop = threading.Event()
    self._thread = threading.Thread(target=self._flush_loop, args=(flush_interval,), name="tinyviz-flush", daemon=True)
    self._thread.start()

  # *** contexts and rewrites ***

  def _ctx_stack(self) -> list[int]:
    try: return self._tls.ctx
    except AttributeError:
      self._tls.ctx, self._tls.rw = [], []
      return self._tls.ctx

  def context_begin(self, kind: str, name: str, loc: tuple[str, int], detail: str = "") -> int:
    stack, cid = self._ctx_stack(), next(self._ctx_n)
    self._q.append(ContextBegin(cid, stack[-1] if stack else None, kind, name, _loc(loc), time.perf_counter_ns(), detail))
    stack.append(cid)
    return cid

  def context_end(self, ctx_id: int) -> None:
    stack = self._ctx_stack()
    if ctx_id in stack: del stack[stack.index(ctx_id):]  # an unbalanced inner begin must not leave us nested forever
    self._q.append(ContextEnd(ctx_id, time.perf_counter_ns()))

  def rewrite_begin(self, name: str, loc: tuple[str, int], sink: Any, start_ns: int | None = None) -> None:
    if not self.capture_rewrites: return
    stack = self._ctx_stack()
    # a graph_rewrite outside any context gets its own "user" context, so every rewrite belongs to one
    own = not stack
    ctx = self.context_begin("user", name, loc) if own else stack[-1]
    self._tls.rw.append(_OpenRewrite(next(self._rw_n), ctx, name, _loc(loc), self._uop(sink), own, start_ns))

  def rewrite_match(self, pat: Any, before: Any, after: Any, ns: int = 0) -> None:
    try: rw = self._tls.rw[-1]
    except (AttributeError, IndexError): return  # a match outside rewrite_begin/end has nothing to belong to
    ids = self._uop_ids
    b = ids.get(id(before))
    if b is None: b = self._intern(before)
    a = ids.get(id(after))
    if a is None: a = self._intern(after)
    p = None if pat is None else self._pat_ids.get(id(pat))
    if p is None and pat is not None: p = self._intern_pattern(pat)
    rw.matches.append((p, b, a))
    rw.match_ns.append(ns)

  def rewrite_end(self, sink: Any, end_ns: int | None = None) -> None:
    try: rw = self._tls.rw.pop()
    except (AttributeError, IndexError): return
    out = self._uop(sink)
    self._q.append(Rewrite(rw.id, rw.ctx, rw.name, rw.loc, rw.input, rw.matches, out, rw.start_ns,
                           (time.perf_counter_ns() if end_ns is None else end_ns) - rw.start_ns, rw.match_ns))
    if rw.own_ctx: self.context_end(rw.ctx)
    # the UOps interned stay alive to the end (their ids must not be reused): every 32 rewrites, move everything alive
    # out of the garbage collector's way, or its collections walk them again and again (a third of what recording
    # cost on the digits run); close() hands them back
    if rw.id % 32 == 31: gc.freeze()

  # *** interning ***

  def _uop(self, u: Any) -> int:
    i = self._uop_ids.get(id(u))
    return self._intern(u) if i is None else i

  def _intern(self, root: Any) -> int:
    # sources first, iteratively: graphs can be deeper than Python's recursion limit
    with self._intern_lock:
      ids, q, keep, names = self._uop_ids, self._q, self._keep, self._names
      stack: list[tuple[Any, bool]] = [(root, False)]
      while stack:
        u, ready = stack.pop()
        if id(u) in ids: continue
        if not ready:
          stack.append((u, True))
          stack.extend([(s, False) for s in u.src if id(s) not in ids])
          continue
        i = next(self._uop_n)
        # ops and dtypes are a few shared objects: name each once
        if (op := names.get(u.op)) is None: op = names[u.op] = getattr(u.op, "name", None) or str(u.op)
        if (dt := names.get(u.dtype)) is None: dt = names[u.dtype] = str(u.dtype)
        q.append(UOpDef(i, op, dt, arg_repr(u.arg), tuple([ids[id(s)] for s in u.src])))
        keep.append(u)
        ids[id(u)] = i  # only after its def is queued: another thread that sees the id sees the def first
      return ids[id(root)]

  def _intern_pattern(self, pat: Any) -> int:
    with self._intern_lock:
      if (i := self._pat_ids.get(id(pat))) is not None: return i
      file, line = _loc(getattr(pat, "location", None))
      i = next(self._pat_n)
      self._q.append(PatternDef(i, file, line, pattern_source(file, line) if file else ""))
      self._keep.append(pat)
      self._pat_ids[id(pat)] = i
      return i

  # *** kernels and the timeline ***

  def kernel(self, name: str, device: str, src: str, global_size: tuple[int, ...], local_size: tuple[int, ...],
             flops: int, mem_bytes: int, ctx_id: int, uops: list[str], line_uops: list[list[Any]] | None = None,
             plans: list[dict[str, Any]] | None = None, axis_kinds: list[str] | None = None) -> int:
    kid = next(self._kernel_n)
    lines: list[list[int]] = []
    if line_uops and self.capture_rewrites:  # the exact code <-> graph link: ids of uops interned in this trace
      ids = self._uop_ids
      lines = [[ids[id(u)] if id(u) in ids else self._intern(u) for u in line] for line in line_uops]
    self._q.append(Kernel(kid, name, device, src, tuple(int(x) for x in global_size), tuple(int(x) for x in local_size),
                          int(flops), int(mem_bytes), ctx_id, [str(u) for u in uops], lines,
                          [dict(p) for p in plans] if plans else [], [str(k) for k in axis_kinds or ()]))
    return kid

  def schedule(self, ctx_id: int, items: list[dict[str, Any]]) -> None:
    """The kernels and copies schedule context ctx_id made, in run order: {kind, ast, kernel, reads, writes} with
    UOps for ast and the buffers (interned here, so the explorer can draw each kernel's graph)."""
    if not self.capture_rewrites: return
    out = [{"kind": str(it["kind"]), "ast": self._uop(it["ast"]), "kernel": it.get("kernel"),
            "reads": [self._uop(b) for b in it["reads"]], "writes": [self._uop(b) for b in it["writes"]]} for it in items]
    self._q.append(Schedule(ctx_id, out))

  def track_kinds(self, kinds: dict[str, str], default: str) -> None:
    self._track_kinds, self._track_default = dict(kinds), default

  def _track(self, track: str) -> None:
    # a race of two threads' first spans on one track says the same thing twice: harmless
    self._tracks.add(track)
    self._q.append(TrackDef(track, self._track_kinds.get(track.split("/")[0], self._track_default)))

  def span(self, track: str, name: str, start_ns: int, end_ns: int, cat: str, args: dict[str, Any]) -> None:
    if track not in self._tracks: self._track(track)
    self._q.append(Span(track, name, start_ns, end_ns, cat, args if args is not None else {}))

  def counter(self, track: str, name: str, ts_ns: int, value: float) -> None:
    if track not in self._tracks: self._track(track)
    self._q.append(Counter(track, name, ts_ns, float(value)))

  def marker(self, name: str, ts_ns: int) -> None: self._q.append(Marker(name, ts_ns))

  def flow(self, fid: str, phase: str, track: str, name: str, cat: str, ts_ns: int) -> None:
    if track not in self._tracks: self._track(track)
    self._q.append(Flow(fid, phase, track, name, cat, ts_ns))

  # *** flushing ***

  def add_sink(self, sink: Sink) -> None: self._sinks.append(sink)

  def flush(self) -> None:
    """Hands every queued event to the trace file and the sinks, in the order they were recorded."""
    with self._flush_lock:
      q = self._q
      events = [q.popleft() for _ in range(len(q))]
      if not events: return
      if self._writer is not None: self._writer.write(events)  # encoded by msgspec, the batch in one call
      batch = to_json_batch(events) if self._sinks else []
      for sink in list(self._sinks):
        try: sink(batch)
        except Exception as e:  # a broken viewer connection must not stop the recording
          print(f"tinyviz: dropping event sink {sink!r}: {e!r}", file=sys.stderr)
          self._sinks.remove(sink)

  def _flush_loop(self, interval: float) -> None:
    while not self._stop.wait(interval):
      try: self.flush()
      except OSError as e:
        print(f"tinyviz: cannot write trace {self.path}: {e}", file=sys.stderr)
        return

  def close(self) -> None:
    """Flushes everything, writes run_end and closes the file. Idempotent."""
    if self.closed: return
    self.closed = True
    self._stop.set()
    if self._thread is not threading.current_thread(): self._thread.join()
    self._q.append(RunEnd(time.perf_counter_ns()))
    if self.capture_rewrites: gc.unfreeze()  # what was frozen goes back to being collected normally
    try:
      self.flush()
      if self._writer is not None: self._writer.close()
    except OSError as e: print(f"tinyviz: cannot write trace {self.path}: {e}", file=sys.stderr)

def _loc(loc: Any) -> tuple[str, int]:
  if isinstance(loc, (tuple, list)) and len(loc) >= 2:
    try: return (str(loc[0]), int(loc[1]))
    except (TypeError, ValueError): pass
  return ("", 0)

# *** installing into the engine ***

_installed: Recorder | None = None
_attach: Callable[[Any], None] | None = None
_fork_hook = False

def mode_from_env() -> str:
  """VIZ (non-zero) records everything, PROFILE alone the timeline only (profiler.settings reads both); neither: viz."""
  return settings.mode() or "viz"

def default_trace_path() -> str:
  """TINYVIZ_TRACE names the file; else a new file in TINYVIZ_TRACE_DIR (default: <tmp>/tinyviz, made 0700 and
  checked to be this user's own: the shared temp folder is where a link could be planted)."""
  if p := os.environ.get("TINYVIZ_TRACE"): return p
  d = os.environ.get("TINYVIZ_TRACE_DIR") or private_dir(os.path.join(tempfile.gettempdir(), "tinyviz"))
  stem = os.path.splitext(os.path.basename(sys.argv[0] if sys.argv and sys.argv[0] else ""))[0] or "python"
  return os.path.join(d, f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.tinyviz.jsonl")

Attach = Callable[[Any], None]

def install(mode: str | None = None, path: str | None = None, sinks: Iterable[Sink] = (), announce: bool = True,
            attach: Attach | None = None) -> Recorder:
  """Starts recording and hands the recorder to `attach` (the engine's hook: `tinygrad.tracing.attach`; the profiler
  never imports the engine), which gets None again when it stops. At exit the trace is closed and (announce) its
  path printed."""
  global _installed, _attach, _fork_hook
  if _installed is not None: uninstall(announce=False)
  named = path is not None or bool(os.environ.get("TINYVIZ_TRACE"))
  mode = mode or mode_from_env()
  try:
    path = path or default_trace_path()
    rec = Recorder(mode, path, sinks, exclusive=not named)  # a name we made up: refuse a file already there
  except OSError as e:  # a read-only disk must not stop the user's script: record for the sinks only
    print(f"tinyviz: cannot write trace {path or 'file'}: {e}; recording without a file", file=sys.stderr)
    rec = Recorder(mode, None, sinks)
  _installed, _attach = rec, attach
  if attach is not None: attach(rec)
  atexit.register(_at_exit, rec, announce)
  if not _fork_hook:
    # a forked child (e.g. a compile worker) must not write into the parent's file
    os.register_at_fork(after_in_child=_forget_in_child)
    _fork_hook = True
  return rec

def installed() -> Recorder | None:
  """The recorder install() started, until it is uninstalled."""
  return _installed

def uninstall(announce: bool = False) -> str | None:
  """Stops recording and closes the trace; returns its path (None if nothing was installed)."""
  global _installed, _attach
  rec, attach, _installed, _attach = _installed, _attach, None, None
  if rec is None: return None
  if attach is not None: attach(None)
  rec.close()
  if announce and rec.path: print(f"tinyviz: trace saved to {rec.path}", file=sys.stderr)
  return rec.path

def _at_exit(rec: Recorder, announce: bool) -> None:
  if rec is _installed: uninstall(announce)
  elif not rec.closed: rec.close()

def _forget_in_child() -> None:
  global _installed, _attach
  if _installed is None: return
  if _attach is not None: _attach(None)
  _installed.closed = True  # the child has no flush thread and must leave the shared file alone
  _installed, _attach = None, None
