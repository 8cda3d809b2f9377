"""Two runs kernel by kernel: did a change make it faster, and which kernel? (`tinyviz compare A B`.)

Kernels are matched by name; one that only one side has by name is matched by its source (a code change that
renamed a kernel but rendered the same program). Per kernel and side: runs, total, mean and self time (a span's time
less that of the spans nested in it on its track: a foreign trace's op spans nest, kernels do not). Then the kernels
only one side has, totals per device and for the whole run."""
from __future__ import annotations
import hashlib, json, os, sys
from dataclasses import dataclass, field, asdict
from typing import Any
from profiler.events import Event, Kernel, Span
from profiler.summary import fmt_ns, is_kernel_cat, self_times, _table

@dataclass
class Side:
  count: int = 0
  total_ns: int = 0
  self_ns: int = 0
  devices: set[str] = field(default_factory=set)
  src_hash: str | None = None
  kernel: int | None = None  # the id of its Kernel event (the first run's), when the trace has one
  @property
  def mean_ns(self) -> float: return self.total_ns / self.count if self.count else 0.0

@dataclass
class Row:
  name: str          # A's name (B's when only B has it)
  renamed: str | None  # B's name when it was matched by source under another name
  a: Side | None
  b: Side | None
  @property
  def delta_ns(self) -> int: return (self.b.total_ns if self.b else 0) - (self.a.total_ns if self.a else 0)
  @property
  def ratio(self) -> float | None: return self.b.total_ns / self.a.total_ns if self.a and self.b and self.a.total_ns else None

@dataclass
class Comparison:
  rows: list[Row]               # matched kernels, by |delta|
  only_a: list[Row]
  only_b: list[Row]
  devices: dict[str, tuple[int, int]]  # device -> (A's kernel time, B's)
  total: tuple[int, int]
  all_spans: tuple[bool, bool]  # a side with no kernel spans is compared over all its spans

# a span as compare reads it: (track, name, start_ns, end_ns, cat, kernel id or None); kernels: id -> (device, src)
SpanRow = tuple[str, str, int, int, str, "int | None"]
KernelInfo = dict[int, tuple[str, str]]

def span_self_times(spans: list[SpanRow]) -> list[int]:
  return self_times([(s[0], s[2], s[3]) for s in spans])

def from_events(events: list[Event]) -> tuple[list[SpanRow], KernelInfo]:
  kernels = {e.id: (e.device, e.src) for e in events if isinstance(e, Kernel)}
  spans = [(e.track, e.name, e.start_ns, e.end_ns, e.cat, k if isinstance(k := e.args.get("kernel"), int) else None)
           for e in events if isinstance(e, Span)]
  return spans, kernels

def _sides(spans: list[SpanRow], kernels: KernelInfo) -> tuple[dict[str, Side], bool]:
  selfs = span_self_times(spans)
  picked = [i for i, s in enumerate(spans) if is_kernel_cat(s[4])]
  all_spans = not picked
  if all_spans: picked = list(range(len(spans)))
  out: dict[str, Side] = {}
  for i in picked:
    track, name, start, end, _, kid = spans[i]
    k = kernels.get(kid) if kid is not None else None
    side = out.setdefault(name, Side())
    side.count += 1
    side.total_ns += max(0, end - start)
    side.self_ns += selfs[i]
    side.devices.add(k[0] if k is not None else track.split("/")[0])
    if k is not None and side.kernel is None: side.kernel = kid
    if k is not None and k[1] and side.src_hash is None: side.src_hash = hashlib.sha256(k[1].encode()).hexdigest()[:16]
  return out, all_spans

def compare(a: list[Event], b: list[Event]) -> Comparison:
  return compare_spans(*from_events(a), *from_events(b))

def compare_spans(spans_a: list[SpanRow], kernels_a: KernelInfo, spans_b: list[SpanRow], kernels_b: KernelInfo) -> Comparison:
  sa, all_a = _sides(spans_a, kernels_a)
  sb, all_b = _sides(spans_b, kernels_b)
  rows = [Row(n, None, sa[n], sb[n]) for n in sa if n in sb]
  left_a, left_b = [n for n in sa if n not in sb], [n for n in sb if n not in sa]
  by_src = {sb[n].src_hash: n for n in left_b if sb[n].src_hash}
  only_a = []
  for n in left_a:
    if (m := by_src.pop(sa[n].src_hash, None) if sa[n].src_hash else None) is not None:
      rows.append(Row(n, m, sa[n], sb[m])); left_b.remove(m)
    else: only_a.append(Row(n, None, sa[n], None))
  only_b = [Row(n, None, None, sb[n]) for n in left_b]
  rows.sort(key=lambda r: -abs(r.delta_ns))
  only_a.sort(key=lambda r: -r.a.total_ns)  # type: ignore[union-attr]
  only_b.sort(key=lambda r: -r.b.total_ns)  # type: ignore[union-attr]
  devices: dict[str, list[int]] = {}
  for k, sides in ((0, sa), (1, sb)):
    for s in sides.values():
      for d in s.devices: devices.setdefault(d, [0, 0])[k] += s.total_ns // len(s.devices)
  total = (sum(s.total_ns for s in sa.values()), sum(s.total_ns for s in sb.values()))
  return Comparison(rows, only_a, only_b, {d: (v[0], v[1]) for d, v in sorted(devices.items())}, total, (all_a, all_b))

# *** output ***

def _ratio(r: float | None) -> str: return "-" if r is None else f"{r:.2f}x"
def _delta(ns: int) -> str: return ("+" if ns > 0 else "-" if ns < 0 else "") + fmt_ns(abs(ns))
def _cut(name: str) -> str: return name if len(name) <= 40 else name[:37] + "..."

def format_comparison(c: Comparison, label_a: str, label_b: str, top: int = 40) -> str:
  out = [f"A: {label_a}", f"B: {label_b}"]
  for side, flag in zip("AB", c.all_spans):
    if flag: out.append(f"({side} has no kernel spans: all its spans are compared)")
  out += ["", f"{len(c.rows)} kernels in both, by |B - A|" + (f" (top {top})" if len(c.rows) > top else "")]
  rows = [[_cut(r.name) + (f" (B: {_cut(r.renamed)})" if r.renamed else ""), str(r.a.count), str(r.b.count),  # type: ignore[union-attr]
           fmt_ns(r.a.total_ns), fmt_ns(r.b.total_ns), fmt_ns(r.a.mean_ns), fmt_ns(r.b.mean_ns),  # type: ignore[union-attr]
           fmt_ns(r.a.self_ns), fmt_ns(r.b.self_ns), _delta(r.delta_ns), _ratio(r.ratio)] for r in c.rows[:top]]  # type: ignore[union-attr]
  out += _table(["kernel", "n A", "n B", "total A", "total B", "mean A", "mean B", "self A", "self B", "B - A", "B/A"], rows, left={0})
  for what, lst, get in (("only in A", c.only_a, lambda r: r.a), ("only in B", c.only_b, lambda r: r.b)):
    out += ["", f"{len(lst)} kernels only in {what[-1]}" + (f" (top {top})" if len(lst) > top else "")]
    if lst:
      out += _table(["kernel", "count", "total", "mean", "self"],
                    [[_cut(r.name), str(get(r).count), fmt_ns(get(r).total_ns), fmt_ns(get(r).mean_ns), fmt_ns(get(r).self_ns)] for r in lst[:top]], left={0})
  out += ["", "kernel time per device"]
  out += _table(["device", "A", "B", "B - A", "B/A"], [[d, fmt_ns(x), fmt_ns(y), _delta(y - x), _ratio(y / x if x else None)]
                                                       for d, (x, y) in c.devices.items()], left={0})
  x, y = c.total
  out += ["", f"whole run: A {fmt_ns(x)}, B {fmt_ns(y)}, B - A {_delta(y - x)}, B/A {_ratio(y / x if x else None)}"]
  return "\n".join(out)

def _side_json(s: Side | None) -> dict[str, Any] | None:
  if s is None: return None
  d = asdict(s)
  d["devices"], d["mean_ns"] = sorted(s.devices), s.mean_ns
  return d

def comparison_json(c: Comparison, label_a: str, label_b: str) -> dict[str, Any]:
  row = lambda r: {"name": r.name, "renamed": r.renamed, "a": _side_json(r.a), "b": _side_json(r.b), "delta_ns": r.delta_ns, "ratio": r.ratio}  # noqa: E731
  return {"a": label_a, "b": label_b, "kernels": [row(r) for r in c.rows], "only_a": [row(r) for r in c.only_a],
          "only_b": [row(r) for r in c.only_b], "all_spans": {"a": c.all_spans[0], "b": c.all_spans[1]},
          "devices": {d: {"a_ns": x, "b_ns": y} for d, (x, y) in c.devices.items()}, "total": {"a_ns": c.total[0], "b_ns": c.total[1]}}

def main(argv: list[str]) -> int:
  """`compare A B [--json]`: A and B each one trace file, or tinygrad's rewrites.pkl and profile.pkl of one run."""
  from profiler.load import group_paths, load_groups_reporting
  as_json = "--json" in argv
  files = [a for a in argv if a != "--json"]
  groups = group_paths(files) if files else []
  if len(groups) != 2 or any(a.startswith("-") for a in files):
    print("usage: tinyviz compare A B [--json]   (A, B: trace files; tinygrad's rewrites.pkl.X profile.pkl.X count as one)", file=sys.stderr)
    return 2
  if (traces := load_groups_reporting(groups)) is None: return 1
  (la, ta), (lb, tb) = traces
  c = compare(ta.events, tb.events)
  try: print(json.dumps(comparison_json(c, la, lb), indent=1) if as_json else format_comparison(c, la, lb), flush=True)
  except BrokenPipeError: os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
  return 0
