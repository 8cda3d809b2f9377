"""Several processes' traces as one run on one clock (`tinyviz merge A B ... -o OUT`, `tinyviz A B --merge`): one
process per GPU on a tinybox, or several boxes, each wrote its own file.

The clock: each of our runs maps its perf_counter_ns clock to wall time by its `run` event (start_time taken at
clock_ns), so its times move by start_time * 1e9 - clock_ns onto epoch nanoseconds; a Chrome trace has no such
anchor and keeps its own timestamps (epoch-based in PyTorch's and JAX's). Processes are kept apart by their track
names: each track becomes `<process>/<track>` (the process as `script pid N`), which the timeline groups under the
process; a Chrome trace's threads get track events naming their own process (`<file>/<its process>`), so they stay
grouped by it as when the trace is opened alone. Ids (uops, patterns, contexts, rewrites, kernels, flows) are renumbered so that no two runs share one."""
from __future__ import annotations
import os
from typing import Any, Callable
from msgspec.structs import replace
from profiler.events import (Event, Run, RunEnd, UOpDef, PatternDef, ContextBegin, ContextEnd, Rewrite, Kernel, Schedule, Span,
                             Counter, Marker, Flow, TrackDef)
from profiler.tracefile import Trace

def _label(run: Run | None, fallback: str, taken: set[str]) -> str:
  base = f"{os.path.basename(run.script) or 'python'} pid {run.pid}" if run is not None else os.path.basename(fallback)
  base = base.replace("/", "_") or "run"
  label, n = base, 2
  while label in taken: label, n = f"{base} ({n})", n + 1
  taken.add(label)
  return label

def _max_ids(events: list[Event]) -> dict[str, int]:
  m = {"uop": 0, "pattern": 0, "ctx": 0, "rewrite": 0, "kernel": 0}
  for e in events:
    t = type(e)
    if t is UOpDef: m["uop"] = max(m["uop"], abs(e.id))
    elif t is PatternDef: m["pattern"] = max(m["pattern"], e.id)
    elif t is ContextBegin: m["ctx"] = max(m["ctx"], e.id)
    elif t is Rewrite: m["rewrite"] = max(m["rewrite"], e.id)
    elif t is Kernel: m["kernel"] = max(m["kernel"], e.id)
  return m

def _chrome_tracks(trace: Trace, track: Callable[[str], str]) -> list[TrackDef]:
  """A Chrome trace's tracks as track events: threads, each with its process as the reader named it (a process name
  may hold '/': JAX's "/host:CPU"), so the merged run groups them as the trace alone does. None for ours (they say)."""
  other = trace.meta.get("otherData")
  if trace.kind != "chrome" or (isinstance(other, dict) and other.get("tinyviz")): return []
  procs: dict[str, str] = trace.meta.get("processes") or {}
  names = dict.fromkeys(e.track for e in trace.events if isinstance(e, (Span, Counter, Flow)))
  return [TrackDef(track(n), "thread", track(procs[n]) if n in procs else "") for n in names]

def merge(traces: list[tuple[str, Trace]]) -> tuple[list[Event], list[str]]:
  """The events of one run holding all of `traces` ((name, trace) each), and warnings about how they were placed."""
  if not traces: raise ValueError("nothing to merge")
  warnings: list[str] = []
  runs = [next((e for e in t.events if isinstance(e, Run)), None) for _, t in traces]
  anchored = [r for r in runs if r is not None]
  start = min((r.start_time for r in anchored), default=0.0)
  out: list[Event] = [Run("merge", [name for name, _ in traces], start, round(start * 1e9), 0, anchored[0].version if anchored else "",
                          "import")]
  off = {"uop": 0, "pattern": 0, "ctx": 0, "rewrite": 0, "kernel": 0}
  taken: set[str] = set()
  end_ns = out[0].clock_ns
  for i, ((name, trace), run) in enumerate(zip(traces, runs)):
    proc = _label(run, name, taken)
    dt = round(run.start_time * 1e9) - run.clock_ns if run is not None else 0
    if run is None:
      warnings.append(f"{name}: no wall-clock anchor (a Chrome trace): placed at its own timestamps")
    u, p, c, r, k = (off[x] for x in ("uop", "pattern", "ctx", "rewrite", "kernel"))
    uid = lambda v: v + u if v >= 0 else v - u  # noqa: E731  (ids of nodes never interned are negative)
    track = lambda t: f"{proc}/{t}"  # noqa: E731
    out.extend(_chrome_tracks(trace, track))
    for e in trace.events:
      t = type(e)
      if t is Run: continue
      if t is RunEnd: end_ns = max(end_ns, e.ts_ns + dt); continue
      if t is UOpDef: e = replace(e, id=uid(e.id), src=tuple(uid(s) for s in e.src))
      elif t is PatternDef: e = replace(e, id=e.id + p)
      elif t is ContextBegin: e = replace(e, id=e.id + c, parent=None if e.parent is None else e.parent + c, ts_ns=e.ts_ns + dt)
      elif t is ContextEnd: e = replace(e, id=e.id + c, ts_ns=e.ts_ns + dt)
      elif t is Rewrite:
        e = replace(e, id=e.id + r, ctx=None if e.ctx is None else e.ctx + c, input=uid(e.input), output=uid(e.output),
                    matches=[(None if pid is None else pid + p, uid(b), uid(a)) for pid, b, a in e.matches],
                    start_ns=e.start_ns + dt)
      elif t is Kernel: e = replace(e, id=e.id + k, ctx=None if e.ctx is None else e.ctx + c,
                                    line_uops=[[uid(x) for x in line] for line in e.line_uops])
      elif t is Schedule:
        e = replace(e, ctx=e.ctx + c, items=[{**it, "ast": uid(it["ast"]), "kernel": None if it.get("kernel") is None else it["kernel"] + k,
                                              "reads": [uid(b) for b in it["reads"]], "writes": [uid(b) for b in it["writes"]]} for it in e.items])
      elif t is Span:
        args: dict[str, Any] = e.args
        if isinstance(args.get("kernel"), int): args = {**args, "kernel": args["kernel"] + k}
        e = replace(e, track=track(e.track), start_ns=e.start_ns + dt, end_ns=e.end_ns + dt, args=args)
        end_ns = max(end_ns, e.end_ns)
      elif t is Counter: e = replace(e, track=track(e.track), ts_ns=e.ts_ns + dt)
      elif t is TrackDef: e = replace(e, name=track(e.name))
      elif t is Marker: e = replace(e, name=f"{proc}: {e.name}", ts_ns=e.ts_ns + dt)
      elif t is Flow: e = replace(e, id=f"{i}:{e.id}", track=track(e.track), ts_ns=e.ts_ns + dt)
      out.append(e)
    m = _max_ids(trace.events)
    for x in off: off[x] += m[x]
  if not -2**63 <= end_ns < 2**63: raise ValueError("the merged times do not fit 64 bits")
  out.append(RunEnd(end_ns))
  return out, warnings

def main(argv: list[str]) -> int:
  """`merge A B ... -o OUT`: the runs as one trace file of ours."""
  import sys
  from profiler.load import group_paths, load_groups_reporting
  from profiler.tracefile import TraceWriter
  if "-o" not in argv or argv.index("-o") == len(argv) - 1:
    print("usage: tinyviz merge A B ... -o OUT.tinyviz.jsonl", file=sys.stderr)
    return 2
  i = argv.index("-o")
  out_path, files = argv[i + 1], argv[:i] + argv[i + 2:]
  groups = group_paths(files)
  if len(groups) < 2:
    print("usage: tinyviz merge A B ... -o OUT.tinyviz.jsonl (at least two runs)", file=sys.stderr)
    return 2
  if (traces := load_groups_reporting(groups)) is None: return 1
  try: events, warns = merge(traces)
  except ValueError as e:
    print(f"tinyviz: cannot merge: {e}", file=sys.stderr)
    return 1
  for w in warns: print(f"warning: {w}", file=sys.stderr)
  try:
    w = TraceWriter(out_path)
    for j in range(0, len(events), 10_000): w.write(events[j:j + 10_000])
    w.close()
  except OSError as e:
    print(f"tinyviz: {out_path}: {e}", file=sys.stderr)
    return 1
  print(f"wrote {out_path} ({len(traces)} runs, {len(events)} events)")
  return 0
