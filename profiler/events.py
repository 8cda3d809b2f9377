"""The trace event schema: the one definition every writer and reader uses (docs/trace-format.md explains it).

Each event is a dataclass with a `type` tag (treat them as immutable; not frozen because that triples their
construction cost on the recorder's hot path). On disk and on the wire an event is a JSON object
`{"type": TAG, field: value, ...}`; tuples travel as JSON arrays. Times are integer nanoseconds on the
recording host's `time.perf_counter_ns` clock; the `run` event maps that clock to wall time.
"""
from __future__ import annotations
import dataclasses, operator, types, typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union, get_args, get_origin

FORMAT = "tinyviz-trace"
# bump on any change a version-1 reader would misread; adding event types or optional fields needs no bump
VERSION = 1

@dataclass(slots=True)
class Run:
  """Metadata of the recorded process; the first event after the header."""
  TYPE: ClassVar[str] = "run"
  script: str
  argv: list[str]
  start_time: float      # wall clock, seconds since the epoch, taken at the same moment as clock_ns
  clock_ns: int          # perf_counter_ns at start_time: wall(t_ns) = start_time + (t_ns - clock_ns) / 1e9
  pid: int
  version: str           # tinyviz version that wrote the trace
  mode: str              # "viz" (rewrites + timeline) or "profile" (timeline only), or "import"

@dataclass(slots=True)
class RunEnd:
  """Written when the recorder closes cleanly; its absence means the process died or is still running."""
  TYPE: ClassVar[str] = "run_end"
  ts_ns: int

@dataclass(slots=True)
class UOpDef:
  """One distinct UOp, sent once, always after every UOp in its src."""
  TYPE: ClassVar[str] = "uop"
  id: int
  op: str
  dtype: str
  arg: str               # repr(arg), cut to ARG_MAX characters
  src: tuple[int, ...]

@dataclass(slots=True)
class PatternDef:
  """One UPat, sent once; `source` is its whole pattern entry as written when the trace was recorded."""
  TYPE: ClassVar[str] = "pattern"
  id: int
  file: str
  line: int
  source: str

@dataclass(slots=True)
class ContextBegin:
  TYPE: ClassVar[str] = "context_begin"
  id: int
  parent: int | None     # enclosing context on the same thread
  kind: str              # "schedule", "kernel", "user" or "call" (a @function body)
  name: str
  loc: tuple[str, int]
  ts_ns: int
  detail: str = ""       # a schedule's: the shapes it realized (its name is the call site)

@dataclass(slots=True)
class ContextEnd:
  TYPE: ClassVar[str] = "context_end"
  id: int
  ts_ns: int

@dataclass(slots=True)
class Rewrite:
  """One graph_rewrite call, written when it returns; `matches` are (pattern id, before uop, after uop) in order."""
  TYPE: ClassVar[str] = "rewrite"
  id: int
  ctx: int | None
  name: str
  loc: tuple[str, int]
  input: int
  matches: list[tuple[int | None, int, int]]
  output: int
  start_ns: int
  dur_ns: int
  match_ns: list[int] = field(default_factory=list)  # per match, how long its rewrite took (trying the patterns and the winner's fn)

@dataclass(slots=True)
class Kernel:
  TYPE: ClassVar[str] = "kernel"
  id: int
  name: str
  device: str
  src: str
  global_size: tuple[int, ...]
  local_size: tuple[int, ...]
  flops: int
  bytes: int
  ctx: int | None        # its codegen context: the link from the timeline to the graphs
  uops: list[str]
  line_uops: list[list[int]] = field(default_factory=list)  # per line of src, the ids of the uops it renders
  plans: list[dict[str, Any]] = field(default_factory=list)  # the optimizer's candidates: {name, cost, chosen, why}
  axis_kinds: list[str] = field(default_factory=list)  # per number in the name: "global", "reduce", ... (DEBUG=2's colours)

@dataclass(slots=True)
class Schedule:
  """What one schedule context made, in the order it runs: per item {kind: "kernel" | "copy", ast: uop id of the kernel's
  SINK (or the COPY), kernel: kernel id (null for a copy), reads: [BUFFER uop ids], writes: [BUFFER uop ids]}."""
  TYPE: ClassVar[str] = "schedule"
  ctx: int
  items: list[dict[str, Any]]

TRACK_KINDS = ("host", "tensor", "device", "thread")

@dataclass(slots=True)
class TrackDef:
  """What a track is, said before its first span, counter or flow: "host" (the engine's own work: codegen, compile,
  schedule), "tensor" (Tensor calls), "device" (a device's kernels and copies), "thread" (a foreign trace's thread)."""
  TYPE: ClassVar[str] = "track"
  name: str
  kind: str

@dataclass(slots=True)
class Span:
  """Something that took time on a track; a kernel run has cat "kernel" and args {"kernel": kernel id}."""
  TYPE: ClassVar[str] = "span"
  track: str
  name: str
  start_ns: int
  end_ns: int
  cat: str
  args: dict[str, Any] = field(default_factory=dict)

@dataclass(slots=True)
class Counter:
  TYPE: ClassVar[str] = "counter"
  track: str
  name: str
  ts_ns: int
  value: float

@dataclass(slots=True)
class Marker:
  TYPE: ClassVar[str] = "marker"
  name: str
  ts_ns: int

@dataclass(slots=True)
class Flow:
  """One point of an arrow between spans (Chrome's s/t/f events); points sharing `id` form one arrow."""
  TYPE: ClassVar[str] = "flow"
  id: str
  phase: str             # "s" start, "t" step, "f" finish
  track: str
  name: str
  cat: str
  ts_ns: int

Event = Union[Run, RunEnd, UOpDef, PatternDef, ContextBegin, ContextEnd, Rewrite, Kernel, Schedule, TrackDef, Span, Counter, Marker, Flow]
EVENT_TYPES: dict[str, type] = {c.TYPE: c for c in get_args(Event)}
ARG_MAX = 200

def header() -> dict[str, Any]:
  return {"type": "header", "format": FORMAT, "version": VERSION}

_fields: dict[type, tuple[tuple[str, ...], Any]] = {}
def to_json(ev: Event) -> dict[str, Any]:
  if (f := _fields.get(type(ev))) is None:  # per event class, once: its field names and a getter of all of them
    names = ("type",) + tuple(ev.__slots__)
    f = _fields[type(ev)] = (names, operator.attrgetter("TYPE", *ev.__slots__))
  return dict(zip(f[0], f[1](ev)))

class SchemaError(ValueError):
  """A JSON object that is not a valid event of a known type."""

def from_json(d: Any) -> Event:
  """Checks a decoded JSON object against the schema and builds its event; extra fields are ignored."""
  if not isinstance(d, dict): raise SchemaError(f"expected an object, got {type(d).__name__}")
  t = d.get("type")
  if (cls := EVENT_TYPES.get(t) if isinstance(t, str) else None) is None: raise SchemaError(f"unknown event type {t!r}")
  checkers = _checkers(cls)
  try: return cls(*[check(d[name]) for name, check in checkers])
  except (KeyError, SchemaError): pass
  # the slow path: defaults for missing optional fields, or a message naming the bad field
  kw = {}
  for name, check in checkers:
    if name not in d:
      if _has_default(cls, name): continue
      raise SchemaError(f"{cls.TYPE}: missing field {name!r}")
    try: kw[name] = check(d[name])
    except SchemaError as e: raise SchemaError(f"{cls.TYPE}.{name}: {e}") from None
  return cls(**kw)

class Checker:
  """The one check of events read from outside (a trace file's lines, an /ingest frame): the schema (from_json), and
  that a graph rebuilds from the table: a uop or rewrite names only uops defined before it. One per stream."""
  def __init__(self) -> None: self.uops: set[int] = set()

  def event(self, obj: Any) -> Event:
    uops = self.uops
    t = obj.get("type") if type(obj) is dict else None
    # the hot types are checked inline (what from_json checks); from_json words the problem when one is found
    if t == "uop":  # nine events in ten
      uid, op, dtype, arg, src = obj.get("id"), obj.get("op"), obj.get("dtype"), obj.get("arg"), obj.get("src")
      if type(uid) is int and type(op) is str and type(dtype) is str and type(arg) is str and type(src) is list \
         and -2**63 <= uid < 2**63:
        for s in src:
          if type(s) is not int: break  # (True == 1: a defined id is no proof of an int)
          if s not in uops: raise SchemaError(f"uop {uid} refers to an undefined uop {s}")
        else:
          if uid in uops: raise SchemaError(f"uop {uid} defined twice")
          uops.add(uid)
          return UOpDef(uid, op, dtype, arg, tuple(src))
    elif t == "rewrite":  # thousands of matches in a big pass
      matches = obj.get("matches")
      if type(matches) is list:
        for m in matches:
          if type(m) is not list or len(m) != 3 or type(m[1]) is not int or type(m[2]) is not int \
             or not (m[0] is None or type(m[0]) is int and -2**63 <= m[0] < 2**63): break
          if m[1] not in uops or m[2] not in uops: raise SchemaError(f"rewrite {obj.get('id')} refers to an undefined uop")
        else:
          r = from_json({**obj, "matches": []})
          if r.input not in uops or r.output not in uops: raise SchemaError(f"rewrite {r.id} refers to an undefined uop")
          r.matches = [(m[0], m[1], m[2]) for m in matches]
          return r
    elif t == "span":
      track, name, start, end, cat, args = obj.get("track"), obj.get("name"), obj.get("start_ns"), obj.get("end_ns"), obj.get("cat"), obj.get("args", {})
      if type(track) is str and type(name) is str and type(start) is int and type(end) is int and type(cat) is str \
         and type(args) is dict and -2**63 <= start < 2**63 and -2**63 <= end < 2**63:
        return Span(track, name, start, end, cat, args)
    ev = from_json(obj)
    if type(ev) is UOpDef:
      if ev.id in uops: raise SchemaError(f"uop {ev.id} defined twice")
      for s in ev.src:
        if s not in uops: raise SchemaError(f"uop {ev.id} refers to an undefined uop {s}")
      uops.add(ev.id)
    elif type(ev) is Rewrite:
      if ev.input not in uops or ev.output not in uops or any(b not in uops or a not in uops for _, b, a in ev.matches):
        raise SchemaError(f"rewrite {ev.id} refers to an undefined uop")
    elif type(ev) is Schedule: ev.items = [_schedule_item(i, it, uops) for i, it in enumerate(ev.items)]
    elif type(ev) is TrackDef and ev.kind not in TRACK_KINDS: raise SchemaError(f"track {ev.name!r}: kind {ev.kind!r} is not one of {TRACK_KINDS}")
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

# *** checking JSON values against the dataclass annotations, built once per class ***

Check = typing.Callable[[Any], Any]
_CHECKERS: dict[type, list[tuple[str, Check]]] = {}

def _has_default(cls: type, name: str) -> bool:
  f = next(f for f in dataclasses.fields(cls) if f.name == name)
  return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING

def _checkers(cls: type) -> list[tuple[str, Check]]:
  if cls not in _CHECKERS:
    hints = typing.get_type_hints(cls)
    _CHECKERS[cls] = [(f.name, _checker(hints[f.name])) for f in dataclasses.fields(cls)]
  return _CHECKERS[cls]

def _fail(want: str, v: Any) -> typing.NoReturn: raise SchemaError(f"expected {want}, got {type(v).__name__}")

def _fail_range(v: int) -> typing.NoReturn:
  raise SchemaError(f"{str(v)[:40]}{'...' if len(str(v)) > 40 else ''} is beyond what 64 bits hold")

def _checker(t: Any) -> Check:
  origin, args = get_origin(t), get_args(t)
  if t is Any: return lambda v: v
  # ints are int64 everywhere downstream (the timeline's columns, typed arrays in the page)
  if t is int: return lambda v: v if type(v) is int and -2**63 <= v < 2**63 else _fail("int", v) if type(v) is not int \
    else _fail_range(v)
  if t is str: return lambda v: v if type(v) is str else _fail("str", v)
  if t is float: return lambda v: float(v) if type(v) in (int, float) else _fail("number", v)
  if origin in (Union, types.UnionType):
    inner = _checker(next(a for a in args if a is not type(None)))
    return lambda v: None if v is None else inner(v)
  if origin is list:
    item = _checker(args[0])
    return lambda v: [item(x) for x in v] if type(v) is list else _fail("array", v)
  if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
    item = _checker(args[0])
    return lambda v: tuple([item(x) for x in v]) if type(v) in (list, tuple) else _fail("array", v)
  if origin is tuple:
    items = [_checker(a) for a in args]
    def check_tuple(v: Any) -> tuple:
      if type(v) not in (list, tuple) or len(v) != len(items): _fail(f"array of {len(items)}", v)
      return tuple([c(x) for c, x in zip(items, v)])
    return check_tuple
  if origin is dict: return lambda v: v if type(v) is dict else _fail("object", v)
  raise TypeError(f"no checker for {t}")
