"""A schedule as tinygrad 0.14's LINEAR UOp: `Tensor.linear_with_vars()` gives LINEAR(CALL, ...), one CALL per kernel or
copy in the order they run, and `run_linear` runs it. A kernel's CALL has its SINK(STORE ...) as src[0], a copy's CALL
its COPY; src[1:] are the buffers it writes, then those it reads (so `call.src[0].op is Ops.SINK` counts kernels, as
tinygrad's tests do). The CALL's arg carries the schedule item the runner runs."""
from __future__ import annotations
from tinygrad.uop.ops import UOp, Ops
from tinygrad.engine.schedule import ScheduleItem, kernel_params

class Step:
  """One schedule item inside a CALL's arg. Hashed by identity: two equal kernels over other buffers are two steps."""
  __slots__ = ("item",)
  def __init__(self, item: ScheduleItem): self.item = item
  def __repr__(self) -> str: return f"Step({self.item.kind})"

def _buffers(it: ScheduleItem) -> tuple[UOp, ...]:
  if it.kind == "copy": return (*it.outputs, it.ast.src[0])
  return tuple(it.bufs if it.bufs is not None else kernel_params(it)[1])

def to_linear(items: list[ScheduleItem]) -> UOp:
  return UOp(Ops.LINEAR, src=tuple(UOp(Ops.CALL, src=(it.ast, *_buffers(it)), arg=Step(it)) for it in items))

def linear_items(linear: UOp) -> list[ScheduleItem]:
  if linear.op is not Ops.LINEAR: raise TypeError(f"run_linear takes the LINEAR UOp of Tensor.linear_with_vars(), not {linear.op}")
  bad = [c.op for c in linear.src if c.op is not Ops.CALL or not isinstance(c.arg, Step)]
  if bad: raise TypeError(f"run_linear: a LINEAR of schedule CALLs (from Tensor.linear_with_vars) is needed; this one holds {bad[0]}")
  return [c.arg.item for c in linear.src]

def compile_linear(linear: UOp, beam: int | None = None, validate: bool = False, input_uops=None, profile=None) -> UOp:
  """Compiles every kernel of the schedule now (run_linear then only runs them); the LINEAR itself is unchanged."""
  from tinygrad.engine.realize import get_program
  for it in linear_items(linear):
    if it.kind == "kernel":
      ast, bufs = (it.params_ast, it.bufs) if it.params_ast is not None else kernel_params(it)
      get_program(ast, bufs[0].device)
  return linear

def run_linear(linear: UOp, var_vals: dict[str, int] | None = None, input_uops=(), update_stats: bool = True, jit: bool = False,
               wait: bool = False) -> None:
  """Runs the kernels and copies of a LINEAR from Tensor.linear_with_vars(), in order (GlobalCounters count them)."""
  from tinygrad.engine.realize import run_schedule
  if var_vals: raise NotImplementedError(f"run_linear: bound variables {sorted(var_vals)}: symbolic schedules don't exist here")
  run_schedule(linear_items(linear))
