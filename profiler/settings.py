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

def plans() -> bool:
  """VIZ_PLANS=1: also record the rewrites of the optimizer's losing plans, each in a "plan" context inside its kernel's
  (by default only the winner's are: capture stays cheap). 0, empty, false/no/off: off; true/yes/on or an integer >= 1: on."""
  raw = os.environ.get("VIZ_PLANS", "")
  v = raw.strip().lower()
  if v in _WORDS: return bool(_WORDS[v])
  try: return int(v) > 0
  except ValueError: raise SystemExit(f"tinyviz: VIZ_PLANS={raw!r} is not a switch (accepted: 1 or true: on, 0 or empty: off)") from None

def live() -> bool:
  """Whether to stream to the viz server: VIZ positive."""
  return level("VIZ") > 0
