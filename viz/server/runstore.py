"""Bounded memory and disk for the server's runs.

The index of a run that no page has looked at for TINYVIZ_RUN_IDLE_S seconds, or beyond the TINYVIZ_RUNS_LOADED most
recently viewed, is let go: what stays is an `Unloaded` (its summary and its numbered message history, a few hundred
bytes) and the run is read again from its file, in a thread, when a page asks for it. Only runs that are done and
whose files are complete are let go: a live run, one whose copy is still being written, one a page is still being
sent. The server's own copies of live runs are deleted, oldest first, once together they pass TINYVIZ_SPOOL_MB
(`tinyviz serve --spool-mb`); that run then leaves the list (the script's own trace file is its record).
"""
from __future__ import annotations
import asyncio, ctypes, ctypes.util, os, re, sys, time
from typing import TYPE_CHECKING, Any
from profiler.load import load_group
from profiler.tracefile import TraceError
from viz.server.run import Run

if TYPE_CHECKING:
  from starlette.types import ASGIApp, Receive, Scope, Send
  from viz.server.hub import Hub

DEFAULTS = {"TINYVIZ_RUN_IDLE_S": 300.0, "TINYVIZ_RUNS_LOADED": 3.0, "TINYVIZ_SPOOL_MB": 2048.0}

def setting(name: str) -> float:
  """A positive number from the environment; a bad one is named on stderr and the default used."""
  v = os.environ.get(name)
  if v in (None, ""): return DEFAULTS[name]
  try:
    if (x := float(v)) > 0 and x < float("inf"): return x
  except ValueError: pass
  print(f"tinyviz: {name}={v!r} is not a positive number; using {DEFAULTS[name]:g}", file=sys.stderr)
  return DEFAULTS[name]

def _stamp(paths: list[str]) -> tuple[tuple[int, int], ...] | None:
  try: return tuple((st.st_size, st.st_mtime_ns) for st in map(os.stat, paths))
  except OSError: return None

class Unloaded:
  """A run whose index was let go: answers what the run list and the message numbering need, nothing more."""
  live = False
  def __init__(self, run: Run, source: list[str], stamp: tuple[tuple[int, int], ...] | None):
    self.id, self.name, self.kind, self.path, self.ended, self.meta = run.id, run.name, run.kind, run.path, run.ended, run.meta
    self.n_events, self.history, self.warnings = run.n_events, run.history, run.warnings
    self.source, self.stamp, self._summary = source, stamp, run.summary()

  @property
  def seq(self) -> int: return len(self.history)

  def summary(self) -> dict[str, Any]: return self._summary

def _trim() -> None:
  """Hands freed heap pages back to the OS (glibc keeps them otherwise): RSS then falls after an eviction."""
  try:
    if (name := ctypes.util.find_library("c")) is not None: ctypes.CDLL(name).malloc_trim(0)
  except (OSError, AttributeError): pass

class RunStore:
  def __init__(self, hub: Hub):
    self.hub = hub
    self.sources: dict[int, list[str]] = {}  # run id -> the files it can be read again from
    self.viewed: dict[int, float] = {}       # run id -> when a page last asked for it (or it was loaded)
    self.stamps: dict[int, Any] = {}         # run id -> its files' (size, mtime) once complete: read again, the same?
    self._loading: dict[int, asyncio.Task[Run | None]] = {}
    self.idle_s, self.keep, self.spool_bytes = setting("TINYVIZ_RUN_IDLE_S"), max(1, int(setting("TINYVIZ_RUNS_LOADED"))), int(setting("TINYVIZ_SPOOL_MB") * 2**20)
    self.n_evicted = self.n_reloaded = 0

  def add(self, run: Run, source: list[str]) -> None:
    """run can be read again from source once it is done."""
    self.sources[run.id] = list(source)
    self.viewed[run.id] = time.monotonic()
    self.stamps.pop(run.id, None)

  def _evictable(self, rid: int, run: Any) -> bool:
    hub = self.hub
    return (isinstance(run, Run) and not run.live and rid in self.sources and rid not in hub._files and rid not in self._loading
            and all(b.cursors.get(rid, 0) >= run.seq for b in hub.browsers))

  def sweep(self) -> None:
    """Lets go of the runs nobody looked at for idle_s, and of all but the `keep` most recently viewed; then keeps the
    server's copies under the size limit."""
    now, hub = time.monotonic(), self.hub
    loaded = sorted((rid for rid, r in hub.runs.items() if self._evictable(rid, r)), key=lambda rid: self.viewed.get(rid, 0), reverse=True)
    for rid in loaded:  # complete now (a live run's copy was just closed): what it looks like when read again unchanged
      if rid not in self.stamps: self.stamps[rid] = _stamp(self.sources[rid])
    gone = [rid for i, rid in enumerate(loaded) if i >= self.keep or now - self.viewed.get(rid, 0) > self.idle_s]
    for rid in gone: self.unload(rid)
    if gone: _trim()
    self._spool_limit()

  def unload(self, rid: int) -> None:
    run = self.hub.runs[rid]
    assert isinstance(run, Run)
    self.hub.runs[rid] = Unloaded(run, self.sources[rid], self.stamps.get(rid))  # type: ignore[assignment]
    for key in [k for k in self.hub._messages if k[0] == rid]: del self.hub._messages[key]
    # its one reference cycle (a live run's timeline reads details back through the run): broken, the index is freed
    # now; left to the collector, whose full passes the server makes rare (serve.py), it was kept for many runs
    run.timeline.spill = None
    self.n_evicted += 1

  def _read(self, u: Unloaded) -> Run:
    run = Run.from_trace(u.id, u.path or u.source[0], load_group(u.source))
    run.name, run.ended = u.name, run.ended or u.ended
    if u.stamp is not None and _stamp(u.source) == u.stamp:  # the same file: the same index, so the same numbered messages
      run.history, run.warnings, run.meta = u.history, u.warnings, u.meta
    return run

  def _put(self, u: Unloaded, run: Run | None) -> Run | None:
    if run is not None and self.hub.runs.get(u.id) is u:
      self.hub.runs[u.id] = run
      self.viewed[u.id] = time.monotonic()
      self.n_reloaded += 1
    return run

  def load_now(self, rid: int) -> Run | None:
    """The run, read again here and now if it was let go (the rare paths: a page resuming an old run, a script
    reconnecting to one); None when its file cannot be read any more."""
    r = self.hub.runs.get(rid)
    if not isinstance(r, Unloaded): return r
    try: return self._put(r, self._read(r))
    except (OSError, TraceError) as e:
      print(f"tinyviz: run {rid}: cannot read {' + '.join(r.source)} again: {e}", file=sys.stderr)
      return None

  async def load(self, rid: int) -> Run | str | None:
    """The run, read again in a thread if it was let go (the event loop keeps serving meanwhile); a message saying why
    when it cannot be; None when there is no such run."""
    if (r := self.hub.runs.get(rid)) is None: return None  # (no entry kept for ids that were never runs)
    self.viewed[rid] = time.monotonic()
    if not isinstance(r, Unloaded): return r
    if (task := self._loading.get(rid)) is None:
      task = self._loading[rid] = asyncio.get_running_loop().create_task(asyncio.to_thread(self._read, r))
    try: run = await asyncio.shield(task)
    except (OSError, TraceError) as e: return f"run {rid}'s file {' + '.join(r.source)} cannot be read again: {e}"
    finally:
      if task.done(): self._loading.pop(rid, None)
    return self._put(r, run) or self.hub.runs.get(rid)  # type: ignore[return-value]

  def _spool_limit(self) -> None:
    hub, spool = self.hub, os.path.realpath(self.hub.spool_dir)
    copies = []
    for rid, run in hub.runs.items():
      if run.path and os.path.dirname(os.path.realpath(run.path)) == spool:
        try: copies.append((rid, os.path.getsize(run.path)))
        except OSError: pass
    total = sum(n for _, n in copies)
    for rid, n in copies:  # oldest first
      if total <= self.spool_bytes: break
      run = hub.runs[rid]
      if run.live or rid in hub._files or rid in self._loading: continue
      try: os.remove(run.path)  # type: ignore[arg-type]
      except OSError: continue
      total -= n
      del hub.runs[rid]
      for d in (self.sources, self.viewed, self.stamps): d.pop(rid, None)
      for key in [k for k in hub._messages if k[0] == rid]: del hub._messages[key]
      print(f"tinyviz: run {rid} ({run.name}) closed: the server's copies passed TINYVIZ_SPOOL_MB={self.spool_bytes >> 20}; "
            "the script's own trace file is its record", file=sys.stderr)
      hub.runs_changed()

RUN_PATH = re.compile(r"^/api/runs/([0-9]{1,11})(?:/|$)")
LONG_NUMBER = re.compile(r"(?:^|/)-?[0-9]{19,}(?:/|$)")

def _odd_path(path: str) -> str | None:
  """Why no run, id or file of this server can have this path (else None): a name longer than a file name can be (the
  OS refuses to even look it up), a number longer than any id (past 4,300 digits int() itself refuses)."""
  if len(path) > 4000 or any(len(p.encode("utf-8", "surrogatepass")) > 255 for p in path.split("/")):
    return f"no such path: {path[:60]!r}... is longer than any file or id here"
  if LONG_NUMBER.search(path): return f"no such path: {path[:60]!r}... holds a number longer than any id here"
  return None

class RunLoader:
  """In front of the app: a request about a run that was let go waits for it to be read again (a 404 saying why if
  its file is gone), so that no endpoint ever sees an unloaded run; now and then, idle runs are let go."""
  def __init__(self, app: ASGIApp, hub: Hub):
    self.app, self.hub = app, hub
    self._ticker: asyncio.Task[None] | None = None

  async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
    if self._ticker is None and scope["type"] in ("http", "websocket"):
      self._ticker = asyncio.get_running_loop().create_task(self._tick())
    if scope["type"] == "http":
      if (why := _odd_path(scope["path"])) is not None:
        from starlette.responses import JSONResponse
        return await JSONResponse({"error": why}, status_code=404)(scope, receive, send)
      ids = []
      if m := RUN_PATH.match(scope["path"]): ids.append(int(m.group(1)))
      elif scope["path"] == "/api/compare":
        from urllib.parse import parse_qsl
        ids += [int(v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1")) if k in ("a", "b") and v.isascii() and v.isdigit() and len(v) < 12]
      for rid in ids:
        got = await self.hub.store.load(rid)
        if isinstance(got, str):
          from starlette.responses import JSONResponse
          return await JSONResponse({"error": got}, status_code=404)(scope, receive, send)
    await self.app(scope, receive, send)

  async def _tick(self) -> None:
    while True:
      await asyncio.sleep(max(0.2, min(30.0, self.hub.store.idle_s / 4)))
      try: self.hub.store.sweep()
      except Exception as e: print(f"tinyviz: letting idle runs go failed: {e!r}", file=sys.stderr)  # never stop serving over it
