"""The engine's one hook into the profiler.

With neither VIZ nor PROFILE set, `tracer` stays None and every call site in the engine is a single
`if tracing.tracer is not None` check. With one of them set, `tinygrad/__init__.py` calls
`profiler.recorder.install(attach=tracing.attach)`, which hands it an object implementing `Tracer` (and None when
recording stops): the profiler never imports the engine.
`tracer.capture_rewrites` is False under PROFILE=1 (timeline only): the engine then skips the rewrite calls.
"""
from __future__ import annotations
from typing import Protocol, Any, TYPE_CHECKING
if TYPE_CHECKING:
  from tinygrad.uop.ops import UOp, UPat

class Tracer(Protocol):
  capture_rewrites: bool
  capture_plans: bool  # also the optimizer's losing plans' rewrites (VIZ_PLANS=1), each in a "plan" context of its kernel's
  # contexts group rewrites: kind is "schedule", "kernel", "user" or "call" (a @function body); they nest; returns the context id.
  # A schedule's name is the user's line that realized it, its detail the shapes realized
  def context_begin(self, kind: str, name: str, loc: tuple[str, int], detail: str = "") -> int: ...
  def context_end(self, ctx_id: int) -> None: ...
  # one graph_rewrite call: name, caller file:line, input root; then its matches in order; then the output root
  # start_ns/end_ns: when it really ran, for a rewrite handed over later (an optimizer plan's, kept aside while it was tried)
  def rewrite_begin(self, name: str, loc: tuple[str, int], sink: UOp, start_ns: int | None = None) -> None: ...
  def rewrite_match(self, pat: UPat, before: UOp, after: UOp, ns: int = 0) -> None: ...  # ns: how long the match's rewrite took
  def rewrite_end(self, sink: UOp, end_ns: int | None = None) -> None: ...
  # a compiled kernel; ctx_id is the id of its codegen context; line_uops: per line of src, the uops it renders;
  # plans: the optimizer's candidates ({name, cost, chosen, why}). Returns the kernel id spans refer to.
  def kernel(self, name: str, device: str, src: str, global_size: tuple[int, ...], local_size: tuple[int, ...],
             flops: int, mem_bytes: int, ctx_id: int, uops: list[str], line_uops: list[list[UOp]] | None = None,
             plans: list[dict[str, Any]] | None = None, axis_kinds: list[str] | None = None) -> int: ...
  # what a schedule context made, in run order: [{kind: "kernel" | "copy", ast: UOp, kernel: kernel id | None,
  # reads: [BUFFER UOps], writes: [BUFFER UOps]}]
  def schedule(self, ctx_id: int, items: list[dict[str, Any]]) -> None: ...
  # a span on a track ("CPU", "CPU:1", "HOST", "TENSOR", ...); times in ns on time.perf_counter_ns's clock
  # what the engine's tracks are (a track's name before its first "/" -> kind), and the kind of every other track
  def track_kinds(self, kinds: dict[str, str], default: str) -> None: ...
  def span(self, track: str, name: str, start_ns: int, end_ns: int, cat: str, args: dict[str, Any]) -> None: ...
  def counter(self, track: str, name: str, ts_ns: int, value: float) -> None: ...
  def marker(self, name: str, ts_ns: int) -> None: ...
  # one end of an arrow between spans: phase "s" inside the span that made some data, "f" at the span that used it
  # (a copy between devices); the two share fid
  def flow(self, fid: str, phase: str, track: str, name: str, cat: str, ts_ns: int) -> None: ...
  def flush(self) -> None: ...

tracer: Tracer | None = None

# the engine's own tracks; every other track is a device's ("CPU", "CUDA:1/copy"): the trace carries these kinds
TRACK_KINDS = {"HOST": "host", "TENSOR": "tensor"}

def attach(t: Tracer | None) -> None:
  """Where the profiler's recorder is plugged in (and out, with None)."""
  global tracer
  if t is not None: t.track_kinds(TRACK_KINDS, "device")
  tracer = t
