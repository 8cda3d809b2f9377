"""How much one read of a trace may take, so that a small hostile or broken file (a gzip of whitespace, one
gigabyte-long line, tens of millions of tiny events) ends with a clear message naming the limit, and everything
read before it kept, instead of minutes of work and a MemoryError. Each is an env var a user can raise."""
from __future__ import annotations
import os, sys

DEFAULTS = {
  "TINYVIZ_MAX_TRACE_MB": 32768,   # uncompressed bytes of one file (gzip inflates 1000x)
  "TINYVIZ_MAX_LINE_MB": 256,      # one line of our JSONL, one event of a Chrome trace
  "TINYVIZ_MAX_EVENTS": 8_000_000,  # events of one file: ~500 B each once indexed, so about 4 GB
}

def limit(name: str) -> int:
  """The limit's value now (read per call: a test or a long-lived server sees a change); a bad value is named on
  stderr and the default used."""
  v = os.environ.get(name)
  if v in (None, ""): return DEFAULTS[name]
  try:
    if (x := int(v)) > 0: return x
  except ValueError: pass
  print(f"tinyviz: {name}={v!r} is not a positive whole number; using {DEFAULTS[name]}", file=sys.stderr)
  return DEFAULTS[name]

def max_bytes() -> int: return limit("TINYVIZ_MAX_TRACE_MB") << 20
def max_line() -> int: return limit("TINYVIZ_MAX_LINE_MB") << 20
def max_events() -> int: return limit("TINYVIZ_MAX_EVENTS")

def past(name: str, what: str) -> str:
  return f"{what} passed {name}={limit(name)}; stopped reading there, everything before it kept (raise {name} to read more)"
