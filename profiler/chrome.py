"""Chrome trace-event JSON, out and in (the format of chrome://tracing, Perfetto, PyTorch's and JAX's profilers).

Export: our spans become X events on one process per device and one thread per track, counters C events,
markers global i events. Import accepts what is found in the wild: array or object form, an unterminated
array, trailing commas and `{}`, string pids/tids, huge tids, overlapping X events (all kept), B/E pairs,
async b/e pairs, flows, counters and metadata names. A syntax error stops reading there with a warning that
names its byte offset and line; the events before it are returned.
"""
from __future__ import annotations
import gzip, json, math
from typing import Any
from profiler.events import VERSION, Event, Run, Kernel, Span, Counter, Marker, Flow, SchemaError, from_json, to_json
from profiler.tracefile import Trace, TraceError, Warnings, encode

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

# *** import: JSON text -> raw event objects, tolerating damage ***

def _skip_ws(text: str, i: int) -> int:
  n = len(text)
  while i < n and text[i] in " \t\r\n": i += 1
  return i

class _Scanner:
  """A forgiving reader of a JSON array or object; stops at the first syntax error and keeps what came before."""
  def __init__(self, text: str, w: Warnings, base: int):
    self.text, self.w, self.base, self.dec = text, w, base, json.JSONDecoder()
    self.stopped = False

  def fail(self, what: str, i: int) -> None:
    self.w.add(f"{what}; stopped reading here, everything before it kept", self.byte(i), self.text.count("\n", 0, i) + 1)
    self.stopped = True

  def byte(self, i: int) -> int: return self.base + len(self.text[:i].encode("utf-8", "surrogateescape"))

  def value(self, i: int) -> tuple[Any, int]:
    try: return self.dec.raw_decode(self.text, i)
    except json.JSONDecodeError as e: self.fail(f"invalid JSON ({e.msg})", e.pos)
    except RecursionError: self.fail("JSON nested too deeply", i)
    return None, i

  def array(self, i: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    after_value = False  # a value must be followed by ',' or ']'
    while True:
      i = _skip_ws(self.text, i)
      if i >= len(self.text):
        self.w.add(f"unterminated array: the file ends after {len(items)} events (a trace cut short)", self.byte(i))
        return items, i
      c = self.text[i]
      if c == "]": return items, i + 1
      if c == ",": i, after_value = i + 1, False; continue  # also skips trailing and doubled commas
      if after_value:
        self.fail("expected ',' or ']' between events", i)
        return items, i
      v, i = self.value(i)
      if self.stopped: return items, i
      items.append(v)
      after_value = True

  def document(self) -> tuple[list[Any], dict[str, Any]]:
    i = _skip_ws(self.text, 0)
    if i < len(self.text) and self.text[i] == "[": return self.array(i + 1)[0], {}
    if i >= len(self.text) or self.text[i] != "{": raise TraceError("not a Chrome trace: expected '[' or '{'", self.byte(i), 1)
    i, events, top = i + 1, [], {}
    while not self.stopped:
      i = _skip_ws(self.text, i)
      if i >= len(self.text): self.w.add("unterminated object: the file ends early", self.byte(i)); break
      if self.text[i] == "}": break
      if self.text[i] == ",": i += 1; continue
      key, i = self.value(i)
      if self.stopped: break
      i = _skip_ws(self.text, i)
      if not isinstance(key, str) or not self.text.startswith(":", i): self.fail("expected a \"key\": value", i); break
      i = _skip_ws(self.text, i + 1)
      if key == "traceEvents" and self.text.startswith("[", i): events, i = self.array(i + 1)
      else:
        v, i = self.value(i)
        if not self.stopped: top[key] = v
    return events, top

def _raw_events(data: bytes, w: Warnings) -> tuple[list[Any], dict[str, Any]]:
  base = 3 if data.startswith(b"\xef\xbb\xbf") else 0
  text = data[base:].decode("utf-8", "surrogateescape")  # keeps one char per bad byte, so offsets stay exact
  try: doc = json.loads(text)
  except (ValueError, RecursionError): return _Scanner(text, w, base).document()
  if isinstance(doc, list): return doc, {}
  if isinstance(doc, dict):
    evs = doc.get("traceEvents", [])
    if not isinstance(evs, list): w.add("traceEvents is not an array; ignored"); evs = []
    return evs, {k: v for k, v in doc.items() if k != "traceEvents"}
  raise TraceError(f"not a Chrome trace: the JSON document is a {type(doc).__name__}", base, 1)

# *** import: raw event objects -> our events ***

def _key(v: Any) -> str:
  # pids/tids come as ints, floats, strings or are missing: one key per distinct value as a person reads it
  if isinstance(v, float) and v.is_integer(): v = int(v)
  if isinstance(v, (int, str)) and not isinstance(v, bool): return str(v)
  return "" if v is None else json.dumps(v, sort_keys=True, default=str)

def _ns(v: Any) -> int:
  t = float(v)
  if not math.isfinite(t): raise ValueError(f"timestamp {v!r} is not finite")
  return round(t * 1000)

class _Importer:
  def __init__(self, top: dict[str, Any], w: Warnings):
    self.w, self.out = w, []
    ours = top.get("otherData", {}).get("tinyviz") if isinstance(top.get("otherData"), dict) else None
    self.ours = ours if isinstance(ours, dict) else None
    origin = self.ours.get("clock_origin_ns", 0) if self.ours else 0
    self.origin = origin if type(origin) is int else 0
    self.pnames: dict[str, str] = {}
    self.tnames: dict[tuple[str, str], str] = {}
    self.open: dict[tuple[str, ...], list[tuple[str, str, int, dict[str, Any]]]] = {}
    self.kernels: set[int] = set()
    self.unsupported: dict[str, int] = {}
    self.last_ns = 0

  def ts(self, e: dict[str, Any]) -> int:
    t = _ns(e["ts"]) + self.origin
    self.last_ns = max(self.last_ns, t)
    return t

  def process(self, p: str) -> str: return self.pnames.get(p) or (f"pid {p}" if p.lstrip("-").isdigit() else p or "global")

  def track(self, e: dict[str, Any]) -> str:
    p, t = _key(e.get("pid")), _key(e.get("tid"))
    tname = self.tnames.get((p, t))
    if self.ours is not None and tname: return tname  # our own export: the thread name is the track name
    return f"{self.process(p)}/{tname or (f'tid {t}' if t.lstrip('-').isdigit() else t or 'main')}"

  def names(self, evs: list[Any]) -> None:
    for e in evs:
      if isinstance(e, dict) and e.get("ph") == "M" and isinstance(e.get("args"), dict) and "name" in e["args"]:
        p, t = _key(e.get("pid")), _key(e.get("tid"))
        if e.get("name") == "process_name": self.pnames[p] = str(e["args"]["name"])
        elif e.get("name") == "thread_name": self.tnames[(p, t)] = str(e["args"]["name"])

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
      elif ph == "M": pass  # names were read in the first pass; sort indices and labels are not needed
      else: self.unsupported[ph] = self.unsupported.get(ph, 0) + 1
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as x:
      self.w.add(f"event {k} (ph {ph!r}): {type(x).__name__}: {x}; skipped")

  def complete(self, e: dict[str, Any]) -> None:
    start, dur = self.ts(e), _ns(e.get("dur", 0))
    if dur < 0: self.w.add(f"X event {e.get('name')!r} has negative dur {e.get('dur')}; kept with dur 0"); dur = 0
    args = dict(e["args"]) if isinstance(e.get("args"), dict) else ({} if "args" not in e else {"args": e["args"]})
    if self.ours is not None and isinstance(info := args.pop("kernel_info", None), dict): self.kernel(info)
    self.span(self.track(e), e.get("name", ""), start, start + dur, e.get("cat", ""), args)

  def span(self, track: str, name: Any, start: int, end: int, cat: Any, args: dict[str, Any]) -> None:
    self.out.append(Span(track, str(name), start, end, str(cat), args))
    self.last_ns = max(self.last_ns, end)

  def kernel(self, info: dict[str, Any]) -> None:
    try: k = from_json({"type": "kernel", "src": "", "ctx": None, "uops": [], **info})
    except SchemaError as x: return self.w.add(f"kernel_info: {x}; ignored")
    if isinstance(k, Kernel) and k.id not in self.kernels: self.kernels.add(k.id); self.out.append(k)

  def pending(self, e: dict[str, Any]) -> tuple[str, str, int, dict[str, Any]]:
    return (str(e.get("ph")), self.track(e) if e.get("ph") in "BE" else f"{self.process(_key(e.get('pid')))}/async",
            self.ts(e), e)

  def pair(self) -> None:
    """Matches B with E per thread (and b with e per async id) in time order; an unclosed begin ends at the last timestamp."""
    for key, evs in self.open.items():
      stack: list[tuple[str, int, dict[str, Any]]] = []
      for ph, track, t, e in sorted(evs, key=lambda x: x[2]):
        if ph in "Bb": stack.append((track, t, e))
        elif not stack: self.w.add(f"{ph!r} event {e.get('name')!r} at ts {e.get('ts')} has no matching begin; skipped")
        else:
          track, start, b = stack.pop()
          args = {**(b.get("args") if isinstance(b.get("args"), dict) else {}), **(e.get("args") if isinstance(e.get("args"), dict) else {})}
          self.span(track, b.get("name", e.get("name", "")), start, t, b.get("cat", e.get("cat", "")), args)
      for track, start, b in stack:
        self.w.add(f"begin event {b.get('name')!r} at ts {b.get('ts')} never ends; kept, ending at the last timestamp")
        self.span(track, b.get("name", ""), start, max(start, self.last_ns), b.get("cat", ""), dict(b.get("args") or {}))

  def counter(self, e: dict[str, Any]) -> None:
    tname = self.tnames.get((_key(e.get("pid")), _key(e.get("tid"))))
    track = tname if self.ours is not None and tname else self.process(_key(e.get("pid")))
    name, ts = str(e.get("name", "")), self.ts(e)
    if "id" in e: name = f"{name} {e['id']}"
    series = e.get("args") if isinstance(e.get("args"), dict) else {}
    for key, v in series.items():
      if isinstance(v, (int, float)) and not isinstance(v, bool):
        self.out.append(Counter(track, name if len(series) == 1 else f"{name}.{key}", ts, float(v)))

  def instant(self, e: dict[str, Any]) -> None:
    args = e.get("args") if isinstance(e.get("args"), dict) else {}
    # PyTorch writes memory use as "[memory]" instants; a counter is what they mean
    if e.get("name") == "[memory]" and isinstance(v := args.get("Total Allocated"), (int, float)):
      self.out.append(Counter(self.process(_key(e.get("pid"))), "memory allocated", self.ts(e), float(v)))
    else: self.out.append(Marker(str(e.get("name", "")), self.ts(e)))

  def flow(self, e: dict[str, Any]) -> None:
    ident = e.get("id", e.get("id2", e.get("bind_id")))
    if ident is None: raise KeyError("flow event without id")
    self.out.append(Flow(_key(ident), str(e["ph"]), self.track(e), str(e.get("name", "")), str(e.get("cat", "")), self.ts(e)))

  def run(self) -> None:
    if self.ours is None or not isinstance(self.ours.get("run"), dict): return
    try: self.out.insert(0, from_json(self.ours["run"]))
    except SchemaError as x: self.w.add(f"otherData.tinyviz.run: {x}; ignored")

def read_chrome(data: bytes) -> Trace:
  """Reads Chrome trace-event JSON (not gzipped: see profiler.load). Raises TraceError only when it is not JSON at all."""
  w = Warnings()
  raw, top = _raw_events(data, w)
  imp = _Importer(top, w)
  imp.names(raw)
  for k, e in enumerate(raw): imp.event(k, e)
  imp.pair()
  imp.run()
  for ph, n in sorted(imp.unsupported.items()): w.add(f"skipped {n} events of unsupported phase {ph!r}")
  meta = {k: v for k, v in top.items() if k in ("displayTimeUnit", "otherData", "traceName", "schemaVersion")}
  return Trace(imp.out, w.done(), "chrome", meta)
