"""Which plan each kernel chose, kept on disk so the next process builds only that one."""
from __future__ import annotations
import hashlib, pathlib
from tinygrad.helpers import cache_dir, read_small, write_atomic
from tinygrad.uop.ops import UOp
from tinygrad.codegen.program_cache import engine_hash

# like tinygrad's BEAM cache. The key also holds the engine's source hash (as the program cache's): a choice made by other
# code is searched again. PLAN_VERSION alone kept choices across changes to the cost model that nobody bumped it for:
# a session's cache kept a plan for the digits' conv3 weight gradient 1.27x slower (alone) than a fresh search picks
PLAN_VERSION = "10"  # 10: a weight gradient's window tile with two rows in 16 lanes, the packed window and rows tiles, repeated lanes as a shuffle; 9: two 8-wide rows in 16 lanes (vectorize._halves); 8: the window tile, cost of lines and of scratch arrays past L1; 7: cost.slp_broadcasts (AVX-512 picks); 6: the 6-row tile on a packed panel, cost.machine_cost
def plan_dir() -> pathlib.Path: return cache_dir("plans")

def plan_key(sink: UOp, vector: bool | int, max_upcast: int) -> str:
  """A name for the kernel that is the same in every process: its nodes in order, each with its sources' positions."""
  pos: dict[UOp, int] = {}
  lines = [f"{PLAN_VERSION} {engine_hash()} {vector} {max_upcast}"]
  for u in sink.toposort():
    pos[u] = len(pos)
    lines.append(f"{u.op.name} {u.dtype.name} {u.arg!r} {[pos[s] for s in u.src]}")
  return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32]

def remembered(key: str) -> str | None:
  return None if (got := read_small(plan_dir() / key)) is None else got.decode(errors="replace")

def remember(key: str, name: str) -> None:
  try:
    d = plan_dir()
    d.mkdir(parents=True, exist_ok=True)
    write_atomic(d / key, name.encode())  # atomic: another process reads the whole name or nothing
  except OSError: pass  # a read-only cache only costs the search next time
