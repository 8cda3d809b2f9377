"""Our trace file: JSON Lines, one event per line after a versioned header line; written append-only as the
script runs, so a killed process leaves a file that reads back up to its last flush.

Readers never raise for damage after the header: they return the events they could read and a warning for
each thing skipped, naming its line and byte offset. `TraceError` is raised only when nothing is readable.
"""
from __future__ import annotations
import contextlib, gc, json, math, os
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterable, Iterator
import msgspec
from profiler.safefile import create_private
from profiler.limits import max_events, max_line, past
from profiler.events import FORMAT, VERSION, Event, RunEnd, Span, Counter, Marker, Flow, Checker, SchemaError, decode, header, to_json

class TraceError(ValueError):
  """The input is not a trace we can read at all; `offset` (bytes) and `line` say where, when known."""
  def __init__(self, message: str, offset: int | None = None, line: int | None = None):
    self.message, self.offset, self.line = message, offset, line
    super().__init__(_where(line, offset) + message)

@dataclass(frozen=True)
class ReadWarning:
  """Something a reader skipped or repaired, and where."""
  message: str
  offset: int | None = None
  line: int | None = None
  def __str__(self) -> str: return _where(self.line, self.offset) + self.message

def _where(line: int | None, offset: int | None) -> str:
  parts = ([f"line {line}"] if line is not None else []) + ([f"byte {offset}"] if offset is not None else [])
  return f"{', '.join(parts)}: " if parts else ""

@dataclass
class Trace:
  """What a reader returns: events in file order, warnings about what was skipped, and the input's kind."""
  events: list[Event]
  warnings: list[ReadWarning] = field(default_factory=list)
  kind: str = "tinyviz"        # "tinyviz" or "chrome"
  meta: dict[str, Any] = field(default_factory=dict)

MAX_WARNINGS = 200  # past this only a count is kept: a 1 GB file of garbage must not give 1 GB of warnings

class Warnings:
  def __init__(self) -> None: self.items, self.skipped = [], 0
  def add(self, message: str, offset: int | None = None, line: int | None = None) -> None:
    if len(self.items) < MAX_WARNINGS: self.items.append(ReadWarning(message, offset, line))
    else: self.skipped += 1
  def done(self) -> list[ReadWarning]:
    return self.items + ([ReadWarning(f"... and {self.skipped} more warnings")] if self.skipped else [])

# *** writing ***

def _finite(v: Any) -> Any:
  if isinstance(v, float): return v if math.isfinite(v) else None
  if isinstance(v, dict): return {k: _finite(x) for k, x in v.items()}
  if isinstance(v, (list, tuple)): return [_finite(x) for x in v]
  return v

_decoder = json.JSONDecoder()
_encoder = json.JSONEncoder(separators=(",", ":"), allow_nan=False, default=str)  # one instance: json.dumps(**kw) builds one per call
_msgspec = msgspec.json.Encoder(enc_hook=str)  # NaN and infinities become null, as _finite makes them

def _stdlib_line(obj: Any) -> bytes:
  """What msgspec does not encode (a string with a lone surrogate, a dict keyed by True): as the json module does."""
  if isinstance(obj, msgspec.Struct): obj = to_json(obj)  # type: ignore[arg-type]
  try: return _encoder.encode(obj).encode()
  except ValueError: return _encoder.encode(_finite(obj)).encode()

def encode_line(obj: Any) -> bytes:
  """One event (or any JSON-ready value) as one line of strict JSON, UTF-8: no NaN, anything unknown as its str()."""
  try: return _msgspec.encode(obj)
  except (TypeError, ValueError, OverflowError): return _stdlib_line(obj)  # (UnicodeEncodeError is a ValueError)

def encode_lines(objs: list[Any]) -> bytes:
  """encode_line of each, each ended by a newline: the recorder's flush, one msgspec call for the batch."""
  try: return _msgspec.encode_lines(objs)
  except (TypeError, ValueError, OverflowError): return b"".join([encode_line(o) + b"\n" for o in objs])

def encode(obj: Any) -> str:
  """encode_line as text."""
  return encode_line(obj).decode()

class TraceWriter:
  """Writes a new trace file, mode 0600, never through a link; each write() reaches the OS before it returns. An
  existing file at `path` is replaced, unless `exclusive` (a name we made up: then it is refused)."""
  def __init__(self, path: str, exclusive: bool = False):
    self.path, self.size, self.lines = path, 0, 0  # bytes and lines written so far
    self._f: BinaryIO = os.fdopen(create_private(path, exclusive), "wb")
    self.write([header()])

  def write(self, objs: list[Any], offsets: bool = False) -> list[int]:
    """Appends a line per object (an event or any JSON-ready value); with `offsets`, returns the byte offset of each
    (a reader can seek to the line)."""
    if not objs: return []
    if not offsets: return self._append(encode_lines(objs), len(objs))
    return self.write_lines([encode_line(o) for o in objs], offsets)

  def write_lines(self, lines: list[bytes], offsets: bool = False) -> list[int]:
    """Appends lines already encoded (JSON values of one line each, no newline); offsets as write()."""
    if not lines: return []
    where = []
    if offsets:
      at = self.size
      for line in lines: where.append(at); at += len(line) + 1
    self._append(b"\n".join(lines) + b"\n", len(lines))
    return where

  def _append(self, data: bytes, n: int) -> list[int]:
    self._f.write(data)
    self._f.flush()  # into the page cache: survives SIGKILL of this process (fsync would only add power loss)
    self.size += len(data); self.lines += n
    return []

  def close(self) -> None: self._f.close()

# *** reading ***

@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
  """No cyclic garbage collection while a reader runs: it makes no cycles, but the millions of objects it keeps would
  be walked again and again as they pile up (a third of the time of reading a Chrome trace). After, what it made
  goes straight to the oldest generation (freeze, unfreeze: no walk), as if it had been collected while read."""
  was = gc.isenabled()
  gc.disable()
  try: yield
  finally:
    if was:
      if gc.get_freeze_count() == 0: gc.freeze(); gc.unfreeze()  # not when a caller keeps objects frozen
      gc.enable()

NO_ARGS: dict[str, Any] = {}  # the args of every span read without any: treat as read-only, like the events

class Shared:
  """One object per distinct string (track, name, category, args key) among the events of one read: a million spans
  of a few kernels then hold a few strings, not a million copies of each. Past `limit` distinct strings new ones
  are kept as they are, so that unique names cost no more than they did."""
  def __init__(self, limit: int = 1 << 16) -> None:
    self.strs: dict[str, str] = {}
    self.limit = limit

  def s(self, v: str) -> str:
    if (got := self.strs.get(v)) is not None: return got
    if len(self.strs) < self.limit: self.strs[v] = v
    return v

  def args(self, d: dict[str, Any]) -> dict[str, Any]:
    if not d: return NO_ARGS
    get = self.strs.get  # per key of every span: the lookup that almost always hits, without a Python call
    return {get(k) or self.s(k): v for k, v in d.items()}

  def event(self, ev: Event) -> None:
    if type(ev) is Span: ev.track, ev.name, ev.cat, ev.args = self.s(ev.track), self.s(ev.name), self.s(ev.cat), self.args(ev.args)
    elif type(ev) is Counter: ev.track, ev.name = self.s(ev.track), self.s(ev.name)
    elif type(ev) is Marker: ev.name = self.s(ev.name)
    elif type(ev) is Flow: ev.track, ev.name, ev.cat = self.s(ev.track), self.s(ev.name), self.s(ev.cat)

def _whole_json(raw: bytes) -> bool:
  try:
    text = raw.decode().strip()
    return _decoder.raw_decode(text)[1] == len(text)
  except (ValueError, RecursionError): return False

_LINES = msgspec.json.Decoder(Event)  # type: ignore[arg-type]

class JsonlDecoder:
  """Turns our trace's bytes into events, fed in pieces (a whole file, or what a live file gained since).
  With `share`, equal strings of the events become one object (see Shared): for a read, not a file followed forever."""
  def __init__(self, share: bool = False) -> None:
    self.warnings, self.offset, self.line = Warnings(), 0, 0
    self.version: int | None = None
    self.ended = False
    self._pieces: list[bytes] = []  # the line not yet ended
    self._plen = 0
    self._skip: int | None = None  # bytes dropped so far of a line past the limit
    self._max_line = max_line()
    self._checker = Checker()
    self._shared = Shared() if share else None

  def feed(self, data: bytes, final: bool = False) -> list[Event]:
    out: list[Event] = []
    if self._skip is not None:  # the rest of a line past the limit: dropped as it arrives
      if (nl := data.find(b"\n")) < 0 and not final: self._skip += len(data); return out
      self.offset += self._skip + (nl + 1 if nl >= 0 else len(data))
      data, self._skip = (data[nl + 1:] if nl >= 0 else b""), None
    if b"\n" not in data and not final:  # inside a long line: held in pieces, joined once its end arrives
      self._pieces.append(data); self._plen += len(data)
      if self._plen > self._max_line:
        self.line += 1
        self.warnings.add(f"a line longer than TINYVIZ_MAX_LINE_MB={self._max_line >> 20} skipped (raise it to read the line)",
                          self.offset, self.line)
        self._skip, self._pieces, self._plen = self._plen, [], 0
      return out
    data, start = b"".join(self._pieces) + data, self.offset
    lines = data.split(b"\n")
    last = lines.pop()  # incomplete last line: wait for more, or read / report it when final
    self._pieces, self._plen = [last], len(last)
    if self.version is None and lines:  # the header first
      self.line += 1
      self._line(lines[0], start, out)
      start += len(lines[0]) + 1
      data, lines = data[len(lines[0]) + 1:], lines[1:]
    if self.version is not None and lines and self._lines_at_once(data[:len(data) - len(last)], lines, start, out):
      start += len(data) - len(last)
    else:
      for raw in lines:
        self.line += 1
        self._line(raw, start, out)
        start += len(raw) + 1
    self.offset = start
    if final and last.strip():
      self.line += 1
      if self.version is None or _whole_json(last): self._line(last, start, out)  # a last event written without its \n
      else: self.warnings.add(f"truncated last line ({len(last)} bytes) ignored", start, self.line)
    if final: self._pieces, self._plen = [], 0
    return out

  def _lines_at_once(self, body: bytes, lines: list[bytes], start: int, out: list[Event]) -> bool:
    """Every whole line of a piece decoded in one msgspec call, then checked; False (nothing done) when a line is blank
    or does not decode: the line by line path then says which and why."""
    try: events = _LINES.decode_lines(body)
    except (msgspec.DecodeError, RecursionError): return False
    # one event per line, or the line numbers would be off: decode_lines skips blank lines and takes two values on one
    if len(events) != len(lines) or not all(lines) or any(map(bytes.isspace, lines)): return False
    check, shared, first = self._checker.check, self._shared, self.line + 1
    for i, ev in enumerate(events):
      try: check(ev)
      except SchemaError as e:
        self.warnings.add(f"{e}; skipped", start + sum(len(l) + 1 for l in lines[:i]), first + i)
        continue
      if type(ev) is RunEnd: self.ended = True
      if shared is not None: shared.event(ev)
      out.append(ev)
    self.line += len(lines)
    return True

  def _line(self, raw: bytes, offset: int, out: list[Event]) -> None:
    if self.version is not None:  # an event: decoded and checked against the schema by msgspec, in one step
      try: ev = self._checker.check(decode(raw))
      except SchemaError as e: return self.warnings.add(f"{e}; skipped", offset, self.line)
      except (msgspec.DecodeError, RecursionError): ev = self._slow_line(raw, offset)  # not strict JSON, or blank: worded as before
      if ev is None: return
      if type(ev) is RunEnd: self.ended = True
      if self._shared is not None: self._shared.event(ev)
      out.append(ev)
      return
    if not raw.strip(): return
    obj = self._json(raw, offset)
    if obj is not None: self._header(obj, offset)

  def _json(self, raw: bytes, offset: int) -> Any:
    try:
      text = raw.decode().strip()
      obj, end = _decoder.raw_decode(text)  # json.loads(bytes) would sniff the encoding of every line
      if end != len(text): raise ValueError(f"extra data after the object at column {end + 1}")
      return obj
    except (ValueError, RecursionError) as e:
      if self.version is None: raise TraceError(f"not a {FORMAT} file: {e}", offset, self.line) from None
      self.warnings.add(f"invalid JSON, line skipped: {e}", offset, self.line)
      return None

  def _slow_line(self, raw: bytes, offset: int) -> Event | None:
    """A line msgspec did not take as JSON: blank, or what only the json module reads (NaN, surrounding blanks, ...)."""
    if not raw.strip(): return None
    if (obj := self._json(raw, offset)) is None: return None
    try: return self._checker.event(obj)
    except SchemaError as e: self.warnings.add(f"{e}; skipped", offset, self.line); return None

  def _header(self, obj: Any, offset: int) -> None:
    if not isinstance(obj, dict) or obj.get("format") != FORMAT or type(obj.get("version")) is not int:
      raise TraceError(f"not a {FORMAT} file: first line is not its header", offset, self.line)
    if obj["version"] > VERSION:
      raise TraceError(f"trace format version {obj['version']} is newer than this reader's {VERSION}", offset, self.line)
    self.version = obj["version"]

CHUNK = 1 << 20  # bytes read at a time

def read_jsonl(data: bytes) -> Trace: return read_jsonl_chunks(data[i:i + CHUNK] for i in range(0, len(data), CHUNK))

def read_jsonl_chunks(chunks: Iterable[bytes]) -> Trace:
  """Reads our trace arriving in chunks of bytes, a line at a time: only a chunk and the events are held."""
  dec = JsonlDecoder(share=True)
  events: list[Event] = []
  with paused_gc():
    cap, capped = max_events(), False
    for chunk in chunks:
      events += dec.feed(chunk)
      if len(events) > cap:
        del events[cap:]
        dec.warnings.add(past("TINYVIZ_MAX_EVENTS", "the event count"), dec.offset); capped = True
        break
    if not capped: events += dec.feed(b"", final=True)
  if dec.version is None: raise TraceError(f"empty input, no {FORMAT} header")
  if not dec.ended and not capped: dec.warnings.add("no run_end event: the process was killed or is still running")
  return Trace(events, dec.warnings.done(), "tinyviz", {"version": dec.version})

def is_jsonl_trace(data: bytes) -> bool:
  """Whether the bytes start like our trace (a loose test, so a damaged header still gets our reader's message)."""
  first = data[:400].lstrip().split(b"\n")[0]
  return first.startswith(b"{") and b'"format"' in first and FORMAT.encode() in first

class TraceTail:
  """Follows a trace file that is still being written: each poll() returns the events appended since the last."""
  def __init__(self, path: str):
    self.path, self._pos, self._dec = path, 0, JsonlDecoder()

  @property
  def warnings(self) -> list[ReadWarning]: return self._dec.warnings.done()

  def poll(self) -> list[Event]:
    with open(self.path, "rb") as f:
      f.seek(self._pos)
      data = f.read()
    self._pos += len(data)
    return self._dec.feed(data)
