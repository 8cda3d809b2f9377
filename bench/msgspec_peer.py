"""A peer for load_bench and capture_bench: our events as msgspec Structs (a tagged union on `type`), to measure what
decoding and validating a trace, and encoding the recorder's events, would cost with msgspec instead of our json
code. A measurement only: profiler/events.py stays the one definition (docs/performance.md says why, with figures).
The Structs mirror that file's dataclasses field for field; `check_mirror()` says so or names the difference.
Needs `pip install msgspec`; `available()` is False without it."""
from __future__ import annotations
import dataclasses, time
from typing import Any, Union

try: import msgspec
except ImportError: msgspec = None  # type: ignore[assignment]

def available() -> bool: return msgspec is not None

def _structs() -> Any:
  S = msgspec.Struct
  class Header(S, tag_field="type", tag="header"): format: str; version: int
  class Run(S, tag_field="type", tag="run"):
    script: str; argv: list[str]; start_time: float; clock_ns: int; pid: int; version: str; mode: str
  class RunEnd(S, tag_field="type", tag="run_end"): ts_ns: int
  class UOpDef(S, tag_field="type", tag="uop"): id: int; op: str; dtype: str; arg: str; src: tuple[int, ...]
  class PatternDef(S, tag_field="type", tag="pattern"): id: int; file: str; line: int; source: str
  class ContextBegin(S, tag_field="type", tag="context_begin"):
    id: int; parent: Union[int, None]; kind: str; name: str; loc: tuple[str, int]; ts_ns: int; detail: str = ""
  class ContextEnd(S, tag_field="type", tag="context_end"): id: int; ts_ns: int
  class Rewrite(S, tag_field="type", tag="rewrite"):
    id: int; ctx: Union[int, None]; name: str; loc: tuple[str, int]; input: int
    matches: list[tuple[Union[int, None], int, int]]; output: int; start_ns: int; dur_ns: int; match_ns: list[int] = []
  class Kernel(S, tag_field="type", tag="kernel"):
    id: int; name: str; device: str; src: str; global_size: tuple[int, ...]; local_size: tuple[int, ...]; flops: int
    bytes: int; ctx: Union[int, None]; uops: list[str]; line_uops: list[list[int]] = []; plans: list[dict[str, Any]] = []
    axis_kinds: list[str] = []
  class Schedule(S, tag_field="type", tag="schedule"): ctx: int; items: list[dict[str, Any]]
  class TrackDef(S, tag_field="type", tag="track"): name: str; kind: str
  class Span(S, tag_field="type", tag="span"):
    track: str; name: str; start_ns: int; end_ns: int; cat: str; args: dict[str, Any] = {}
  class Counter(S, tag_field="type", tag="counter"): track: str; name: str; ts_ns: int; value: float
  class Marker(S, tag_field="type", tag="marker"): name: str; ts_ns: int
  class Flow(S, tag_field="type", tag="flow"): id: str; phase: str; track: str; name: str; cat: str; ts_ns: int
  return [Header, Run, RunEnd, UOpDef, PatternDef, ContextBegin, ContextEnd, Rewrite, Kernel, Schedule, TrackDef, Span, Counter, Marker, Flow]

_cache: dict[str, Any] = {}
def structs() -> dict[str, Any]:
  if not _cache: _cache.update({c.__struct_config__.tag: c for c in _structs()})
  return _cache

def check_mirror() -> str | None:
  """None when every event type of profiler/events.py has a Struct here with the same field names, else what differs."""
  from profiler.events import EVENT_TYPES
  s = structs()
  for tag, cls in EVENT_TYPES.items():
    if tag not in s: return f"no Struct for {tag!r}"
    ours, theirs = [f.name for f in dataclasses.fields(cls)], list(s[tag].__struct_fields__)
    if ours != theirs: return f"{tag}: fields {theirs} here, {ours} in profiler/events.py"
  return None

def decode_jsonl(data: bytes) -> int:
  """Decodes and validates every line of our JSONL trace into Structs; returns how many events."""
  dec = msgspec.json.Decoder(Union[tuple(structs().values())])  # type: ignore[arg-type]
  return sum(1 for line in data.split(b"\n") if line and dec.decode(line) is not None)

def encode_figures(path: str, reps: int = 3) -> dict[str, float]:
  """Seconds to encode the events of the trace at `path` as its lines: ours (profiler's to_json + encode, what the
  recorder's flush does) and msgspec's (Structs, already built), best of reps."""
  from profiler.load import load
  from profiler.events import to_json
  from profiler.tracefile import encode
  events = load(path).events
  dec = msgspec.json.Decoder(Union[tuple(structs().values())])  # type: ignore[arg-type]
  enc = msgspec.json.Encoder()
  mine = [dec.decode(encode(to_json(e))) for e in events]
  def best(f: Any) -> float:
    ts = []
    for _ in range(reps): t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts)
  return {"n": len(events), "ours_s": best(lambda: [encode(to_json(e)) for e in events]),
          "msgspec_s": best(lambda: [enc.encode(m) for m in mine])}
