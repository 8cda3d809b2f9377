"""The live part of the server: runs come in (files at start, scripts over `/ingest`), browsers on `/ws` get the
run list and each run's numbered `events` messages.

Browsers are served by pulling, not pushing: each browser has a cursor per run (the last seq it was sent) and
one sender task that sends what lies beyond it, one message at a time. Ingest only appends a delta to the run
and wakes the senders, so it never waits on a browser, and a slow browser holds no queue at all: it falls
behind, then catches up from the deltas (a `resume` is the same thing: moving the cursor back). A browser
whose socket takes longer than SEND_TIMEOUT_S to take one message is disconnected; it reconnects and resumes.
"""
from __future__ import annotations
import asyncio, json, os, shutil, time
from collections import OrderedDict
from typing import Any
import msgspec
from starlette.websockets import WebSocket, WebSocketDisconnect
from profiler.tracefile import TraceWriter, encode
from viz.server.run import Run
from viz.server.runstore import RunStore, Unloaded

SEND_TIMEOUT_S = 10.0
MESSAGE_CACHE = 512  # encoded `events` messages kept for the browsers that are behind
BROWSER_MESSAGE_MAX = 64 << 10  # characters of one message from a page (a `resume` is ~40)

def _dumps(obj: Any) -> str: return encode(obj)  # strict JSON: a browser's JSON.parse rejects NaN

class Browser:
  def __init__(self, ws: WebSocket, cursors: dict[int, int]):
    self.ws, self.cursors = ws, cursors
    self.runs_version = -1  # the run list is sent first
    self.replies: list[str] = []
    self.wake = asyncio.Event()
    self.wake.set()

INGEST_SLICE = 250  # events decoded or indexed between two yields to the event loop: ~10 ms on an idle core

class Hub:
  def __init__(self, spool_dir: str):
    self.spool_dir = spool_dir
    self.runs: dict[int, Run] = {}
    self.browsers: set[Browser] = set()
    self.runs_version = 0
    self.last_activity = time.monotonic()
    self.n_ingest = 0
    self._keys: dict[str, int] = {}   # X-Tinyviz-Run key -> run id: a reconnecting script continues its run
    self._files: dict[int, TraceWriter] = {}
    self._messages: OrderedDict[tuple[int, int], str] = OrderedDict()
    self.store = RunStore(self)  # lets go of runs nobody looks at; reads them again on demand

  def new_run_id(self) -> int: return max(self.runs, default=0) + 1

  def add_run(self, run: Run) -> None:
    self.runs[run.id] = run
    self.runs_changed()

  def runs_changed(self) -> None:
    self.runs_version += 1
    self.wake_all()

  def wake_all(self) -> None:
    for b in self.browsers: b.wake.set()

  def runs_message(self) -> str: return _dumps({"type": "runs", "runs": [r.summary() for r in self.runs.values()]})

  def events_message(self, run: Run, seq: int) -> str:
    key = (run.id, seq)
    if (m := self._messages.get(key)) is None:
      m = self._messages[key] = _dumps(run.events_message(seq))
      if len(self._messages) > MESSAGE_CACHE: self._messages.popitem(last=False)
    return m

  # *** browsers: WS /ws ***

  async def browser(self, ws: WebSocket) -> None:
    await ws.accept()
    b = Browser(ws, {rid: r.seq for rid, r in self.runs.items()})  # the page fetches the snapshot over HTTP
    self.browsers.add(b)
    self.last_activity = time.monotonic()
    reader = asyncio.create_task(self._browser_reader(b))
    try:
      while not reader.done():
        await b.wake.wait()
        b.wake.clear()
        sent = 0
        while (msg := self._next_message(b)) is not None:
          try: await asyncio.wait_for(ws.send_text(msg), SEND_TIMEOUT_S)
          except asyncio.TimeoutError:  # a browser that does not read: drop it; it reconnects and resumes
            await _close(ws, 1013, "too slow; reconnect and resume")
            return
          sent += 1
          if sent % 16 == 0: await asyncio.sleep(0)  # a page catching up must not hold up ingest and the others
    except (WebSocketDisconnect, RuntimeError, OSError): pass  # the page went away while we sent
    finally:
      self.browsers.discard(b)
      self.last_activity = time.monotonic()
      reader.cancel()

  def _next_message(self, b: Browser) -> str | None:
    if b.replies: return b.replies.pop(0)
    if b.runs_version != self.runs_version:
      b.runs_version = self.runs_version
      return self.runs_message()
    for rid, run in self.runs.items():  # in run order; each message moves one cursor by one
      c = b.cursors.setdefault(rid, 0)
      if c < run.seq:
        if isinstance(run, Unloaded) and (run := self.store.load_now(rid)) is None:  # type: ignore[assignment]
          b.cursors[rid] = self.runs[rid].seq  # its file is gone: nothing more to send of it
          continue
        b.cursors[rid] = c + 1
        return self.events_message(run, c + 1)
    return None

  async def _browser_reader(self, b: Browser) -> None:
    try:
      while True:
        reply = self._browser_request(b, await _receive_text(b.ws))
        if reply is not None: b.replies.append(_dumps(reply))
        b.wake.set()
    except (WebSocketDisconnect, RuntimeError, OSError): pass
    finally: b.wake.set()  # lets the sender loop see that the reader is done

  def _browser_request(self, b: Browser, data: str | None) -> dict[str, Any] | None:
    """A `resume` moves the run's cursor back to the seq the page has; anything else gets an error."""
    if not isinstance(data, str): return _error("binary frames are not accepted; send JSON text")
    if len(data) > BROWSER_MESSAGE_MAX:  # a page only ever sends a small `resume`: a big one is not decoded at all
      return _error(f"message of {len(data)} characters dropped unread; the most a page may send is {BROWSER_MESSAGE_MAX}")
    try: msg = json.loads(data)
    except (ValueError, RecursionError) as e: return _error(f"not JSON: {e}")
    if not isinstance(msg, dict): return _error("expected a JSON object")
    if msg.get("type") != "resume": return _error(f"unknown message type {msg.get('type')!r}; expected 'resume'")
    rid, seq = msg.get("run"), msg.get("seq")
    if type(rid) is not int or type(seq) is not int: return _error("resume needs integer 'run' and 'seq'")
    run = self.runs.get(rid)
    if run is None: return _error(f"no run {rid}")
    if not 0 <= seq <= run.seq: return _error(f"run {rid} has messages 1..{run.seq}; cannot resume after {seq}")
    b.cursors[rid] = seq
    return None

  # *** scripts: WS /ingest ***

  async def ingest(self, ws: WebSocket) -> None:
    key = ws.headers.get("x-tinyviz-run") or None
    await ws.accept()
    self.n_ingest += 1
    run = self.store.load_now(self._keys[key]) if key in self._keys else None
    if run is not None and not run.live:
      run.live = True
      self.runs_changed()
    try:
      # hello: how much of this run the server has, so that a reconnecting script resends only the rest
      await ws.send_text(_dumps({"type": "ack", "n": run.n_events if run else 0, "run": run.id if run else None,
                                 "browsers": len(self.browsers)}))
      while True:
        data = await _receive_text(ws)
        self.last_activity = time.monotonic()
        run, reply = await self._ingest_frame(run, key, data)
        await ws.send_text(_dumps(reply))
    except (WebSocketDisconnect, RuntimeError, OSError): pass
    finally:
      self.n_ingest -= 1
      self.last_activity = time.monotonic()
      if run is not None:  # (a run_end in the last frame has set live False already: its copy is closed here too)
        if run.ended and (f := self._files.pop(run.id, None)) is not None: f.close()
        if run.live:
          run.live = False
          self.runs_changed()
        self.store.sweep()

  async def _ingest_frame(self, run: Run | None, key: str | None, data: str | None) -> tuple[Run | None, dict[str, Any]]:
    if not isinstance(data, str): return run, _error("binary frames are not accepted; send a JSON array as text")
    # the array is cut into its elements' JSON texts (msgspec, in C: a 15 MiB frame in ~30 ms); each element is then
    # decoded and checked by the one decoder, and written to the server's copy as the text it came as
    try: raws = _FRAME.decode(data)
    except msgspec.ValidationError: return run, _error("frame dropped: expected a JSON array of events")
    except (msgspec.DecodeError, RecursionError) as e: return run, _error(f"frame dropped: not JSON: {e}")
    if run is None:
      if not raws: return run, {"type": "ack", "n": 0, "run": None}
      try: first = msgspec.json.decode(raws[0])
      except (msgspec.DecodeError, RecursionError): first = None
      if not isinstance(first, dict) or first.get("type") != "run":
        return run, _error("frame dropped: the first batch of a run must start with its `run` event")
      run = self._new_live_run(first, key)
    for i in range(0, len(raws), INGEST_SLICE):  # in slices, letting other requests in between: no long stall
      if i: await asyncio.sleep(0)
      part, first_line, offsets = [_one_line(r) for r in raws[i:i + INGEST_SLICE]], None, None
      if (f := self._files.get(run.id)) is not None:  # the server's copy: every event received, as received
        first_line = f.lines + 1
        try: offsets = f.write_lines(part, offsets=True)
        except OSError as e:
          run.warnings.add(f"cannot write the server's copy of the trace: {e}; span details stay in memory")
          self._files.pop(run.id).close()
          self.store.sources.pop(run.id, None)  # the copy is incomplete: this run stays in memory
          first_line = None
      run.add(part, first_line, offsets)
    if run.commit() is not None: self.wake_all()
    if run.ended:
      run.live = False
      self.runs_changed()
    return run, {"type": "ack", "n": run.n_events, "run": run.id}

  def _new_live_run(self, first: dict[str, Any], key: str | None) -> Run:
    rid = self.new_run_id()
    script = first.get("script") if isinstance(first.get("script"), str) else ""
    name = f"{os.path.basename(script) or 'python'} (pid {first.get('pid')})"
    path = os.path.join(self.spool_dir, f"run{rid}-{os.path.splitext(os.path.basename(script))[0] or 'python'}.tinyviz.jsonl")
    try: self._files[rid] = TraceWriter(path, exclusive=True)
    except OSError: path = None  # type: ignore[assignment]
    run = Run(rid, name, "tinyviz", path, live=True)
    if path is not None: run.timeline.spill = run.read_args  # span details come back from the server's copy
    if key: self._keys[key] = rid
    if path is not None: self.store.add(run, [path])
    self.add_run(run)
    return run

  def close(self) -> None:
    """At exit: the server's copies of live runs go (each script's own trace file is the record it printed)."""
    for f in self._files.values(): f.close()
    self._files.clear()
    shutil.rmtree(self.spool_dir, ignore_errors=True)

_FRAME = msgspec.json.Decoder(list[msgspec.Raw])  # an /ingest frame: a JSON array, each element left as its text

def _one_line(raw: msgspec.Raw) -> bytes:
  """An element's JSON text as one line of the server's copy (JSON has newlines only as blanks between tokens)."""
  b = bytes(raw)
  return b.replace(b"\n", b" ") if b"\n" in b else b

async def _receive_text(ws: WebSocket) -> str | None:
  """The next text frame, or None for a binary one (answered with an error: both sides speak JSON text). A closed
  connection raises WebSocketDisconnect."""
  try: return await ws.receive_text()
  except KeyError: return None  # starlette's receive_text finds no "text" in a binary frame's message

def _error(message: str) -> dict[str, Any]: return {"type": "error", "message": message}

async def _close(ws: WebSocket, code: int, reason: str) -> None:
  try: await ws.close(code, reason)
  except (RuntimeError, OSError): pass
