"""GPU event times on the host clock. Pure: the CUDA device feeds it what the driver reported.

When a device opens (and again after each synchronize, when the GPU is idle) it records an anchor event, waits for it,
and reads the host clock: `anchor_ns`. A kernel's start event is then at `anchor_ns + elapsed(anchor, start)` and it
ends `elapsed(start, end)` later (cuEventElapsedTime: float milliseconds, ~0.5 us resolution; a fresh anchor keeps the
float precise). The host read happens just after the anchor really completed, so the error is the wake-up latency of
cuEventSynchronize, a few microseconds. What is physically certain corrects it: a span starts no earlier than the host
launched it and than the previous span on the stream ended, and ends no later than the host saw the stream finish."""
from __future__ import annotations

def place_on_host(anchor_ns: int, gpu: list[tuple[float, float, int]], prev_end_ns: int, observed_ns: int) -> tuple[list[tuple[int, int]], int]:
  """gpu: one (start ms after the anchor, duration ms, host ns at launch) per kernel or copy, in stream order.
  prev_end_ns: where the previous span on this stream ended; observed_ns: a host time at which all of them had finished.
  Returns (start_ns, end_ns) per entry, monotone and inside [launch, observed_ns], and the largest correction made (ns)."""
  out: list[tuple[int, int]] = []
  prev, worst = prev_end_ns, 0
  for start_ms, dur_ms, launch_ns in gpu:
    st = anchor_ns + round(start_ms * 1e6)
    en = st + max(round(dur_ms * 1e6), 0)
    shift = max(launch_ns, prev) - st  # > 0: the anchor put it too early; move the whole span, keeping its duration
    if shift > 0: st, en = st + shift, en + shift
    cst, cen = min(st, observed_ns), min(en, observed_ns)
    worst = max(worst, shift, en - cen)
    out.append((cst, cen))
    prev = cen
  return out, worst
