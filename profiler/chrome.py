"""Chrome trace-event JSON, out and in (the format of chrome://tracing, Perfetto, PyTorch's and JAX's profilers).

Export: our spans become X events on one process per device and one thread per track, counters C events,
markers global i events. Import accepts what is found in the wild: array or object form, an unterminated
array, trailing commas and `{}`, string pids/tids, huge tids, overlapping X events (all kept), B/E pairs,
async b/e pairs, flows, counters and metadata names. A syntax error stops reading there with a warning that
names its byte offset and line; the events before it are returned. The text is read as it arrives, the whole events
of each window of it decoded in one call (one at a time where that fails: damage gets the same warnings either way),
each turned into ours at once: tracks are named at the end, as metadata may come after the events it names.
"""
from __future__ import annotations
import codecs, gzip, json, re
from typing import Any, Generator, Iterable, Iterator
from profiler.events import VERSION, Event, Run, Kernel, Span, Counter, Marker, Flow, SchemaError, from_json, to_json
from profiler.limits import max_events, max_line, past
from profiler.tracefile import CHUNK, MAX_WARNINGS, ReadWarning, Shared, Trace, TraceError, Warnings, encode, paused_gc

# *** export ***

def to_chrome(events: list[Event]) -> dict[str, Any]:
  """Our events as a Chrome trace object; times are microseconds from the run's start."""
  run = next((e for e in events if isinstance(e, Run)), None)
  times = [t for e in events for t in _times(e)]
  origin = run.clock_ns if run is not None else (min(times) if times else 0)
  kernels = {e.id: e for e in events if isinstance(e, Kernel)}
  pids: dict[str, int] = {}
  tids: dict[str, tuple[int, int]] = {}
  out: list[dict[str, Any]] = []
  def us(t: int) -> float: return (t - origin) / 1000

  def where(track: str) -> tuple[int, int]:
    if track not in tids:
      device = track.split("/")[0]
      if device not in pids:
        pids[device] = len(pids) + 1
        out.append({"ph": "M", "name": "process_name", "pid": pids[device], "tid": 0, "args": {"name": device}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": pids[device], "tid": 0, "args": {"sort_index": pids[device]}})
      tids[track] = (pids[device], len(tids) + 1)
      out.append({"ph": "M", "name": "thread_name", "pid": pids[device], "tid": tids[track][1], "args": {"name": track}})
    return tids[track]

  for e in events:
    if isinstance(e, Span):
      pid, tid = where(e.track)
      args = dict(e.args)
      if e.cat == "kernel" and (k := kernels.get(args.get("kernel"))) is not None:  # type: ignore[arg-type]
        args["kernel_info"] = {"id": k.id, "name": k.name, "device": k.device, "flops": k.flops, "bytes": k.bytes,
                               "global_size": list(k.global_size), "local_size": list(k.local_size)}
      out.append({"ph": "X", "name": e.name, "cat": e.cat, "pid": pid, "tid": tid, "ts": us(e.start_ns),
                  "dur": max(0, e.end_ns - e.start_ns) / 1000, "args": args})
    elif isinstance(e, Counter):
      pid, tid = where(e.track)
      out.append({"ph": "C", "name": e.name, "pid": pid, "tid": tid, "ts": us(e.ts_ns), "args": {e.name: e.value}})
    elif isinstance(e, Marker):
      out.append({"ph": "i", "s": "g", "name": e.name, "pid": 0, "tid": 0, "ts": us(e.ts_ns)})
    elif isinstance(e, Flow):
      pid, tid = where(e.track)
      out.append({"ph": e.phase, "id": e.id, "name": e.name, "cat": e.cat, "pid": pid, "tid": tid, "ts": us(e.ts_ns),
                  **({"bp": "e"} if e.phase == "f" else {})})
  other = {"version": VERSION, "clock_origin_ns": origin, "run": to_json(run) if run is not None else None}
  # metadata first: a reader of a damaged file then still knows the clock origin for the events it keeps
  return {"otherData": {"tinyviz": other}, "displayTimeUnit": "ns", "traceEvents": out}

def _times(e: Event) -> tuple[int, ...]:
  if isinstance(e, Span): return (e.start_ns,)
  if isinstance(e, (Counter, Marker, Flow)): return (e.ts_ns,)
  return ()

def write_chrome(events: list[Event], path: str) -> None:
  """Writes a Chrome trace; gzipped when path ends in .gz."""
  data = encode(to_chrome(events)).encode()  # strict JSON: Perfetto rejects NaN
  if path.endswith(".gz"): data = gzip.compress(data)
  with open(path, "wb") as f: f.write(data)

# *** import: JSON text arriving in chunks -> raw event objects, one at a time, tolerating damage ***

_WS = re.compile(r"[ \t\r\n]*")

def _back_ws(text: str, i: int, j: int) -> int:
  """The index after the last character before j (and after i) that is not whitespace."""
  while j > i and text[j - 1] in " \t\r\n": j -= 1
  return j

def _maybe_cut(e: json.JSONDecodeError, n: int) -> bool:
  # what a value cut off by the end of the text looks like: an error at (or a literal or number's length before) the
  # end, or a string still open; anything else is a real syntax error, the same one the whole text would give
  return e.pos >= n - 16 or e.msg.startswith("Unterminated string")

class _Scanner:
  """A forgiving reader of a JSON array or object whose text arrives in chunks; stops at the first syntax error and
  keeps what came before. Holds a window of the text: what is not yet decoded, and the chunk it came in."""
  def __init__(self, chunks: Iterable[bytes], w: Warnings):
    self.chunks, self.w, self.dec = iter(chunks), w, json.JSONDecoder()
    self.scan_once = self.dec.scan_once
    self.max_value = max_line()
    self.lenient = json.JSONDecoder(parse_int=lambda t: int(t) if len(t) < 4300 else float(t))
    self.utf8 = codecs.getincrementaldecoder("utf-8")("surrogateescape")  # keeps one char per bad byte: offsets stay exact
    self.text, self.eof = "", False
    self.base, self.line0 = 0, 1  # byte offset and line number of text[0]
    self.top: dict[str, Any] = {}  # the document's keys besides traceEvents, filled as they are read
    self.stopped = False
    self.unbatched = ""  # the window batch() last tried: the rest of it goes one event at a time

  def fill(self, i: int, at_least: int = 1) -> int:
    """Forgets the text before i and appends at least `at_least` characters more, unless the input ends; returns i's new index."""
    done = self.text[:i]
    self.base += len(done) if self.text.isascii() else len(done.encode("utf-8", "surrogateescape"))
    self.line0 += done.count("\n")
    parts, got = [self.text[i:]], 0
    while got < at_least and not self.eof:
      chunk = next(self.chunks, None)
      if chunk is None: self.eof = True
      parts.append(self.utf8.decode(chunk if chunk is not None else b"", final=chunk is None))
      got += len(parts[-1])
    self.text = "".join(parts)
    return 0

  def ws(self, i: int) -> int:
    """Index of the next character that is not whitespace; len(text) only at the end of the input."""
    while (i := _WS.match(self.text, i).end()) >= len(self.text) and not self.eof: i = self.fill(i)  # type: ignore[union-attr]
    return i

  def byte(self, i: int) -> int: return self.base + len(self.text[:i].encode("utf-8", "surrogateescape"))

  def fail(self, what: str, i: int) -> None:
    self.w.add(f"{what}; stopped reading here, everything before it kept", self.byte(i), self.line0 + self.text.count("\n", 0, i))
    self.stopped = True

  def value(self, i: int) -> tuple[Any, int]:
    while True:
      try:
        v, end = self.scan_once(self.text, i)  # what raw_decode calls, without its wrapper: this runs per event
        # a number near the end may go on in the next chunk (12|34, 1|.5, 1|e5); anything else ends itself
        if self.eof or type(v) not in (int, float) or end < len(self.text) - 16: return v, end
      except StopIteration as stop:  # scan_once's way to say "Expecting value"
        if self.stop_at(json.JSONDecodeError("Expecting value", self.text, stop.value)): return None, stop.value
      except json.JSONDecodeError as e:
        if self.stop_at(e): return None, e.pos
      except ValueError:  # an int of more digits than Python converts (4,300): read that value with such ints as floats
        try: v, end = self.lenient.scan_once(self.text, i)
        except (StopIteration, ValueError, RecursionError): v, end = None, -1  # damaged too, or cut: more text, or stop
        if end >= 0 and (self.eof or end < len(self.text) - 16):
          self.w.add("a number of more than 4,300 digits read as a float", self.byte(i))
          return v, end
        if end < 0 and self.eof:
          self.fail("invalid JSON", i)
          return None, i
      except RecursionError:
        self.fail("JSON nested too deeply", i)
        return None, i
      if len(self.text) - i > self.max_value:
        self.fail(past("TINYVIZ_MAX_LINE_MB", "one event's text"), i)
        return None, i
      i = self.fill(i, len(self.text) - i)  # at least double what the value has so far: no quadratic retries

  def stop_at(self, e: json.JSONDecodeError) -> bool:
    """A syntax error stops reading, unless it may be only where this chunk ends."""
    if not self.eof and _maybe_cut(e, len(self.text)): return False
    self.fail(f"invalid JSON ({e.msg})", e.pos)
    return True

  def array(self, i: int) -> Generator[tuple[list[Any], bool], None, int]:
    """Yields the array's elements, in lists: (a batch, True) or ([one], False); returns the index after it."""
    n, after_value = 0, False  # a value must be followed by ',' or ']'
    while True:
      if (i := self.ws(i)) >= len(self.text):
        self.w.add(f"unterminated array: the file ends after {n} events (a trace cut short)", self.byte(i))
        return i
      c = self.text[i]
      if c == "]": return i + 1
      if c == ",": i, after_value = i + 1, False; continue  # also skips trailing and doubled commas
      if after_value:
        self.fail("expected ',' or ']' between events", i)
        return i
      if c == "{" and (got := self.batch(i)) is not None:
        vs, i = got
        n, after_value = n + len(vs), True
        yield vs, True
        continue
      v, i = self.value(i)
      if self.stopped: return i
      n, after_value = n + 1, True
      yield [v], False

  def batch(self, i: int) -> tuple[list[Any], int] | None:
    """The events from i up to the last one seen whole in this window, decoded in one call: per-event Python is most
    of a big trace's time. Only where the cut is sure to end an event (the text up to it parses as one array);
    otherwise None, for the rest of this window, and the caller goes one event at a time, whose warnings are exact."""
    text, j, tries = self.text, len(self.text), 3
    if text is self.unbatched: return None
    self.unbatched = text  # one call per window: after a batch what is left is the event the window's end cut
    for _ in range(16):  # each '{' from the end that opens an event: after "}," (an inner one follows ':' or '[')
      if (j := text.rfind("{", i + 1, j)) < 0: return None
      if (k := _back_ws(text, i, j)) <= i + 1 or text[k - 1] != "," or text[(cut := _back_ws(text, i, k - 1)) - 1] != "}": continue
      try:
        vs, end = self.scan_once(whole := "[" + text[i:cut] + "]", 0)
        return (vs, cut) if end == len(whole) else None  # else the array ended before the cut (other keys follow)
      except json.JSONDecodeError as e:
        # a cut inside an event (its args hold "}, {") fails at the end: try the '{' before; anything else is damage
        if (tries := tries - 1) == 0 or not (e.pos >= len(whole) - 1 or e.msg.startswith("Unterminated string")): return None
      except (StopIteration, RecursionError, ValueError): return None  # ValueError: a huge int; one at a time says where
    return None

  def events(self) -> Iterator[tuple[list[Any], bool]]:
    """The trace's events from the array form or the object form's traceEvents: lists of them, each with whether it
    was decoded as a batch (then equal keys in it are one str, json's memo: no need to share them again)."""
    while not self.text and not self.eof: self.fill(0)
    start = self.byte(bom := 1 if self.text.startswith("\ufeff") else 0)  # after a BOM
    i = self.ws(bom)
    if self.text.startswith("[", i): return (yield from self.array(i + 1))
    if not self.text.startswith("{", i): raise self.not_a_trace(i, start)
    i += 1
    while not self.stopped:
      if (i := self.ws(i)) >= len(self.text): self.w.add("unterminated object: the file ends early", self.byte(i)); break
      if self.text[i] == "}": break
      if self.text[i] == ",": i += 1; continue
      key, i = self.value(i)
      if self.stopped: break
      i = self.ws(i)
      if not isinstance(key, str) or not self.text.startswith(":", i): self.fail("expected a \"key\": value", i); break
      i = self.ws(i + 1)
      if key == "traceEvents" and self.text.startswith("[", i): i = yield from self.array(i + 1)
      else:
        v, i = self.value(i)
        if self.stopped: break
        if key == "traceEvents": self.w.add("traceEvents is not an array; ignored")
        else: self.top[key] = v

  def not_a_trace(self, i: int, start: int) -> TraceError:
    i = self.fill(i, CHUNK)  # a small document whole, to say what it is
    try: doc, end = self.dec.raw_decode(self.text, i)
    except (ValueError, RecursionError): doc, end = None, -1
    if end >= 0 and self.eof and not self.text[end:].strip(" \t\r\n"):
      return TraceError(f"not a Chrome trace: the JSON document is a {type(doc).__name__}", start, 1)
    return TraceError("not a Chrome trace: expected '[' or '{'", self.byte(i), 1)

# *** import: raw event objects -> our events ***

def _key(v: Any) -> str:
  # pids/tids come as ints, floats, strings or are missing: one key per distinct value as a person reads it
  if isinstance(v, float) and v.is_integer(): v = int(v)
  if isinstance(v, (int, str)) and not isinstance(v, bool): return str(v)
  return "" if v is None else json.dumps(v, sort_keys=True, default=str)

I64 = 2**63  # times are int64 nanoseconds from here on (the timeline's columns)

def _ns(v: Any) -> int:
  t = v if type(v) is float else float(v)
  if t - t != 0: raise ValueError(f"timestamp {v!r} is not finite")  # inf - inf and nan - nan are nan
  return round(t * 1000)

def _ours(top: dict[str, Any]) -> dict[str, Any] | None:
  ours = top.get("otherData", {}).get("tinyviz") if isinstance(top.get("otherData"), dict) else None
  return ours if isinstance(ours, dict) else None

# Until every name is known an event's track is a key: ("thread", pid, tid), ("counter", pid, tid), ("process", pid)
# or ("async", pid); one tuple per distinct key, shared by its events, replaced by the track's name at the end.
TrackKey = tuple[str, ...]

class _Importer:
  def __init__(self, top: dict[str, Any], w: Warnings):
    self.top, self.w, self.out = top, w, []
    self.ours: dict[str, Any] | None = None
    self.origin = 0
    self.pnames: dict[str, str] = {}
    self.tnames: dict[tuple[str, str], str] = {}
    self.keys: dict[TrackKey, TrackKey] = {}
    self.int_threads: dict[tuple[int, int], TrackKey] = {}
    self.shared = Shared()
    self.open: dict[tuple[str, ...], list[tuple[str, TrackKey, int, dict[str, Any]]]] = {}
    self.kernels: set[int] = set()
    self.unsupported: dict[str, int] = {}
    self.last_ns = 0
    self.processes: dict[str, str] = {}  # thread track name -> its process's name (end())
    self.keys_shared = False  # whether the events now read share their keys already (decoded in a batch)

  def begin(self) -> None:
    """The keys before the events are known: is this our own export (tracks, absolute times, kernels)?"""
    self.ours = _ours(self.top)
    origin = self.ours.get("clock_origin_ns", 0) if self.ours else 0
    self.origin = origin if type(origin) is int and -2**62 < origin < 2**62 else 0

  def ts(self, e: dict[str, Any]) -> int:
    t = _ns(e["ts"]) + self.origin
    if not -I64 <= t < I64: raise OverflowError(f"ts {e['ts']!r} is {t} ns, beyond what 64 bits hold (a unit mix-up?)")
    if t > self.last_ns: self.last_ns = t
    return t

  def key(self, *k: str) -> TrackKey: return self.keys.setdefault(k, k)
  def thread(self, e: dict[str, Any]) -> TrackKey:
    p, t = e.get("pid"), e.get("tid")
    if type(p) is int and type(t) is int:  # the usual case, looked up by value (bools, equal to ints, are not ints here)
      if (k := self.int_threads.get((p, t))) is None: k = self.int_threads[(p, t)] = self.key("thread", str(p), str(t))
      return k
    return self.key("thread", _key(p), _key(t))

  def process(self, p: str) -> str: return self.pnames.get(p) or (f"pid {p}" if p.lstrip("-").isdigit() else p or "global")

  def track(self, k: TrackKey) -> str:
    p, tname = k[1], self.tnames.get((k[1], k[2])) if len(k) == 3 else None
    if k[0] == "thread":
      if self.ours is not None and tname: return tname  # our own export: the thread name is the track name
      t = k[2]
      return f"{self.process(p)}/{tname or (f'tid {t}' if t.lstrip('-').isdigit() else t or 'main')}"
    if k[0] == "counter" and self.ours is not None and tname: return tname
    return f"{self.process(p)}/async" if k[0] == "async" else self.process(p)

  def name(self, e: dict[str, Any]) -> None:
    if isinstance(e.get("args"), dict) and "name" in e["args"]:
      p, t = _key(e.get("pid")), _key(e.get("tid"))
      if e.get("name") == "process_name": self.pnames[p] = str(e["args"]["name"])
      elif e.get("name") == "thread_name": self.tnames[(p, t)] = str(e["args"]["name"])

  def events(self, k: int, evs: list[Any]) -> None:
    """Events k, k + 1, ...: X events (most of them) straight to complete(), the rest through event()."""
    complete = self.complete
    for e in evs:
      if type(e) is dict and e.get("ph") == "X":
        try: complete(e)
        except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as x: self.skip(k, "X", x)
      else: self.event(k, e)
      k += 1

  def skip(self, k: int, ph: str, x: Exception) -> None: self.w.add(f"event {k} (ph {ph!r}): {type(x).__name__}: {x}; skipped")

  def event(self, k: int, e: Any) -> None:
    if not isinstance(e, dict): return self.w.add(f"event {k}: not an object; skipped")
    if not e: return  # the `{}` some writers end their array with
    ph = e.get("ph")
    if not isinstance(ph, str): return self.w.add(f"event {k}: no 'ph' (phase) field; skipped")
    try:
      if ph == "X": self.complete(e)
      elif ph in ("B", "E"): self.open.setdefault(("BE", _key(e.get("pid")), _key(e.get("tid"))), []).append(self.pending(e))
      elif ph in ("b", "e"):
        ident = _key(e.get("id2", e.get("id")))
        self.open.setdefault(("async", _key(e.get("pid")), str(e.get("cat", "")), ident), []).append(self.pending(e))
      elif ph == "C": self.counter(e)
      elif ph in ("i", "I", "n", "R"): self.instant(e)
      elif ph in ("s", "t", "f"): self.flow(e)
      elif ph == "M": self.name(e)  # process and thread names; sort indices and labels are not needed
      else: self.unsupported[ph] = self.unsupported.get(ph, 0) + 1
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as x: self.skip(k, ph, x)

  def complete(self, e: dict[str, Any]) -> None:
    # most of a trace's events, so ts(), thread() and span() are written out here for their usual case: each call
    # saved is a few percent of the time of a read
    start = round(t * 1000) if type(t := e["ts"]) is float and t - t == 0 else _ns(t)
    if (start := start + self.origin) > self.last_ns: self.last_ns = start
    dur = (round(d * 1000) if type(d := e["dur"]) is float and d - d == 0 else _ns(d)) if "dur" in e else 0
    if dur < 0: self.w.add(f"X event {e.get('name')!r} has negative dur {e.get('dur')}; kept with dur 0"); dur = 0
    args = a if isinstance(a := e.get("args"), dict) else ({} if "args" not in e else {"args": a})
    if self.ours is not None and isinstance(info := args.pop("kernel_info", None), dict): self.kernel(info)
    p, t = e.get("pid"), e.get("tid")
    track = self.int_threads.get((p, t)) if type(p) is int and type(t) is int else None
    if track is None: track = self.thread(e)
    name, cat, end, strs = e.get("name", ""), e.get("cat", ""), start + dur, self.shared.strs
    if type(name) is not str: name = str(name)
    if type(cat) is not str: cat = str(cat)
    if end >= I64 or start < -I64: raise OverflowError(f"ts {e['ts']!r} is {start} ns, beyond what 64 bits hold (a unit mix-up?)")
    self.out.append(Span(track, strs.get(name) or self.shared.s(name), start, end, strs.get(cat) or self.shared.s(cat),  # type: ignore[arg-type]
                         args if self.keys_shared and args else self.shared.args(args)))
    if end > self.last_ns: self.last_ns = end

  def span(self, track: TrackKey, name: Any, start: int, end: int, cat: Any, args: dict[str, Any]) -> None:
    self.out.append(Span(track, self.shared.s(str(name)), start, end, self.shared.s(str(cat)), self.shared.args(args)))  # type: ignore[arg-type]
    if end > self.last_ns: self.last_ns = end

  def kernel(self, info: dict[str, Any]) -> None:
    try: k = from_json({"type": "kernel", "src": "", "ctx": None, "uops": [], **info})
    except SchemaError as x: return self.w.add(f"kernel_info: {x}; ignored")
    if isinstance(k, Kernel) and k.id not in self.kernels: self.kernels.add(k.id); self.out.append(k)

  def pending(self, e: dict[str, Any]) -> tuple[str, TrackKey, int, dict[str, Any]]:
    return (str(e.get("ph")), self.thread(e) if e.get("ph") in "BE" else self.key("async", _key(e.get("pid"))), self.ts(e), e)

  def pair(self) -> None:
    """Matches B with E per thread (and b with e per async id) in time order; an unclosed begin ends at the last timestamp."""
    for key, evs in self.open.items():
      stack: list[tuple[TrackKey, int, dict[str, Any]]] = []
      for ph, track, t, e in sorted(evs, key=lambda x: x[2]):
        if ph in "Bb": stack.append((track, t, e))
        elif not stack: self.w.add(f"{ph!r} event {e.get('name')!r} at ts {e.get('ts')} has no matching begin; skipped")
        else:
          track, start, b = stack.pop()
          args = {**(b.get("args") if isinstance(b.get("args"), dict) else {}), **(e.get("args") if isinstance(e.get("args"), dict) else {})}
          self.span(track, b.get("name", e.get("name", "")), start, t, b.get("cat", e.get("cat", "")), args)
      for track, start, b in stack:
        self.w.add(f"begin event {b.get('name')!r} at ts {b.get('ts')} never ends; kept, ending at the last timestamp")
        self.span(track, b.get("name", ""), start, max(start, self.last_ns), b.get("cat", ""),
                  b["args"] if isinstance(b.get("args"), dict) else {})

  def counter(self, e: dict[str, Any]) -> None:
    track = self.key("counter", _key(e.get("pid")), _key(e.get("tid")))
    name, ts = str(e.get("name", "")), self.ts(e)
    if "id" in e: name = f"{name} {e['id']}"
    series = e.get("args") if isinstance(e.get("args"), dict) else {}
    for key, v in series.items():
      if isinstance(v, (int, float)) and not isinstance(v, bool):
        self.out.append(Counter(track, self.shared.s(name if len(series) == 1 else f"{name}.{key}"), ts, float(v)))  # type: ignore[arg-type]

  def instant(self, e: dict[str, Any]) -> None:
    args = e.get("args") if isinstance(e.get("args"), dict) else {}
    # PyTorch writes memory use as "[memory]" instants; a counter is what they mean
    if e.get("name") == "[memory]" and isinstance(v := args.get("Total Allocated"), (int, float)):
      self.out.append(Counter(self.key("process", _key(e.get("pid"))), "memory allocated", self.ts(e), float(v)))  # type: ignore[arg-type]
    else: self.out.append(Marker(self.shared.s(str(e.get("name", ""))), self.ts(e)))

  def flow(self, e: dict[str, Any]) -> None:
    ident = e.get("id", e.get("id2", e.get("bind_id")))
    if ident is None: raise KeyError("flow event without id")
    self.out.append(Flow(_key(ident), str(e["ph"]), self.thread(e), self.shared.s(str(e.get("name", ""))),  # type: ignore[arg-type]
                         self.shared.s(str(e.get("cat", ""))), self.ts(e)))

  def late(self) -> None:
    """otherData came after the events (our writer puts it first): apply to the events read what it says."""
    self.begin()
    out, self.out = self.out, []
    for e in out:
      if isinstance(e, Span):
        e.start_ns, e.end_ns = e.start_ns + self.origin, e.end_ns + self.origin
        if isinstance(info := e.args.pop("kernel_info", None), dict): self.kernel(info)
      elif isinstance(e, (Counter, Marker, Flow)): e.ts_ns += self.origin
      self.out.append(e)
    self.last_ns += self.origin
    self.open = {k: [(ph, track, t + self.origin, e) for ph, track, t, e in evs] for k, evs in self.open.items()}

  def end(self) -> None:
    if self.ours is None and _ours(self.top) is not None: self.late()
    self.pair()
    names = {k: self.track(k) for k in self.keys}
    # a thread track's name is "process/thread", and a process name may hold '/' itself (JAX's "/host:CPU"): say
    # which part is the process, so a viewer groups threads without guessing
    self.processes = {names[k]: self.process(k[1]) for k in self.keys if k[0] in ("thread", "async") and names[k] != self.process(k[1])}
    for e in self.out:
      if isinstance(e, (Span, Counter, Flow)): e.track = names[e.track]  # type: ignore[index]
    self.run()

  def run(self) -> None:
    if self.ours is None or not isinstance(self.ours.get("run"), dict): return
    try: self.out.insert(0, from_json(self.ours["run"]))
    except SchemaError as x: self.w.add(f"otherData.tinyviz.run: {x}; ignored")

def _first_then(first: Warnings, then: Warnings) -> list[ReadWarning]:
  # where reading stopped matters most: it leads, as when the text was checked before any event was read
  items = first.items + then.items
  more = first.skipped + then.skipped + max(0, len(items) - MAX_WARNINGS)
  return items[:MAX_WARNINGS] + ([ReadWarning(f"... and {more} more warnings")] if more else [])

def read_chrome_chunks(chunks: Iterable[bytes]) -> Trace:
  """Reads Chrome trace-event JSON arriving in chunks of bytes (not gzipped: see profiler.load).
  Raises TraceError only when it is not JSON at all."""
  ws, w = Warnings(), Warnings()
  scan = _Scanner(chunks, ws)
  imp = _Importer(scan.top, w)
  with paused_gc():
    k, cap = 0, max_events()
    for evs, imp.keys_shared in scan.events():
      if k == 0: imp.begin()
      if k + len(evs) > cap:
        imp.events(k, evs[:cap - k])
        w.add(past("TINYVIZ_MAX_EVENTS", "the event count"))
        break
      imp.events(k, evs)
      k += len(evs)
    imp.end()
  for ph, n in sorted(imp.unsupported.items()): w.add(f"skipped {n} events of unsupported phase {ph!r}")
  meta = {k: v for k, v in scan.top.items() if k in ("displayTimeUnit", "otherData", "traceName", "schemaVersion")}
  if imp.processes and imp.ours is None: meta["processes"] = imp.processes
  return Trace(imp.out, _first_then(ws, w), "chrome", meta)

def read_chrome(data: bytes) -> Trace:
  """Reads Chrome trace-event JSON (not gzipped: see profiler.load). Raises TraceError only when it is not JSON at all."""
  return read_chrome_chunks(data[i:i + CHUNK] for i in range(0, len(data), CHUNK))
