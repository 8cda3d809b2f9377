"""The one reader of VIZ and PROFILE (the engine, the recorder and the live sender all ask here, so they agree).
tinygrad's meaning: an integer; VIZ=1 (any positive) records everything and streams it live, VIZ=-1 records it to
the trace file only, PROFILE=1 records the timeline only; 0, empty, false/no/off: off; true/yes/on: 1. Anything else
stops the script with one line naming the variable and what it accepts (a typo must not silently record nothing)."""
from __future__ import annotations
import functools, os

_WORDS = {"": 0, "false": 0, "no": 0, "off": 0, "true": 1, "yes": 1, "on": 1}

@functools.lru_cache(maxsize=16)
def _parse(name: str, raw: str) -> int:
  v = raw.strip().lower()
  if v in _WORDS: return _WORDS[v]
  try: return int(v)
  except ValueError:
    raise SystemExit(f"tinyviz: {name}={raw!r} is not an integer (accepted: 1 or more: live, -1: trace file only, 0: off)") from None

def level(name: str) -> int:
  """VIZ or PROFILE as an integer, read now."""
  return _parse(name, os.environ.get(name, ""))

def mode() -> str | None:
  """What to record: "viz" (rewrites and timeline), "profile" (the timeline only) or None."""
  return "viz" if level("VIZ") else "profile" if level("PROFILE") else None

def live() -> bool:
  """Whether to stream to the viz server: VIZ positive."""
  return level("VIZ") > 0
