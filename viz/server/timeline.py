"""A run's timeline: spans on tracks with lanes, counters, markers, flows; span chunks in the binary columnar
form of docs/server-api.md (pure: no I/O).

Spans are kept per track in arrival order as flat arrays; sorting and lane assignment happen on request and
are kept until the track changes. Lanes: each span, in start order (longer first on a tie), takes the lowest
lane that is free at its start, so nested spans form a flame (a child lands one lane below its parent) and
partly overlapping spans (GPU kernels) take separate lanes: no two spans of one lane ever overlap.
"""
from __future__ import annotations
import heapq, json, struct
from array import array
from typing import Any, Callable
import numpy as np

CATS = {"kernel": 0, "copy": 1, "compile": 2, "codegen": 3, "schedule": 4, "tensor": 5}
CAT_OTHER = 6
DEPTH_MAX = 0xFFFF  # depth travels as uint16

def track_kind(name: str, chrome: bool) -> str:
  """A track's kind for a trace that does not say it (no track events: traces before they were added)."""
  if chrome: return "thread"
  if name == "HOST": return "host"
  if name == "TENSOR": return "tensor"
  return "device"

def assign_lanes(starts: list[int], ends: list[int]) -> list[int]:
  """Lane of each span (given in start order): the lowest lane free at its start."""
  busy: list[tuple[int, int]] = []  # (end, lane) of spans still running
  free: list[int] = []
  out, n_lanes = [], 0
  for s, e in zip(starts, ends):
    while busy and busy[0][0] <= s: heapq.heappush(free, heapq.heappop(busy)[1])
    if free: lane = heapq.heappop(free)
    else: lane, n_lanes = n_lanes, n_lanes + 1
    heapq.heappush(busy, (e, lane))
    out.append(lane)
  return out

class _Sorted:
  """The lanes of a track's spans (its columns are in start order by then) and the running maximum of end times
  (for window queries): 10 bytes a span."""
  def __init__(self, start: np.ndarray, end: np.ndarray):
    self.depth = np.minimum(np.array(assign_lanes(start.tolist(), end.tolist()), dtype=np.int64), DEPTH_MAX).astype(np.uint16)
    self.max_end = np.maximum.accumulate(end) if len(end) else end.copy()

class Track:
  def __init__(self, tid: int, name: str, kind: str):
    self.id, self.name, self.kind, self.device = tid, name, kind, name.split("/")[0]
    self.start, self.end = array("q"), array("q")
    self.name_idx, self.cat_idx, self.kernel = array("I"), array("I"), array("i")
    # a span's details (args beyond its kernel): -1 none, v >= 0 the offset of its line in the run's file,
    # v <= -2 args_mem[-2 - v]; a column rather than an object per span
    self.detail = array("q")
    self.args_mem: list[dict[str, Any]] = []
    self.names: list[str] = []
    self._name_ids: dict[str, int] = {}
    self.cats: list[str] = []  # category names as recorded; the wire carries CATS codes
    self._cat_ids: dict[str, int] = {}
    self._sorted: _Sorted | None = None

  def add(self, name: str, start: int, end: int, cat: str, args: dict[str, Any] | None, at: int | None = None) -> None:
    if (i := self._name_ids.get(name)) is None: i = self._name_ids[name] = len(self.names); self.names.append(name)
    if (c := self._cat_ids.get(cat)) is None: c = self._cat_ids[cat] = len(self.cats); self.cats.append(cat)
    k = args.get("kernel") if args else None
    kid = k if type(k) is int and -2**31 <= k < 2**31 else -1
    if kid >= 0 and len(args) == 1: args = None  # {"kernel": k} alone (every kernel run): the column holds it
    self.start.append(start); self.end.append(max(end, start))
    self.name_idx.append(i); self.cat_idx.append(c)
    self.kernel.append(kid)
    if not args: self.detail.append(-1)
    elif at is not None: self.detail.append(at)
    else:
      self.detail.append(-2 - len(self.args_mem))
      self.args_mem.append(args)
    self._sorted = None

  def __len__(self) -> int: return len(self.start)

  COLUMNS = ("start", "end", "name_idx", "cat_idx", "kernel", "detail")

  def sorted(self) -> _Sorted:
    """Puts the columns in start order (longer first on a tie, then as they were) and assigns lanes, once per change.
    Numpy views of the columns live only inside a call: an array that exports its buffer cannot grow."""
    if self._sorted is None:
      start, end = np.frombuffer(self.start, dtype=np.int64), np.frombuffer(self.end, dtype=np.int64)
      order = np.lexsort((start - end, start))
      del start, end
      if (order != np.arange(len(order))).any():
        for name in self.COLUMNS:
          col = getattr(self, name)
          setattr(self, name, array(col.typecode, np.frombuffer(col, dtype=col.typecode)[order].tobytes()))
      del order
      self._sorted = _Sorted(np.frombuffer(self.start, dtype=np.int64), np.frombuffer(self.end, dtype=np.int64))
    return self._sorted

  def max_depth(self) -> int: return int(self.sorted().depth.max()) if len(self) else 0

  def json(self, process: str | None = None) -> dict[str, Any]:
    """process: a Chrome thread's process name (its track name is "process/thread"); it is then the device too."""
    out = {"id": self.id, "name": self.name, "kind": self.kind, "device": process if process is not None else self.device,
           "n_spans": len(self), "max_depth": self.max_depth()}
    if process is not None: out["process"] = process
    return out

class Timeline:
  def __init__(self, chrome: bool = False):
    self.chrome = chrome
    self.tracks: list[Track] = []
    self._track_ids: dict[str, int] = {}
    self.counters: list[dict[str, Any]] = []
    self._counter_ids: dict[tuple[str, str], int] = {}
    self.markers: list[tuple[str, int]] = []
    self.flows: list[dict[str, Any]] = []
    self.processes: dict[str, str] = {}  # a Chrome thread track's name -> its process's name (the reader says)
    self.kinds: dict[str, str] = {}  # what the trace's track events say each track is
    self.origin: int | None = None  # the run's clock_ns when known: times on the wire are relative to start_ns
    self.spill: Callable[[int], dict[str, Any]] | None = None  # reads back span args left in the trace file
    self.t_min: int | None = None
    self.t_max: int | None = None

  def _times(self, lo: int, hi: int) -> None:
    if self.t_min is None or lo < self.t_min: self.t_min = lo
    if self.t_max is None or hi > self.t_max: self.t_max = hi

  def track(self, name: str) -> Track:
    if (i := self._track_ids.get(name)) is None:
      i = self._track_ids[name] = len(self.tracks)
      self.tracks.append(Track(i, name, self.kinds.get(name) or track_kind(name, self.chrome)))
    return self.tracks[i]

  def declare(self, name: str, kind: str) -> None:
    """A track event: this track's kind, whatever its name."""
    self.kinds[name] = kind
    if (i := self._track_ids.get(name)) is not None: self.tracks[i].kind = kind

  def find(self, ref: str) -> Track | None:
    """A track by id (what /tracks lists), or by name."""
    if ref.isascii() and ref.isdigit() and len(ref) < 12 and int(ref) < len(self.tracks): return self.tracks[int(ref)]
    i = self._track_ids.get(ref)
    return None if i is None else self.tracks[i]

  def span(self, track: str, name: str, start: int, end: int, cat: str, args: dict[str, Any] | None, at: int | None = None) -> None:
    self.track(track).add(name, start, end, cat, args, at)
    self._times(start, max(start, end))

  def counter(self, track: str, name: str, ts: int, value: float) -> None:
    if (i := self._counter_ids.get((track, name))) is None:
      i = self._counter_ids[(track, name)] = len(self.counters)
      self.counters.append({"id": i, "track": track, "name": name, "ts": array("q"), "values": array("d")})
    c = self.counters[i]
    c["ts"].append(ts); c["values"].append(value)
    self._times(ts, ts)

  def marker(self, name: str, ts: int) -> None:
    self.markers.append((name, ts))
    self._times(ts, ts)

  def flow(self, fid: str, phase: str, track: str, name: str, cat: str, ts: int) -> None:
    self.flows.append({"id": fid, "phase": phase, "track": self.track(track).id, "name": name, "cat": cat, "ts_ns": ts})
    self._times(ts, ts)

  @property
  def start_ns(self) -> int:
    if self.origin is not None: return self.origin if self.t_min is None else min(self.origin, self.t_min)
    return self.t_min or 0

  @property
  def end_ns(self) -> int: return max(self.t_max or 0, self.start_ns)

  # *** the API's answers ***

  def tracks_json(self) -> dict[str, Any]:
    return {"start_ns": self.start_ns, "end_ns": self.end_ns, "tracks": [t.json(self.processes.get(t.name)) for t in self.tracks],
            "counters": [{"id": c["id"], "track": c["track"], "name": c["name"], "n": len(c["ts"])} for c in self.counters],
            "markers": [{"name": n, "ts_ns": t} for n, t in self.markers]}

  def counter_json(self, cid: int) -> dict[str, Any]:
    c = self.counters[cid]
    ts, values = np.frombuffer(c["ts"], dtype=np.int64), np.frombuffer(c["values"], dtype=np.float64)
    if len(ts) > 1 and (np.diff(ts) < 0).any():
      o = np.argsort(ts, kind="stable")
      ts, values = ts[o], values[o]
    vals = [v if np.isfinite(v) else None for v in values.tolist()]
    return {"name": c["name"], "track": c["track"], "ts": (ts - self.start_ns).tolist(), "values": vals}

  def span_json(self, track: Track, index: int) -> dict[str, Any]:
    """One span by its index in the track's start order (the `index` column of a chunk)."""
    s, i = track.sorted(), index
    v = track.detail[i]
    args = track.args_mem[-2 - v] if v <= -2 else (self.spill(v) if self.spill is not None else {}) if v >= 0 else None
    if args is None and track.kernel[i] >= 0: args = {"kernel": track.kernel[i]}
    return {"name": track.names[track.name_idx[i]], "track": track.id, "track_name": track.name,
            "start_ns": track.start[i], "end_ns": track.end[i], "cat": track.cats[track.cat_idx[i]],
            "args": args or {}, "depth": int(s.depth[index]), "kernel": track.kernel[i]}

  def chunk(self, track: Track, start: float | None = None, end: float | None = None) -> bytes:
    """The spans of `track` that overlap [start, end] (ns relative to start_ns; both optional), in start order."""
    s, origin = track.sorted(), self.start_ns
    s_start, s_end = np.frombuffer(track.start, dtype=np.int64), np.frombuffer(track.end, dtype=np.int64)  # views: this call only
    lo, hi = 0, len(s_start)
    if end is not None: hi = int(np.searchsorted(s_start, origin + end, side="right"))
    if start is not None: lo = min(hi, int(np.searchsorted(s.max_end, origin + start, side="left")))
    rows = np.arange(lo, hi, dtype=np.int64)
    if start is not None and len(rows): rows = rows[s_end[lo:hi] >= origin + start]
    name_idx = np.frombuffer(track.name_idx, dtype=np.uint32)[rows]
    used, local = np.unique(name_idx, return_inverse=True)
    cols = [("start", "float64", (s_start[rows] - origin).astype("<f8")),
            ("dur", "float64", (s_end[rows] - s_start[rows]).astype("<f8")),
            ("name", "uint32", local.astype("<u4")),
            ("depth", "uint16", s.depth[rows].astype("<u2")),
            ("kernel", "int32", np.frombuffer(track.kernel, dtype=np.int32)[rows].astype("<i4")),
            ("cat", "uint8", np.array([CATS.get(c, CAT_OTHER) for c in track.cats], dtype=np.uint8)[
              np.frombuffer(track.cat_idx, dtype=np.uint32)[rows]]),
            ("index", "uint32", rows.astype("<u4"))]
    del s_start, s_end
    return encode_chunk(len(rows), [track.names[i] for i in used.tolist()], cols)

def _pad8(n: int) -> int: return (n + 7) & ~7

def encode_chunk(n: int, names: list[str], cols: list[tuple[str, str, np.ndarray]]) -> bytes:
  """uint32 header_len | header JSON | zero padding to 8 | columns, each starting 8-aligned; a column's `offset`
  counts bytes from the start of the columns section and its `length` is in bytes."""
  columns, off = [], 0
  for name, typ, a in cols:
    columns.append({"name": name, "type": typ, "offset": off, "length": a.nbytes})
    off = _pad8(off + a.nbytes)
  head = json.dumps({"n": n, "names": names, "columns": columns}, separators=(",", ":"), ensure_ascii=False).encode(
    "utf-8", "replace")  # a lone surrogate from a sloppy trace becomes "?", not a UnicodeEncodeError
  out = bytearray(_pad8(4 + len(head)) + off)
  struct.pack_into("<I", out, 0, len(head))
  out[4:4 + len(head)] = head
  base = _pad8(4 + len(head))
  for c, (_, _, a) in zip(columns, cols): out[base + c["offset"]:base + c["offset"] + a.nbytes] = a.tobytes()
  return bytes(out)

def decode_chunk(data: bytes) -> dict[str, Any]:
  """The inverse of encode_chunk (tests and tools): {"n", "names", column name: numpy array}."""
  (hlen,) = struct.unpack_from("<I", data, 0)
  head = json.loads(data[4:4 + hlen])
  base = _pad8(4 + hlen)
  out: dict[str, Any] = {"n": head["n"], "names": head["names"]}
  for c in head["columns"]:
    out[c["name"]] = np.frombuffer(data, dtype=np.dtype(c["type"]).newbyteorder("<"), count=head["n"], offset=base + c["offset"])
  return out
