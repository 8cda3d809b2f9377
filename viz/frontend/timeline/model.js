// The timeline's data, without DOM: the run's tracks (GET /tracks) with their decoded span chunks, lane indexes
// and global name table; counters and markers; the vertical layout of rows (group headers, tracks, counters);
// picking a span at a point. index.js fetches, render.js draws, this holds.

import { buildLanes, pick, lowerBound } from "./lanes.js";
import { colorSlot } from "./colors.js";
import { chunkSelf } from "./aggregate.js";

// a device track's lanes are taller: its kernel names carry coloured axes and are read more than host spans
export const LANE_H = 18, DEVICE_LANE_H = 24, TRACK_PAD = 3, GROUP_H = 20, COUNTER_H = 36;
export const PINNED = "\u0000pinned";
const KIND_ORDER = { tensor: 0, host: 1, device: 2, thread: 3 };

/** A track's label and group: devices group their queues ("CUDA:1" + "CUDA:1/copy"), Chrome threads their process. */
export function trackGroup(t) {
  const name = t.name ?? String(t.id), slash = name.indexOf("/");
  if (t.kind === "tensor") return { group: "", label: name === "TENSOR" ? "Tensor calls" : name };
  if (t.kind === "host") return { group: "", label: name === "HOST" ? "Host" : name };
  if (t.kind === "thread") {
    // the server names the process when it knows it: its name may hold '/' (JAX's "/host:CPU/python3")
    const p = t.process;
    if (typeof p === "string") return { group: p, label: name.startsWith(p + "/") ? name.slice(p.length + 1) : name };
    return slash < 0 ? { group: name, label: name } : { group: name.slice(0, slash), label: name.slice(slash + 1) };
  }
  const device = t.device || (slash < 0 ? name : name.slice(0, slash));
  return { group: device, label: slash < 0 ? name : name.slice(slash + 1) };
}

export class TimelineModel {
  /** meta: the answer of GET /api/runs/{run}/tracks. */
  constructor(meta) {
    this.names = []; this.nameIndex = new Map(); this.slots = [];  // name id -> colour slot (colors.js)
    this.kernels = new Map();  // kernel id -> {id, name, device, ctx, global_size, local_size, flops, bytes}
    this.tracks = []; this.byId = new Map();
    this.counters = []; this.markers = []; this.flows = [];
    this.collapsed = new Set(); this.pinned = new Set();  // track ids shown at the top, whatever the scroll
    this.pinnedH = 0;
    this.setMeta(meta);
  }

  /** Take a new /tracks answer (live runs grow): keeps loaded chunks; returns the ids of tracks whose span count changed. */
  setMeta(meta) {
    this.startNs = meta.start_ns ?? 0;
    this.endNs = Math.max(meta.end_ns ?? this.startNs, this.startNs);
    const changed = [];
    const tracks = (meta.tracks ?? []).map((m, order) => {
      const old = this.byId.get(m.id);
      if (!old || old.meta.n_spans !== m.n_spans) changed.push(m.id);
      const { group, label } = trackGroup(m);
      return Object.assign(old ?? { chunk: null, lanes: [], gid: null, nLanes: 0, counters: [] },
        { id: m.id, meta: m, name: m.name, kind: m.kind, device: m.device || group, group, label, order,
          laneH: m.kind === "device" ? DEVICE_LANE_H : LANE_H });
    });
    tracks.sort((a, b) => (KIND_ORDER[a.kind] ?? 9) - (KIND_ORDER[b.kind] ?? 9) || (a.kind === "device" ? natural(a.name, b.name) : a.order - b.order));
    this.tracks = tracks;
    this.byId = new Map(tracks.map(t => [t.id, t]));
    const oldCounters = new Map(this.counters.map(c => [c.id, c]));
    this.counters = (meta.counters ?? []).map(c => Object.assign(oldCounters.get(c.id) ?? { ts: null, values: null, max: 0 }, { id: c.id, track: c.track, name: c.name, n: c.n }));
    this.markers = (meta.markers ?? []).map(m => ({ name: m.name, t: m.ts_ns - this.startNs })).sort((a, b) => a.t - b.t);
    return changed;
  }

  /** The run's length in ns (times are relative to its start). */
  get duration() { return Math.max(this.endNs - this.startNs, 1); }

  /** Intern a name: its global id, the same across tracks (colours and highlights follow it). */
  nameId(s, cat = 6) {
    let g = this.nameIndex.get(s);
    if (g === undefined) { g = this.names.length; this.nameIndex.set(s, g); this.names.push(s); this.slots.push(colorSlot(s, cat)); }
    return g;
  }

  /** Install a decoded chunk (chunk.js) as the whole content of a track: lanes, name ids, colours. */
  setChunk(trackId, chunk) {
    const t = this.byId.get(trackId);
    if (!t) return null;
    const depth = chunk.depth;  // the server's lanes
    chunk.depth = depth;
    t.chunk = chunk;
    t.lanes = buildLanes(chunk.start, chunk.dur, depth);
    t.nLanes = Math.max(t.lanes.length, 1);
    // a local name's category: that of its first span (a name's colour is fixed by its first appearance)
    const catOf = new Int16Array(chunk.names.length).fill(-1);
    for (let i = 0; i < chunk.n; i++) if (catOf[chunk.name[i]] < 0) catOf[chunk.name[i]] = chunk.cat[i];
    t.gid = Uint32Array.from(chunk.names, (s, j) => this.nameId(s, catOf[j] < 0 ? 6 : catOf[j]));
    let end = 0;
    for (const l of t.lanes) if (l.pmax.length) end = Math.max(end, l.pmax[l.pmax.length - 1]);
    if (end > this.duration) this.endNs = this.startNs + end;
    return t;
  }

  setCounter(id, data) {
    const c = this.counters.find(c => c.id === id);
    if (!c) return null;
    c.ts = Float64Array.from(data.ts ?? []);
    c.values = Float64Array.from(data.values ?? [], v => (Number.isFinite(v) ? v : 0));
    c.max = c.values.reduce((m, v) => Math.max(m, v), 0);
    c.min = c.values.reduce((m, v) => Math.min(m, v), 0);
    return c;
  }

  setKernels(list) { for (const k of list ?? []) this.kernels.set(k.id, k); }

  /**
   * Flow events (GET /flows: [{id, phase, track, name, cat, ts_ns}]) as arrows: [{name, pts: [{track, t}], t0, t1}],
   * the points of one id in time order (a Chrome flow: s, then any t, then f). A lone point is no arrow.
   */
  setFlows(list) {
    const byId = new Map();
    for (const f of list ?? []) {
      if (!this.byId.has(f.track)) continue;
      (byId.get(f.id) ?? byId.set(f.id, { name: f.name, pts: [] }).get(f.id)).pts.push({ track: f.track, t: f.ts_ns - this.startNs, phase: f.phase });
    }
    const rank = { s: 0, t: 1, f: 2 };
    this.flows = [...byId.values()].filter(a => a.pts.length > 1).map(a => {
      a.pts.sort((p, q) => p.t - q.t || (rank[p.phase] ?? 1) - (rank[q.phase] ?? 1));
      return Object.assign(a, { t0: a.pts[0].t, t1: a.pts[a.pts.length - 1].t });
    });
    return this.flows;
  }

  /** The arrows with a point on span s (model.span()): where it starts or ends on the span's own lane. */
  flowsOf(s) {
    if (!s) return [];
    return this.flows.filter(a => a.pts.some(p => p.track === s.track.id && p.t >= s.start && p.t <= s.end && this.laneOfTime(s.track, p.t) === s.depth));
  }

  /** The deepest lane of `track` with a span covering time t (where a flow arrow attaches), or 0. */
  laneOfTime(track, t) {
    for (let l = track.lanes.length - 1; l > 0; l--) if (pick(track.lanes[l], t, 0) >= 0) return l;
    return 0;
  }

  /** Loaded tracks only (those with a chunk). */
  loaded() { return this.tracks.filter(t => t.chunk); }

  /**
   * Rows top to bottom: {kind: "group"|"track"|"counter", y, h, label, indent, track?, counter?, group?}.
   * A group header shows when a device has several queues or a Chrome process has threads; counters sit under
   * their track's group (or under a "Counters" header when they name no track we have).
   */
  layout() {
    const rows = [], groups = new Map();
    for (const t of this.tracks) {
      if (!groups.has(t.group)) groups.set(t.group, []);
      groups.get(t.group).push(t);
    }
    const countersOf = new Map(), homeless = [];
    for (const c of this.counters) {
      const t = this.tracks.find(t => t.id === c.track || t.name === c.track) ?? this.tracks.find(t => t.group === c.track || t.device === c.track);
      if (t) (countersOf.get(t.group) ?? countersOf.set(t.group, []).get(t.group)).push(c);
      else homeless.push(c);
    }
    let y = 0;
    const add = r => { r.y = y; y += r.h; rows.push(r); return r; };
    const trackH = t => t.nLanes * t.laneH + 2 * TRACK_PAD;
    const pinned = this.tracks.filter(t => this.pinned.has(t.id));
    for (const t of pinned) {
      if (!t.nLanes) t.nLanes = Math.max((t.meta.max_depth ?? 0) + 1, 1);
      add({ kind: "track", h: trackH(t), label: t.group && t.kind !== "device" ? `${t.group} ${t.label}` : t.name === "HOST" || t.name === "TENSOR" ? t.label : t.name,
        indent: 0, track: t, pinned: true });
    }
    this.pinnedH = y;
    for (const [g, ts0] of groups) {
      const ts = ts0.filter(t => !this.pinned.has(t.id));
      if (!ts.length) continue;
      const cs = countersOf.get(g) ?? [];
      const header = g !== "" && (ts.length > 1 || cs.length > 0 || ts[0].kind === "thread");
      const collapsed = header && this.collapsed.has(g);
      if (header) add({ kind: "group", h: GROUP_H, label: g, indent: 0, group: g, collapsed });
      if (collapsed) continue;
      for (const t of ts) {
        if (!t.nLanes) t.nLanes = Math.max((t.meta.max_depth ?? 0) + 1, 1);
        add({ kind: "track", h: trackH(t), label: header ? t.label : (t.group && t.kind === "device" ? t.name : t.label), indent: header ? 1 : 0, track: t });
      }
      for (const c of cs) add({ kind: "counter", h: COUNTER_H, label: c.name, indent: header ? 1 : 0, counter: c });
    }
    if (homeless.length) {
      const collapsed = this.collapsed.has("\u0000counters");
      add({ kind: "group", h: GROUP_H, label: "Counters", indent: 0, group: "\u0000counters", collapsed });
      // no track of theirs to sit under: the label names the device too ("PYTHON memory", not a bare "memory")
      if (!collapsed) for (const c of homeless) add({ kind: "counter", h: COUNTER_H, label: c.track ? `${c.track} ${c.name}` : c.name, indent: 1, counter: c });
    }
    this.rows = rows;
    this.height = y;
    return rows;
  }

  /** Pin a track to the top (or unpin it); call layout() after. */
  togglePin(id) { if (this.pinned.has(id)) this.pinned.delete(id); else if (this.byId.has(id)) this.pinned.add(id); }

  /** The row at content y (after layout), or null. */
  rowAt(y) {
    const rows = this.rows ?? [];
    let lo = 0, hi = rows.length;
    while (lo < hi) { const m = (lo + hi) >>> 1; if (rows[m].y + rows[m].h <= y) lo = m + 1; else hi = m; }
    return lo < rows.length && rows[lo].y <= y ? rows[lo] : null;
  }

  /** The lane of a track row at content y (-1 in the padding). */
  laneAt(row, y) {
    const l = Math.floor((y - row.y - TRACK_PAD) / row.track.laneH);
    return l >= 0 && l < row.track.nLanes ? l : -1;
  }

  /** The span of `track` in `lane` at time t (tol ns of slack), as a chunk index, or -1. */
  pickSpan(track, lane, t, tol) {
    if (!track.chunk || lane < 0 || lane >= track.lanes.length) return -1;
    return pick(track.lanes[lane], t, tol);
  }

  /** Everything the page shows of one span: {track, index, serverIndex, name, gid, start, dur, end, cat, kernel, depth}. */
  span(trackId, index) {
    const t = this.byId.get(trackId);
    if (!t?.chunk || index < 0 || index >= t.chunk.n) return null;
    const c = t.chunk, gid = t.gid[c.name[index]];
    return { track: t, index, serverIndex: c.index ? c.index[index] : index, name: this.names[gid], gid, start: c.start[index], dur: c.dur[index], end: c.start[index] + c.dur[index],
      self: chunkSelf(c)[index], cat: c.cat[index], kernel: c.kernel[index], depth: c.depth[index] };
  }

  /** The next span named `gid` after time `after` (strictly later start; ties by track order), wrapping; or null. */
  nextOfName(gid, after = -Infinity) {
    let best = null, first = null;
    for (const t of this.tracks) {
      if (!t.chunk) continue;
      const { start, name } = t.chunk, from = lowerBound(start, after);
      for (let i = 0; i < start.length; i++) {
        if (t.gid[name[i]] !== gid) continue;
        if (!first || start[i] < first.t) first = { track: t.id, index: i, t: start[i] };
        if (i >= from && start[i] > after && (!best || start[i] < best.t)) { best = { track: t.id, index: i, t: start[i] }; break; }
      }
    }
    return best ?? first;
  }
}

function natural(a, b) { return String(a).localeCompare(String(b), undefined, { numeric: true }); }
