"""Real tinygrad's own VIZ/PROFILE files (`rewrites.pkl.<user>`, `profile.pkl.<user>`) as our events.

The pickles are read by profiler/safe_pickle.py (nothing in them runs; no tinygrad needed); their objects are
stand-ins read here by field name, so a tinygrad whose classes gained or lost fields still reads, and anything
that does not map is a warning. docs/trace-format.md ("tinygrad's files") lists what maps to what.

rewrites.pkl: RewriteTrace(keys: [TracingKey], rewrites: [[TrackedGraphRewrite]], uop_fields: {num: (op, dtype,
src nums, arg, tag)}): a context per key, a rewrite per TrackedGraphRewrite, a UOp per number, a pattern per
matched UPat location. profile.pkl: [ProfileDeviceEvent, ProfileRangeEvent, ProfilePointEvent, ProfileGraphEvent,
...] with Decimal microsecond times: tracks per device (as tinygrad names them), spans, memory counters, markers.
"""
from __future__ import annotations
import bisect, os, re, struct
from decimal import Decimal
from typing import Any, Iterable
from profiler.events import ARG_MAX, ContextBegin, ContextEnd, Counter, Event, Kernel, Marker, PatternDef, Rewrite, Schedule, Span, UOpDef
from profiler.safe_pickle import Stub, fields, loads, stub_name
from profiler.tinygrad_enums import ENUMS_0_14
from profiler.tracefile import Trace, TraceError, Warnings

PICKLE_PROTOCOLS = range(2, 6)

def is_pickle(head: bytes) -> bool:
  """A pickle of protocol 2-5 starts with PROTO n (tinygrad writes 4 or 5); our traces and JSON never start with 0x80."""
  return len(head) >= 2 and head[0] == 0x80 and head[1] in PICKLE_PROTOCOLS

_STDLIB = re.compile(r"/lib/python\d+\.\d+/(?!site-packages/|dist-packages/)")
_SLOT = re.compile(r"ParamArg\(slot=(\d+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
def ansistrip(s: str) -> str: return _ANSI.sub("", s)

def _kind(obj: Any) -> str | None:
  if stub_name(obj) is not None and type(obj).__class_name__ == "RewriteTrace": return "rewrites"
  if isinstance(obj, list) and all(isinstance(e, Stub) and type(e).__class_name__.startswith("Profile") for e in obj[:1000]): return "profile"
  return None

def read_pickles(blobs: Iterable[tuple[str, bytes]]) -> Trace:
  """One run from tinygrad pickles: a rewrites file, a profile file, or both (told apart by what is in them).
  Raises TraceError when a file is refused or is not one of tinygrad's."""
  parts: dict[str, Any] = {}
  for label, data in blobs:
    try: obj, _ = loads(data)
    except Exception as e: raise TraceError(f"{label}: {e}") from None  # safe_pickle names what it refused
    if (k := _kind(obj)) is None:
      raise TraceError(f"{label}: a pickle, but not tinygrad's rewrites.pkl (a RewriteTrace) nor its profile.pkl (a list of Profile*Event)")
    if k in parts: raise TraceError(f"{label}: a second tinygrad {k} file in one run")
    parts[k] = obj
  return Importer().run(parts.get("rewrites"), parts.get("profile"))

# *** reading stand-ins by name ***

def _get(o: Any, name: str, pos: int | None = None, default: Any = None) -> Any:
  """A field of a stand-in: its pickled state by name, else its constructor arg at `pos` (a __reduce__ to the class)."""
  if not isinstance(o, Stub): return default
  f = fields(o)
  if name in f: return f[name]
  if pos is not None and pos < len(o._args): return o._args[pos]
  return default

# a time of 10^15 us (~31 years) or more is damage (and int() of Decimal("1e999999999") would not end)

def _dec(v: Any) -> Decimal | None:
  """A time in microseconds, or None when it is not a finite number of a sane size."""
  if isinstance(v, bool) or not isinstance(v, (Decimal, int, float)): return None
  if isinstance(v, int) and abs(v) >= 1 << 64: return None
  d = v if isinstance(v, Decimal) else Decimal(v)
  return d if d.is_finite() and (d.is_zero() or d.adjusted() < 15) else None  # adjusted(): no arithmetic that could overflow

def _us_to_ns(v: Decimal) -> int: return int(v * 1000)

class Importer:
  def __init__(self) -> None:
    self.w = Warnings()
    self.events: list[Event] = []
    self.unmapped: dict[str, int] = {}
    self.enum_misfit: set[str] = set()
    self.patterns: dict[tuple[str, int], int] = {}
    self.kernel_by_key: dict[Any, int] = {}  # profile key (bytes) or function name -> kernel id
    self.kernels_by_name: dict[str, list[int]] = {}  # a name compiled more than once (per device): each of its kernels
    self.ctx_by_key: dict[Any, tuple[int, str]] = {}  # a context's keys -> (its id, its name): how tinygrad ties spans to it
    self.kernel_device: dict[int, str] = {}
    self.kernels: dict[int, Kernel] = {}
    self.uop_rows: dict[int, UOpDef] = {}
    self.first_sink: dict[int, int] = {}  # context id -> the graph its first rewrite got (a kernel's: its SINK)
    self.linear: dict[int, int] = {}  # schedule context id -> the last LINEAR (of CALLs) one of its rewrites got

  def skip(self, what: str) -> None: self.unmapped[what] = self.unmapped.get(what, 0) + 1

  def run(self, rw: Any, prof: Any) -> Trace:
    if rw is not None: self.rewrites(rw)
    spans_at = len(self.events)
    if prof is not None: self.profile(prof)
    for kid, k in self.kernels.items(): k.device = self.kernel_device.get(kid, k.device)
    self.context_times()
    # kernels, then the schedules that name them, before the spans that refer to them
    self.events[spans_at:spans_at] = list(self.kernels.values()) + self.schedules()
    for what, n in sorted(self.unmapped.items()): self.w.add(f"tinygrad: {n} x {what} not mapped; skipped")
    for e in sorted(self.enum_misfit): self.w.add(f"tinygrad: {e}")
    meta = {"tinygrad": [k for k, v in (("rewrites", rw), ("profile", prof)) if v is not None]}
    return Trace(self.events, self.w.done(), "tinygrad", meta)

  def context_times(self) -> None:
    """A context's start and end: those of the span that made it (the rewrites file alone has no times)."""
    made: dict[int, Span] = {}
    for e in self.events:
      if type(e) is Span and isinstance(c := e.args.get("ctx"), int): made.setdefault(c, e)
    for e in self.events:
      if type(e) in (ContextBegin, ContextEnd) and (s := made.get(e.id)) is not None: e.ts_ns = s.start_ns if type(e) is ContextBegin else s.end_ns
    # each graph_rewrite is also a TINY span of its name, inside its context's span and in the same order: their times
    tiny = sorted((e for e in self.events if type(e) is Span and e.track == "TINY"), key=lambda e: e.start_ns)
    starts = [e.start_ns for e in tiny]
    by_ctx: dict[int, list[Rewrite]] = {}
    for e in self.events:
      if type(e) is Rewrite and e.ctx is not None: by_ctx.setdefault(e.ctx, []).append(e)
    for cid, span in made.items():
      i, rws = bisect.bisect_left(starts, span.start_ns), iter(by_ctx.get(cid, []))
      r = next(rws, None)
      while r is not None and i < len(tiny) and tiny[i].start_ns <= span.end_ns:
        if tiny[i].name == r.name: r.start_ns, r.dur_ns, r = tiny[i].start_ns, tiny[i].end_ns - tiny[i].start_ns, next(rws, None)
        i += 1

  # *** values: enums, dtypes, args as text ***

  def enum(self, o: Stub) -> str | None:
    cls = f"{type(o).__module_name__}.{type(o).__class_name__}"
    if (table := ENUMS_0_14.get(cls)) is None or len(o._args) != 1: return None
    v = o._args[0]
    if (name := table.get(v) if isinstance(v, int) else None) is None:
      self.enum_misfit.add(f"{cls}({v!r}) is not in tinygrad 0.14's numbering; shown as a number")
      return f"{type(o).__class_name__}({v!r})"
    return f"{type(o).__class_name__}.{name}"

  def dtype(self, o: Any) -> str:
    if not isinstance(o, Stub): return self.text(o)
    cls = type(o).__class_name__
    if cls == "DType":
      name = _get(o, "name", 2)
      count = _get(o, "count", 4, 1)
      return f"dtypes.{name}" + (f".vec({count})" if isinstance(count, int) and count > 1 else "")
    if cls == "PtrDType":
      base, size = _get(o, "_base", 5), _get(o, "size", 7, -1)
      return (self.dtype(base) if base is not None else f"dtypes.{_get(o, 'name', 2)}") + f".ptr({size})"
    return self.text(o)

  def text(self, v: Any, budget: int = ARG_MAX) -> str:
    """repr-like text of a value made of builtins and stand-ins, never longer than budget (walks no more than that)."""
    out: list[str] = []
    left = [budget]
    def put(s: str) -> bool:
      out.append(s[:left[0]])
      left[0] -= len(s)
      return left[0] > 0
    def go(x: Any, depth: int) -> bool:
      if left[0] <= 0: return False
      if depth > 20: return put("...")
      if isinstance(x, Stub):
        if (e := self.enum(x)) is not None: return put(e)
        cls = type(x).__class_name__
        if cls in ("DType", "PtrDType"): return put(self.dtype(x))
        if cls == "ConstFloat" and isinstance(bits := _get(x, "bits", 0), int) and 0 <= bits < 1 << 64:  # a float const, by its bits
          return put(repr(struct.unpack("<d", bits.to_bytes(8, "little"))[0]))
        f = fields(x)
        items: list[tuple[str | None, Any]] = [(k, v) for k, v in f.items()] if f else [(None, a) for a in x._args]
        if not put(f"{cls}("): return False
        for i, (k, a) in enumerate(items):
          if i and not put(", "): return False
          if k is not None and not put(f"{k}="): return False
          if not go(a, depth + 1): return False
        return put(")")
      if isinstance(x, (list, tuple, set, frozenset)):
        o, c = {list: "[]", tuple: "()"}.get(type(x), "{}")
        if not put(o): return False
        for i, a in enumerate(x):
          if i and not put(", "): return False
          if not go(a, depth + 1): return False
        return put("," + c if type(x) is tuple and len(x) == 1 else c)
      if isinstance(x, dict):
        if not put("{"): return False
        for i, (k, a) in enumerate(x.items()):
          if (i and not put(", ")) or not go(k, depth + 1) or not put(": ") or not go(a, depth + 1): return False
        return put("}")
      if isinstance(x, (str, bytes)): return put(repr(x[:budget]))
      if isinstance(x, (int, float, bool, Decimal)) or x is None: return put(repr(x) if not isinstance(x, int) or abs(x) < 1 << 64 else "<big int>")
      return put(f"<{type(x).__name__}>")
    go(v, 0)
    s = "".join(out)
    return s if len(s) <= budget else s[:budget - 3] + "..."

  # *** rewrites.pkl ***

  def rewrites(self, rt: Stub) -> None:
    keys, groups, table = _get(rt, "keys", 0, []), _get(rt, "rewrites", 1, []), _get(rt, "uop_fields", 2, {})
    if not isinstance(keys, list) or not isinstance(groups, list) or not isinstance(table, dict):
      raise TraceError("tinygrad rewrites: RewriteTrace without keys/rewrites/uop_fields lists")
    if len(keys) != len(groups): self.w.add(f"tinygrad: {len(keys)} contexts but {len(groups)} lists of rewrites; the shorter count used")
    defined = self.uops(table, groups)
    rid = 0
    for i, (key, group) in enumerate(zip(keys, groups)):
      cid = i + 1
      name, kind, loc = self.context_of(key, group)
      self.events.append(ContextBegin(cid, None, kind, name, loc, 0))
      for r in group if isinstance(group, list) else []:
        if (ev := self.rewrite(r, rid, cid, defined)) is not None:
          self.events.append(ev); rid += 1
          self.first_sink.setdefault(cid, ev.input)
          if kind == "schedule" and self.uop_rows[ev.input].op == "LINEAR": self.linear[cid] = ev.input
      self.events.append(ContextEnd(cid, 0))
      for k in _get(key, "keys", 1) or ():
        if isinstance(k, (str, bytes)): self.ctx_by_key[k] = (cid, name)  # the last one wins, as in tinygrad's viewer
      if kind == "kernel": self.kernel(cid, name, key, group, table)

  def context_of(self, key: Any, group: Any) -> tuple[str, str, tuple[str, int]]:
    name = _get(key, "display_name", 0)
    name = ansistrip(name) if isinstance(name, str) else self.text(key)
    names = [_get(r, "name") for r in group] if isinstance(group, list) else []
    keys = _get(key, "keys", 1) or ()
    # a codegen context: it renders (0.14), or is keyed by its program's key (bytes), the link from the device's spans
    kind = "kernel" if "linearize/render" in names or any(isinstance(k, bytes) for k in keys) \
      else "schedule" if name.startswith(("Schedule", "Callify")) else "user"
    tb = _get(key, "tb", 3)
    loc: tuple[str, int] = ("", 0)
    if isinstance(tb, (list, tuple)):  # the innermost frame outside tinygrad itself: the user's line that asked for this
      frames = [f for f in tb if isinstance(f, (list, tuple)) and len(f) >= 2 and isinstance(f[0], str) and isinstance(f[1], int)]
      # (nor Python's own modules: tinygrad's decorators run through contextlib's wrappers)
      user = [f for f in frames if "/tinygrad/" not in f[0] and not f[0].startswith("<") and not _STDLIB.search(f[0])]
      if (pick := (user or frames)[:1]): loc = (pick[0][0], pick[0][1])
    return name, kind, loc

  def uops(self, table: dict, groups: list) -> set[int]:
    """UOpDefs of every number a rewrite reaches, sources first (numbers are not guaranteed to be in that order)."""
    need: list[int] = []
    for g in groups:
      for r in g if isinstance(g, list) else []:
        need.append(_get(r, "sink", 1))
        for m in _get(r, "matches", 2) or []:
          if isinstance(m, (list, tuple)): need.extend(m[:2])
    done: set[int] = set()
    bad: set[int] = set()
    for root in need:
      if not isinstance(root, int) or root in done or root in bad: continue
      stack = [(root, False)]
      while stack:
        u, expanded = stack.pop()
        if u in done or u in bad: continue
        row = table.get(u)
        if not isinstance(row, tuple) or len(row) < 4 or not isinstance(row[2], tuple) or not all(isinstance(s, int) for s in row[2]):
          bad.add(u); self.skip("UOp entry that is not (op, dtype, src, arg, ...)"); continue
        if not expanded:
          stack.append((u, True))
          stack.extend((s, False) for s in row[2] if s not in done)
          continue
        if any(s not in done for s in row[2]): bad.add(u); self.skip("UOp whose source is missing"); continue
        op = self.enum(row[0]) if isinstance(row[0], Stub) else None
        arg = self.text(row[3]) if row[3] is not None else "None"
        if len(row) > 4 and row[4] is not None: arg = self.text((row[3], "tag", row[4]))  # tinygrad tells UOps apart by tag too
        self.events.append(ev := UOpDef(u, op.split(".", 1)[1] if op and "." in op else (op or self.text(row[0])), self.dtype(row[1]), arg, row[2]))
        self.uop_rows[u] = ev
        done.add(u)
    return done

  def pattern(self, loc: Any) -> int | None:
    if not (isinstance(loc, (list, tuple)) and len(loc) >= 2 and isinstance(loc[0], str) and isinstance(loc[1], int)): return None
    k = (loc[0], loc[1])
    if (pid := self.patterns.get(k)) is None:
      pid = self.patterns[k] = len(self.patterns) + 1
      src = loc[2] if len(loc) > 2 and isinstance(loc[2], str) else _source_on_disk(*k)
      self.events.append(PatternDef(pid, k[0], k[1], src))
    return pid

  def rewrite(self, r: Any, rid: int, cid: int, defined: set[int]) -> Rewrite | None:
    if stub_name(r) is None: self.skip(f"rewrite entry of type {type(r).__name__}"); return None
    sink, name, loc = _get(r, "sink", 1), _get(r, "name", 3, ""), _get(r, "loc", 0)
    if sink not in defined: self.skip("rewrite whose graph is not in uop_fields"); return None
    matches, dur, match_ns = [], 0.0, []
    for m in _get(r, "matches", 2) or []:
      if not (isinstance(m, (list, tuple)) and len(m) >= 2 and m[0] in defined and m[1] in defined):
        self.skip("match of UOps not in uop_fields"); continue
      matches.append((self.pattern(m[2]) if len(m) > 2 else None, m[0], m[1]))
      took = m[3] if len(m) > 3 and isinstance(m[3], (int, float)) and 0 <= m[3] < 1e9 else 0.0  # seconds, as tinygrad times each match
      dur += took
      match_ns.append(int(took * 1e9))
    loc = (loc[0], loc[1]) if isinstance(loc, (list, tuple)) and len(loc) >= 2 and isinstance(loc[0], str) and isinstance(loc[1], int) else ("", 0)
    # tinygrad keeps no output graph: the output is the input's rebuild after every match, which the viewer does
    return Rewrite(rid, cid, str(name), loc, sink, matches, sink, 0, int(dur * 1e9), match_ns)

  def kernel(self, cid: int, name: str, key: Any, group: list, table: dict) -> None:
    """A codegen context's kernel: its code is the SOURCE uop its render step made, its sizes and device those of
    the PROGRAM holding it (a ProgramInfo)."""
    kid = len(self.kernels) + 1
    src, prog = "", None
    for r in reversed(group):
      for m in reversed(_get(r, "matches", 2) or []):
        if not (isinstance(m, (list, tuple)) and len(m) >= 2): continue
        if (code := _find_source(table, m[1], self)) is not None: src, prog = code, _program_info(table, m[1], self); break
      if src: break
    keys = _get(key, "keys", 1) or ()
    fname = next((k for k in keys if isinstance(k, str)), ansistrip(name))
    sizes = [_get(prog, f, i) for f, i in (("global_size", 1), ("local_size", 2))]
    sizes = [tuple(v) if isinstance(v, tuple) and all(type(x) is int for x in v) else () for v in sizes]
    dev = _get(_get(prog, "target"), "device", 0)
    self.kernels[kid] = Kernel(kid, fname, dev if isinstance(dev, str) else "", src, sizes[0], sizes[1], 0, 0, cid, [])
    for k in keys:
      if isinstance(k, (str, bytes)): self.kernel_by_key.setdefault(k, kid)
    self.kernels_by_name.setdefault(fname, []).append(kid)

  def schedules(self) -> list[Schedule]:
    """A schedule event per schedule context that ends in tinygrad 0.14's LINEAR of CALLs: each CALL is (its kernel's
    SINK or a COPY, then its buffers in PARAM slot order). A kernel writes the buffers its STOREs index, a copy its
    first; the kernel record is the codegen context whose first graph is that SINK."""
    kernel_of_sink = {self.first_sink[k.ctx]: k.id for k in self.kernels.values() if k.ctx in self.first_sink}
    out = []
    for cid, lin in self.linear.items():
      items = []
      for call in self.uop_rows[lin].src:
        c = self.uop_rows[call]
        if c.op != "CALL" or not c.src or c.src[0] not in self.uop_rows: self.skip("schedule entry that is not a CALL"); continue
        ast, bufs = c.src[0], [b for b in c.src[1:] if self.uop_rows[b].op == "BUFFER"]
        if self.uop_rows[ast].op == "COPY": kind, written = "copy", set(bufs[:1])
        elif self.uop_rows[ast].op == "SINK": kind, written = "kernel", {bufs[i] for i in self._stored_slots(ast) if i < len(bufs)}
        else: self.skip(f"schedule CALL of a {self.uop_rows[ast].op}"); continue
        items.append({"kind": kind, "ast": ast, "kernel": kernel_of_sink.get(ast) if kind == "kernel" else None,
                      "reads": [b for b in bufs if b not in written], "writes": [b for b in bufs if b in written]})
      if items: out.append(Schedule(cid, items))
    return out

  def _stored_slots(self, sink: int) -> set[int]:
    """The PARAM slots a kernel's STOREs write through (STORE(INDEX(PARAM, ...), value))."""
    slots, stack, seen = set(), [sink], set()
    while stack:
      if (u := stack.pop()) in seen: continue
      seen.add(u)
      row = self.uop_rows[u]
      if row.op == "STORE" and row.src and (idx := self.uop_rows[row.src[0]]).op == "INDEX" and idx.src and \
         (m := _SLOT.match(self.uop_rows[idx.src[0]].arg)) and self.uop_rows[idx.src[0]].op == "PARAM": slots.add(int(m.group(1)))
      stack.extend(row.src)
    return slots

  def by_name(self, name: str, dev: str) -> int | None:
    """The kernel of that name run on dev: the one already seen there, else the first not yet seen on any device."""
    kids = self.kernels_by_name.get(name, [])
    return next((k for k in kids if self.kernel_device.get(k) == dev), None) or \
      next((k for k in kids if k not in self.kernel_device), kids[0] if kids else None)

  # *** profile.pkl ***

  def profile(self, evs: list) -> None:
    diffs: dict[str, Decimal] = {}
    for e in evs:
      if isinstance(e, Stub) and type(e).__class_name__ == "ProfileDeviceEvent":
        dev, d = _get(e, "device", 0), _dec(_get(e, "tdiff", 1, Decimal(0)))
        if isinstance(dev, str) and d is not None: diffs[dev] = d
    mem: dict[str, int] = {}
    sizes: dict[tuple[str, Any], int] = {}
    for e in evs:
      cls = type(e).__class_name__ if isinstance(e, Stub) else type(e).__name__
      if cls == "ProfileRangeEvent": self.range_event(e, diffs)
      elif cls == "ProfileGraphEvent": self.graph_event(e, diffs)
      elif cls == "ProfilePointEvent": self.point_event(e, mem, sizes)
      elif cls == "ProfileProgramEvent":
        pk, nm = _get(e, "profile_key", 5), _get(e, "name", 1)
        if isinstance(pk, bytes) and isinstance(nm, str) and (kid := self.kernel_by_key.get(nm)) is not None: self.kernel_by_key.setdefault(pk, kid)
      elif cls != "ProfileDeviceEvent": self.skip(cls)

  def span(self, dev: Any, name: Any, st: Decimal | None, en: Decimal | None, pk: Any, diffs: dict[str, Decimal]) -> None:
    if not isinstance(dev, str) or st is None: self.skip("profile range without a device or start"); return
    if en is None or en <= st: return  # tinygrad shows only ranges that ended and took time
    args: dict[str, Any] = {}
    shown = _get(name, "display_name", 0) if isinstance(name, Stub) else name
    shown = ansistrip(shown) if isinstance(shown, str) else self.text(name)
    kid = self.kernel_by_key.get(pk) if isinstance(pk, bytes) else None
    if kid is None and dev.split(":")[0] not in ("TINY", "USER", "GC") and not dev.endswith(("COPY", "Graph")):
      kid = self.by_name(shown, dev)  # tinygrad 0.14's CPU (HCQ2) ties its kernels to their code by name only
    ctx = self.ctx_by_key.get(pk) if isinstance(pk, bytes) else None
    if isinstance(name, Stub):
      ret, keys = _get(name, "ret", 2), _get(name, "keys", 1) or ()
      if isinstance(ret, int) and not isinstance(ret, bool): args["bytes"] = ret
      elif isinstance(ret, str): args["metadata"] = ret[:ARG_MAX]
      ctx = ctx or next((c for k in keys if isinstance(k, (str, bytes)) and (c := self.ctx_by_key.get(k)) is not None), None)
    if ctx is not None: args["ctx"] = ctx[0]  # the context it made (tinygrad's viewer names the span after it)
    diff = diffs.get(dev, Decimal(0))
    if kid is not None:
      args["kernel"] = kid
      self.kernel_device.setdefault(kid, dev)
    cat = "kernel" if kid is not None else "copy" if "COPY" in dev or " -> " in shown or shown == "copy" \
      else "codegen" if dev == "TINY" else "tensor" if dev == "USER" else "graph" if dev.endswith("Graph") else "kernel"
    self.events.append(Span(dev, shown, _us_to_ns(st + diff), _us_to_ns(en + diff), cat, args))

  def range_event(self, e: Stub, diffs: dict[str, Decimal]) -> None:
    self.span(_get(e, "device", 0), _get(e, "name", 1), _dec(_get(e, "st", 2)), _dec(_get(e, "en", 3)), _get(e, "profile_key", 4), diffs)

  def graph_event(self, e: Stub, diffs: dict[str, Decimal]) -> None:
    """A batch of kernels/copies run as one graph: each entry's start and end are indices into its signal times."""
    ents, sigs = _get(e, "ents", 0) or [], _get(e, "sigs", 2) or []
    times: list[Decimal] = []
    for ent in ents:
      dev, si, ei = _get(ent, "device", 0), _get(ent, "st_id", 2), _get(ent, "en_id", 3)
      if not isinstance(dev, str) or not all(isinstance(i, int) and 0 <= i < len(sigs) for i in (si, ei)):
        self.skip("graph entry without its signal times"); continue
      st, en = _dec(sigs[si]), _dec(sigs[ei])
      if st is None or en is None: continue
      times += [st + diffs.get(dev, Decimal(0)), en + diffs.get(dev, Decimal(0))]
      self.span(dev, _get(ent, "name", 1), st, en, _get(ent, "profile_key", 4), diffs)
    if times and isinstance(dev0 := _get(ents[0], "device", 0), str):  # the batch itself, on its own track as tinygrad shows it
      self.span(f"{dev0.split(':')[0]} Graph", f"batched {len(ents)}", min(times), max(times), None, {})

  def point_event(self, e: Stub, mem: dict[str, int], sizes: dict[tuple[str, Any], int]) -> None:
    dev, name, key, arg, ts = _get(e, "device", 0), _get(e, "name", 1), _get(e, "key", 2), _get(e, "arg", 3), _dec(_get(e, "ts", 4))
    if not isinstance(dev, str) or ts is None: self.skip("profile point without a device or time"); return
    t = _us_to_ns(ts)
    if name == "marker": self.events.append(Marker(str(arg.get("name", "")) if isinstance(arg, dict) else self.text(arg), t))
    elif name in ("alloc", "free"):
      if name == "alloc":
        sz, dt = (arg.get("sz"), arg.get("dtype")) if isinstance(arg, dict) else (None, None)
        bits = _get(dt, "bitsize", 1)
        if not isinstance(sz, int) or not isinstance(bits, int): self.skip("alloc without a size and dtype"); return
        sizes[(dev, key)] = n = sz * max(1, bits // 8)
        mem[dev] = mem.get(dev, 0) + n
      else: mem[dev] = mem.get(dev, 0) - sizes.pop((dev, key), 0)
      self.events.append(Counter(f"{dev} Memory", "memory", t, float(mem[dev])))
    elif name == "exec": pass  # which buffers a kernel run touched: tinygrad's memory view; the run itself is its span
    else: self.skip(f"profile point {name!r}")

def _find_source(table: dict, root: Any, imp: Importer) -> str | None:
  """The code of a SOURCE uop that is root or one of its sources (a PROGRAM holds its rendered code so)."""
  row = table.get(root)
  for u in ([root, *row[2]] if isinstance(row, tuple) and len(row) >= 4 and isinstance(row[2], tuple) else []):
    r = table.get(u)
    if isinstance(r, tuple) and len(r) >= 4 and isinstance(r[0], Stub) and isinstance(r[3], str) and imp.enum(r[0]) == "Ops.SOURCE": return r[3]
  return None

def _program_info(table: dict, root: Any, imp: Importer) -> Stub | None:
  row = table.get(root)
  ok = isinstance(row, tuple) and len(row) >= 4 and isinstance(row[0], Stub) and imp.enum(row[0]) == "Ops.PROGRAM"
  return row[3] if ok and isinstance(row[3], Stub) else None  # type: ignore[index]

def _source_on_disk(path: str, line: int) -> str:
  """A pattern's source, when the trace does not carry it (tinygrad 0.14 does not) and that tinygrad's .py file is on
  this machine: read once, now, as our recorder does. Only .py files: the path comes from the file."""
  if not path.endswith(".py") or not os.path.isfile(path): return ""
  from profiler.patsource import pattern_source
  try: return pattern_source(path, line)
  except (OSError, ValueError, RecursionError): return ""
