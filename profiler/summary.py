"""Where the time went: kernels by total time and totals per device, as data and as a terminal table.

Kernel spans are those with a category naming kernels ("kernel" in ours; PyTorch's GPU "kernel"). A trace
without any (a CPU-only PyTorch trace) is summarised over all its spans, and the table says so.
"""
from __future__ import annotations
import json, os, sys
from dataclasses import dataclass, field
from typing import Any
from profiler.events import Counter, Event, Flow, Kernel, Marker, Span

@dataclass
class Row:
  name: str
  device: str
  count: int = 0
  total_ns: int = 0
  self_ns: int = 0    # less the time of spans nested inside (a Chrome trace's op spans nest; kernels do not)
  flops: int = 0      # summed over runs whose FLOPs are known
  bytes: int = 0
  @property
  def mean_ns(self) -> float: return self.total_ns / self.count if self.count else 0.0
  @property
  def gflops(self) -> float | None: return self.flops / self.total_ns if self.flops and self.total_ns else None
  @property
  def gbs(self) -> float | None: return self.bytes / self.total_ns if self.bytes and self.total_ns else None

@dataclass
class DeviceTotal(Row):
  busy_ns: int = 0    # union of its kernel spans: overlapping kernels counted once
  other_ns: dict[str, int] = field(default_factory=dict)  # non-kernel spans (copy, compile, ...) by category

@dataclass
class Summary:
  kernels: list[Row]
  devices: list[DeviceTotal]
  all_spans: bool     # True when the trace had no kernel spans and every span was counted instead
  duration_ns: int = 0  # from the trace's first timestamp to its last (spans, counters, markers, flows)

def is_kernel_cat(cat: str) -> bool: return "kernel" in cat.lower()

def _device(span: Span, kernel: Kernel | None, processes: dict[str, str] | None = None) -> str:
  if kernel is not None: return kernel.device
  # a Chrome thread's process, as its reader named it: the name may hold '/' itself (JAX's "/host:CPU")
  return p if processes and (p := processes.get(span.track)) is not None else span.track.split("/")[0]

def _work(span: Span, kernel: Kernel | None) -> tuple[int, int]:
  if kernel is not None: return kernel.flops, kernel.bytes
  a = span.args
  def num(*keys: str) -> int:
    v = next((a[k] for k in keys if k in a), 0)
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) < 1e30 else 0
  return num("flops", "FLOPs", "FLOPS"), num("bytes", "mem_bytes", "Bytes")

def _busy(intervals: list[tuple[int, int]]) -> int:
  total, end = 0, None
  for s, e in sorted(intervals):
    if end is None or s > end: total, end = total + (e - s), e
    elif e > end: total, end = total + (e - end), e
  return total

def self_times(spans: list[tuple[str, int, int]]) -> list[int]:
  """For (track, start_ns, end_ns) spans: each one's time less that of the spans directly nested in it on its track."""
  out = [max(0, e - s) for _, s, e in spans]
  by_track: dict[str, list[int]] = {}
  for i, sp in enumerate(spans): by_track.setdefault(sp[0], []).append(i)
  for idx in by_track.values():
    idx.sort(key=lambda i: (spans[i][1], -spans[i][2]))
    stack: list[int] = []
    for i in idx:
      _, s, e = spans[i]
      while stack and spans[stack[-1]][2] <= s: stack.pop()
      if stack and e <= spans[stack[-1]][2]: out[stack[-1]] -= max(0, e - s)
      stack.append(i)
  return [max(0, t) for t in out]

def summarize(events: list[Event], processes: dict[str, str] | None = None) -> Summary:
  """processes: a Chrome trace's thread track -> process name (Trace.meta["processes"]), the device of its spans."""
  kernels = {e.id: e for e in events if isinstance(e, Kernel)}
  spans = [e for e in events if isinstance(e, Span)]
  selfs = dict(zip(map(id, spans), self_times([(s.track, s.start_ns, s.end_ns) for s in spans])))
  picked = [s for s in spans if is_kernel_cat(s.cat)]
  all_spans = not picked
  if all_spans: picked = spans
  rows: dict[tuple[str, str], Row] = {}
  devices: dict[str, DeviceTotal] = {}
  intervals: dict[str, list[tuple[int, int]]] = {}
  for s in picked:
    k = kernels.get(s.args.get("kernel")) if isinstance(s.args.get("kernel"), int) else None
    dev, (flops, nbytes), dur = _device(s, k, processes), _work(s, k), max(0, s.end_ns - s.start_ns)
    for r in (rows.setdefault((s.name, dev), Row(s.name, dev)), devices.setdefault(dev, DeviceTotal("", dev))):
      r.count, r.total_ns, r.flops, r.bytes = r.count + 1, r.total_ns + dur, r.flops + flops, r.bytes + nbytes
      r.self_ns += selfs[id(s)]
    intervals.setdefault(dev, []).append((s.start_ns, s.start_ns + dur))
  if not all_spans:
    for s in spans:
      if not is_kernel_cat(s.cat):
        dev = _device(s, None, processes)
        d = devices.setdefault(dev, DeviceTotal("", dev))
        d.other_ns[s.cat or "other"] = d.other_ns.get(s.cat or "other", 0) + max(0, s.end_ns - s.start_ns)
  for dev, d in devices.items(): d.busy_ns = _busy(intervals.get(dev, []))
  return Summary(sorted(rows.values(), key=lambda r: -r.total_ns), sorted(devices.values(), key=lambda d: -d.total_ns), all_spans,
                 _duration(events))

def _duration(events: list[Event]) -> int:
  lo, hi = None, None
  for e in events:
    if isinstance(e, Span): a, b = e.start_ns, max(e.start_ns, e.end_ns)
    elif isinstance(e, (Counter, Marker, Flow)): a = b = e.ts_ns
    else: continue
    if lo is None or a < lo: lo = a
    if hi is None or b > hi: hi = b
  return 0 if lo is None or hi is None else hi - lo

def _row_json(r: Row) -> dict[str, Any]:
  return {"name": r.name, "device": r.device, "count": r.count, "total_ns": r.total_ns, "self_ns": r.self_ns, "mean_ns": r.mean_ns,
          "flops": r.flops, "bytes": r.bytes, "gflops": r.gflops, "gbs": r.gbs}

def summary_json(s: Summary) -> dict[str, Any]:
  """The summary as JSON (`tinyviz summary --json`): every row, not only the top ones; times in ns."""
  return {"duration_ns": s.duration_ns, "all_spans": s.all_spans,
          "what": "all spans (no kernel spans in this trace)" if s.all_spans else "kernel spans",
          "rows": [_row_json(r) for r in s.kernels],
          "devices": [{**_row_json(d), "busy_ns": d.busy_ns, "other_ns": dict(d.other_ns)} for d in s.devices]}

# *** the terminal table ***

def fmt_ns(ns: float) -> str:
  if ns >= 1e9: return f"{ns/1e9:.2f} s"
  if ns >= 1e6: return f"{ns/1e6:.2f} ms"
  if ns >= 1e3: return f"{ns/1e3:.2f} us"
  return f"{ns:.0f} ns"

def _rate(v: float | None) -> str: return "-" if v is None else f"{v:.2f}"

def _table(head: list[str], rows: list[list[str]], left: set[int]) -> list[str]:
  """Text columns (indices in `left`) align left, numbers right."""
  widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
  def line(r: list[str]) -> str:
    return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
  return [line(head), "  ".join("-" * w for w in widths)] + [line(r) for r in rows]

def format_summary(s: Summary, top: int = 30) -> str:
  what = "spans (no kernel spans in this trace)" if s.all_spans else "kernels"
  out = [f"top {min(top, len(s.kernels))} of {len(s.kernels)} {what} by total time"]
  rows = [[r.name if len(r.name) <= 48 else r.name[:45] + "...", r.device, str(r.count), fmt_ns(r.total_ns), fmt_ns(r.self_ns),
           fmt_ns(r.mean_ns), _rate(r.gflops), _rate(r.gbs)] for r in s.kernels[:top]]
  out += _table(["name", "device", "count", "total", "self", "mean", "GFLOPS", "GB/s"], rows, left={0, 1})
  out += ["", "totals per device"]
  rows = [[d.device, str(d.count), fmt_ns(d.total_ns), fmt_ns(d.busy_ns), _rate(d.gflops), _rate(d.gbs),
           ", ".join(f"{c} {fmt_ns(t)}" for c, t in sorted(d.other_ns.items()))] for d in s.devices]
  out += _table(["device", "count", "total", "busy", "GFLOPS", "GB/s", "other spans"], rows, left={0, 6})
  return "\n".join(out)

def main(argv: list[str]) -> int:
  """`summary FILE [--json]` (or tinygrad's rewrites.pkl and profile.pkl of one run): prints the table (or JSON), and
  the reader's warnings on stderr."""
  from profiler.load import load_group
  from profiler.tracefile import TraceError
  as_json = "--json" in argv
  argv = [a for a in argv if a != "--json"]
  if len(argv) not in (1, 2) or any(a.startswith("--") for a in argv):
    print("usage: tinyviz summary FILE [FILE2] [--json]", file=sys.stderr)
    return 2
  name = " + ".join(argv)
  try: trace = load_group(argv)
  except (OSError, TraceError) as e:
    print(f"tinyviz: {name}: {e}", file=sys.stderr)
    return 1
  for w in trace.warnings: print(f"warning: {name}: {w}", file=sys.stderr)
  s = summarize(trace.events, trace.meta.get("processes"))
  try: print(json.dumps(summary_json(s), indent=1) if as_json else format_summary(s), flush=True)
  except BrokenPipeError:  # `tinyviz summary f | head`: the reader left, that is fine
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
  return 0

if __name__ == "__main__": sys.exit(main(sys.argv[1:]))
