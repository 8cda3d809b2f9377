"""Each CPU kernel's generated program kept on disk (JSON, next to the plan cache), so that a process that runs kernels an
earlier one made skips lowering, the plan, linearizing and rendering: what it needs to compile (found in the kernel
cache) and run is the C source, the launch sizes and the cost counts. A script's second run spent most of its time
there (the digits CNN's first 3 steps: 0.9 of 1.2 s). The key is the kernel's graph, its name, the renderer's settings
and a hash of the engine's own source, so any change to the code that makes programs makes new entries. Only used
while nothing is traced (VIZ/PROFILE record how each kernel is made) and with the optimizer on; PROGRAM_CACHE=0 turns
it off."""
from __future__ import annotations
import functools, hashlib, json, pathlib
from typing import Any
from tinygrad.helpers import cache_dir, getenv, read_small, write_atomic
from tinygrad.uop.ops import UOp

ENABLED = bool(getenv("PROGRAM_CACHE", 1))
FIELDS = ("src", "global_size", "reduce_size", "flops", "mem_bytes", "parallel")
stats = {"hits": 0, "stored": 0}

@functools.cache
def engine_hash() -> str:
  """The engine's source (every .py file of the tinygrad package): a program made by other code is never reused."""
  root = pathlib.Path(__file__).resolve().parent.parent
  h = hashlib.sha256()
  for f in sorted(root.rglob("*.py")):
    h.update(str(f.relative_to(root)).encode() + b"\0")
    try: h.update(f.read_bytes())
    except OSError: h.update(b"?")
  return h.hexdigest()

def program_key(ast: UOp, name: str, settings: tuple) -> str | None:
  """A name for the program that is the same in every process, or None when some node's arg has no stable text."""
  pos: dict[UOp, int] = {}
  lines = [engine_hash(), name, repr(settings)]
  for u in ast.toposort():
    pos[u] = len(pos)
    if " at 0x" in (arg := repr(u.arg)): return None  # an object's address: differs between processes
    lines.append(f"{u.op.name} {u.dtype.name} {arg} {[pos[s] for s in u.src]}")
  return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32]

def load(key: str) -> dict[str, Any] | None:
  if (raw := read_small(cache_dir("programs") / f"{key}.json")) is None: return None
  try: d = json.loads(raw)
  except ValueError: return None
  if not isinstance(d, dict) or any(f not in d for f in FIELDS): return None
  stats["hits"] += 1
  return d

def store(key: str, p: Any) -> None:
  try:
    d = cache_dir("programs")
    d.mkdir(parents=True, exist_ok=True)
    write_atomic(d / f"{key}.json", json.dumps({f: getattr(p, f) for f in FIELDS}).encode())  # atomic: whole entry or none
    stats["stored"] += 1
  except OSError: pass  # a read-only cache only costs the codegen next time
