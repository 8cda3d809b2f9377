"""The trace event schema: the one definition every writer and reader uses (docs/trace-format.md explains it).

Each event is a `msgspec.Struct` tagged by `type`: the class is the schema, the validator (msgspec checks a
decoded line or /ingest element against the annotations, in C) and the encoder's layout at once. Treat events
as immutable (they are mutable Structs: readers intern their strings in place). On disk and on the wire an
event is a JSON object `{"type": TAG, field: value, ...}`; tuples travel as JSON arrays. Times are integer
nanoseconds on the recording host's `time.perf_counter_ns` clock; the `run` event maps that clock to wall time.
"""
from __future__ import annotations
import re
from typing import Annotated, Any, ClassVar, Union, get_args
import msgspec

FORMAT = "tinyviz-trace"
# bump on any change a version-1 reader would misread; adding event types or optional fields needs no bump
VERSION = 1

# ints are int64 everywhere downstream (the timeline's columns, typed arrays in the page)
Int = Annotated[int, msgspec.Meta(ge=-2**63, le=2**63 - 1)]

class EventBase(msgspec.Struct, tag_field="type"):
  TYPE: ClassVar[str]  # the tag, set below for every event class

class Run(EventBase, tag="run"):
  """Metadata of the recorded process; the first event after the header."""
  script: str
  argv: list[str]
  start_time: float      # wall clock, seconds since the epoch, taken at the same moment as clock_ns
  clock_ns: Int          # perf_counter_ns at start_time: wall(t_ns) = start_time + (t_ns - clock_ns) / 1e9
  pid: Int
  version: str           # tinyviz version that wrote the trace
  mode: str              # "viz" (rewrites + timeline) or "profile" (timeline only), or "import"

class RunEnd(EventBase, tag="run_end"):
  """Written when the recorder closes cleanly; its absence means the process died or is still running."""
  ts_ns: Int

class UOpDef(EventBase, tag="uop"):
  """One distinct UOp, sent once, always after every UOp in its src."""
  id: Int
  op: str
  dtype: str
  arg: str               # repr(arg), cut to ARG_MAX characters
  src: tuple[Int, ...]

class PatternDef(EventBase, tag="pattern"):
  """One UPat, sent once; `source` is its whole pattern entry as written when the trace was recorded."""
  id: Int
  file: str
  line: Int
  source: str

class ContextBegin(EventBase, tag="context_begin"):
  id: Int
  parent: Union[Int, None]  # enclosing context on the same thread
  kind: str              # "schedule", "kernel", "user" or "call" (a @function body)
  name: str
  loc: tuple[str, Int]
  ts_ns: Int
  detail: str = ""       # a schedule's: the shapes it realized (its name is the call site)

class ContextEnd(EventBase, tag="context_end"):
  id: Int
  ts_ns: Int

class Rewrite(EventBase, tag="rewrite"):
  """One graph_rewrite call, written when it returns; `matches` are (pattern id, before uop, after uop) in order."""
  id: Int
  ctx: Union[Int, None]
  name: str
  loc: tuple[str, Int]
  input: Int
  matches: list[tuple[Union[Int, None], Int, Int]]
  output: Int
  start_ns: Int
  dur_ns: Int
  match_ns: list[Int] = []  # per match, how long its rewrite took (trying the patterns and the winner's fn)

class Kernel(EventBase, tag="kernel"):
  id: Int
  name: str
  device: str
  src: str
  global_size: tuple[Int, ...]
  local_size: tuple[Int, ...]
  flops: Int
  bytes: Int
  ctx: Union[Int, None]  # its codegen context: the link from the timeline to the graphs
  uops: list[str]
  line_uops: list[list[Int]] = []  # per line of src, the ids of the uops it renders
  plans: list[dict[str, Any]] = []  # the optimizer's candidates: {name, cost, chosen, why}
  axis_kinds: list[str] = []  # per number in the name: "global", "reduce", ... (DEBUG=2's colours)

class Schedule(EventBase, tag="schedule"):
  """What one schedule context made, in the order it runs: per item {kind: "kernel" | "copy", ast: uop id of the kernel's
  SINK (or the COPY), kernel: kernel id (null for a copy), reads: [BUFFER uop ids], writes: [BUFFER uop ids]}."""
  ctx: Int
  items: list[dict[str, Any]]

TRACK_KINDS = ("host", "tensor", "device", "thread")

class TrackDef(EventBase, tag="track"):
  """What a track is, said before its first span, counter or flow: "host" (the engine's own work: codegen, compile,
  schedule), "tensor" (Tensor calls), "device" (a device's kernels and copies), "thread" (a foreign trace's thread).
  `process`: a thread's process, the part of `name` before "/<thread>" (a process name may hold '/'); "" unsaid."""
  name: str
  kind: str
  process: str = ""

class Span(EventBase, tag="span"):
  """Something that took time on a track; a kernel run has cat "kernel" and args {"kernel": kernel id}."""
  track: str
  name: str
  start_ns: Int
  end_ns: Int
  cat: str
  args: dict[str, Any] = {}

class Counter(EventBase, tag="counter"):
  track: str
  name: str
  ts_ns: Int
  value: float

class Marker(EventBase, tag="marker"):
  name: str
  ts_ns: Int

class Flow(EventBase, tag="flow"):
  """One point of an arrow between spans (Chrome's s/t/f events); points sharing `id` form one arrow."""
  id: str
  phase: str             # "s" start, "t" step, "f" finish
  track: str
  name: str
  cat: str
  ts_ns: Int

Event = Union[Run, RunEnd, UOpDef, PatternDef, ContextBegin, ContextEnd, Rewrite, Kernel, Schedule, TrackDef, Span, Counter, Marker, Flow]
EVENT_TYPES: dict[str, type] = {}
for _c in get_args(Event):
  _c.TYPE = _c.__struct_config__.tag
  EVENT_TYPES[_c.TYPE] = _c
ARG_MAX = 200

def field_names(cls: type) -> tuple[str, ...]:
  """An event class's fields in order (what its JSON object holds besides `type`)."""
  return cls.__struct_fields__  # type: ignore[attr-defined,no-any-return]

def header() -> dict[str, Any]:
  return {"type": "header", "format": FORMAT, "version": VERSION}

def to_json(ev: Event) -> dict[str, Any]:
  """The event as a JSON-ready dict, `type` first (tuples stay tuples)."""
  try: return msgspec.to_builtins(ev, enc_hook=str)  # type: ignore[no-any-return]
  except (TypeError, ValueError): return {"type": ev.TYPE, **{n: getattr(ev, n) for n in ev.__struct_fields__}}  # args keyed by True

def to_json_batch(events: list[Event]) -> list[dict[str, Any]]:
  """to_json of each event, in one call."""
  try: return msgspec.to_builtins(events, enc_hook=str)  # type: ignore[no-any-return]
  except (TypeError, ValueError): return [to_json(e) for e in events]

class SchemaError(ValueError):
  """A JSON object that is not a valid event of a known type."""

_DECODER = msgspec.json.Decoder(Event)

def decode(data: bytes | str | msgspec.Raw) -> Event:
  """One event from its JSON text, checked against the schema. Raises SchemaError for a valid JSON value that is
  not an event, msgspec.DecodeError for text that is not JSON."""
  try: return _DECODER.decode(data)  # type: ignore[no-any-return]
  except msgspec.ValidationError as e: err = e
  try: obj = msgspec.json.decode(data)  # the value as it came, to word the problem with
  except (msgspec.DecodeError, RecursionError): raise SchemaError(f"not an event: {err}") from None
  raise _schema_error(obj, err)

def from_json(d: Any) -> Event:
  """Checks a decoded JSON object against the schema and builds its event; extra fields are ignored."""
  try: ev = msgspec.convert(d, Event)  # type: ignore[arg-type]
  except msgspec.ValidationError as e: raise _schema_error(d, e) from None
  except UnicodeEncodeError: return from_json(_no_surrogates(d))  # a lone surrogate ("\\ud800", which json reads)
  if type(ev) is Span and ev.args: ev.args = d["args"]  # the caller's dict, not convert's copy of it (a span's details)
  return ev  # type: ignore[no-any-return]

def _no_surrogates(v: Any) -> Any:
  """v with each lone surrogate in its strings as U+FFFD: msgspec takes only text that UTF-8 can hold."""
  if isinstance(v, str): return v.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
  if isinstance(v, dict): return {_no_surrogates(k): _no_surrogates(x) for k, x in v.items()}
  if isinstance(v, list): return [_no_surrogates(x) for x in v]
  return v

_WHERE = re.compile(r"^(.*?)(?: - at `\$(.*)`)?$", re.S)
_STEP = re.compile(r"\.(\w+)|\[(\d+)\]")
_EXPECTED = re.compile(r"Expected `([^`]+)`(?: of length (\d+))?")
_JSON_NAMES = {"float": "number", "array": "array", "object": "object"}
_MISSING = object()

def _schema_error(obj: Any, e: msgspec.ValidationError) -> SchemaError:
  """msgspec's complaint about obj worded as ours: the event type and field, what was expected and what came."""
  if not isinstance(obj, dict): return SchemaError(f"expected an object, got {type(obj).__name__}")
  t = obj.get("type")
  if (cls := EVENT_TYPES.get(t) if isinstance(t, str) else None) is None: return SchemaError(f"unknown event type {t!r}")
  msg, path = _WHERE.match(str(e)).groups()  # type: ignore[union-attr]
  if (m := re.match(r"Object missing required field `(\w+)`", msg)) is not None:
    return SchemaError(f"{cls.TYPE}: missing field {m.group(1)!r}")  # type: ignore[attr-defined]
  steps = [a or int(i) for a, i in _STEP.findall(path or "")]
  where = f"{cls.TYPE}.{steps[0]}" if steps and isinstance(steps[0], str) else cls.TYPE  # type: ignore[attr-defined]
  v: Any = obj
  for s in steps:
    try: v = v[s]
    except (KeyError, IndexError, TypeError): v = _MISSING; break
  if (m := _EXPECTED.match(msg)) is None: return SchemaError(f"{where}: {msg}")
  if "<=" in msg or ">=" in msg:
    text = str(v)
    return SchemaError(f"{where}: {text[:40]}{'...' if len(text) > 40 else ''} is beyond what 64 bits hold")
  want = f"array of {m.group(2)}" if m.group(2) else " or ".join(_JSON_NAMES.get(w, w) for w in m.group(1).split(" | ") if w != "null")
  return SchemaError(f"{where}: expected {want}, got {type(v).__name__ if v is not _MISSING else 'nothing'}")

class Checker:
  """The one check of events read from outside (a trace file's lines, an /ingest frame): the schema (msgspec, as
  they are decoded), and that a graph rebuilds from the table: a uop or rewrite names only uops defined before it,
  a schedule's items are whole. One per stream."""
  def __init__(self) -> None: self.uops: set[int] = set()

  def event(self, obj: Any) -> Event:
    """One event given as JSON text (bytes, str, msgspec.Raw) or as a decoded JSON object, checked."""
    return self.check(decode(obj) if isinstance(obj, (bytes, str, msgspec.Raw)) else from_json(obj))

  def events(self, objs: list[Any]) -> list[Event | SchemaError]:
    """event() of each, in order, a problem returned in its place; a batch of JSON texts (bytes of one line each, an
    /ingest frame's elements) is decoded in one msgspec call."""
    evs: list[Any] | None = None
    try: evs = _DECODER.decode_lines(b"\n".join(objs))
    except (msgspec.DecodeError, RecursionError, TypeError): pass  # a bad one (worded below, one by one), or not texts
    if evs is not None and (len(evs) != len(objs) or not all(objs) or any(map(bytes.isspace, objs))):
      evs = None  # one event per text, or they would be misplaced: decode_lines skips blanks, takes two values on a line
    out: list[Event | SchemaError] = []
    for i, o in enumerate(objs):
      try: out.append(self.check(evs[i]) if evs is not None else self.event(o))
      except SchemaError as e: out.append(e)
      except (msgspec.DecodeError, RecursionError) as e: out.append(SchemaError(f"not JSON: {e}"))
    return out

  def check(self, ev: Event) -> Event:
    """An event that fits the schema, checked against what came before it in the stream."""
    t, uops = type(ev), self.uops
    if t is UOpDef:  # nine events in ten
      if not uops.issuperset(ev.src):  # type: ignore[union-attr]
        raise SchemaError(f"uop {ev.id} refers to an undefined uop {next(s for s in ev.src if s not in uops)}")  # type: ignore[union-attr]
      if ev.id in uops: raise SchemaError(f"uop {ev.id} defined twice")  # type: ignore[union-attr]
      uops.add(ev.id)  # type: ignore[union-attr]
    elif t is Span: pass
    elif t is Rewrite:
      if ev.input not in uops or ev.output not in uops or any(b not in uops or a not in uops for _, b, a in ev.matches):  # type: ignore[union-attr]
        raise SchemaError(f"rewrite {ev.id} refers to an undefined uop")  # type: ignore[union-attr]
    elif t is Schedule: ev.items = [_schedule_item(i, it, uops) for i, it in enumerate(ev.items)]  # type: ignore[union-attr]
    elif t is TrackDef and ev.kind not in TRACK_KINDS:  # type: ignore[union-attr]
      raise SchemaError(f"track {ev.name!r}: kind {ev.kind!r} is not one of {TRACK_KINDS}")  # type: ignore[union-attr]
    elif t is TrackDef and ev.process and not ev.name.startswith(ev.process + "/"):  # type: ignore[union-attr]
      raise SchemaError(f"track {ev.name!r}: its process {ev.process!r} is not the start of its name")  # type: ignore[union-attr]
    return ev

SCHEDULE_KINDS = ("kernel", "copy")

def _schedule_item(i: int, it: Any, uops: set[int]) -> dict[str, Any]:
  """One item of a schedule event, checked: a known kind, a kernel id or null, every uop it names defined."""
  if not isinstance(it, dict): raise SchemaError(f"schedule item {i}: expected an object")
  kind, ast, kernel, reads, writes = it.get("kind"), it.get("ast"), it.get("kernel"), it.get("reads"), it.get("writes")
  if kind not in SCHEDULE_KINDS: raise SchemaError(f"schedule item {i}: kind {kind!r} is not one of {SCHEDULE_KINDS}")
  if kernel is not None and type(kernel) is not int: raise SchemaError(f"schedule item {i}: kernel must be an id or null")
  if not isinstance(reads, list) or not isinstance(writes, list): raise SchemaError(f"schedule item {i}: reads and writes must be arrays")
  for u in [ast, *reads, *writes]:
    if type(u) is not int or u not in uops: raise SchemaError(f"schedule item {i} refers to an undefined uop {u!r}")
  return {"kind": kind, "ast": ast, "kernel": kernel, "reads": list(reads), "writes": list(writes)}
