// Sums over spans: what an area selection holds, grouped by name, and the run's kernel summary (top kernels by
// total time, as `tinyviz summary` prints it). Pure; works on the model's tracks:
// {id, chunk: {start, dur, name, kernel, cat}, lanes, gid} where gid maps the chunk's name indices to `names`.

import { lowerBound, upperBound, firstReaching } from "./lanes.js";
import { CAT } from "./chunk.js";

/**
 * Spans of `tracks` overlapping [t0, t1] grouped by name: [{name, count, total, self, mean, min, max, first}], by
 * total time, largest first. `total` sums whole durations (a span half inside counts fully), `self` the same spans'
 * self times (selfTimes: nested spans' time taken out); `first` is the earliest span of the group as {track, index}.
 */
export function groupByName(tracks, names, t0, t1) {
  const groups = new Map();
  for (const tr of tracks) {
    const { start, dur, name } = tr.chunk, self = chunkSelf(tr.chunk);
    for (const lane of tr.lanes) {
      const end = upperBound(lane.start, t1);
      for (let k = firstReaching(lane, t0); k < end; k++) {
        if (lane.end[k] < t0) continue;
        const i = lane.idx[k], g = tr.gid[name[i]], d = dur[i];
        let r = groups.get(g);
        if (!r) groups.set(g, r = { name: names[g], gid: g, count: 0, total: 0, self: 0, mean: 0, min: Infinity, max: -Infinity, first: { track: tr.id, index: i }, firstStart: start[i] });
        r.count++; r.total += d; r.self += self[i];
        if (d < r.min) r.min = d;
        if (d > r.max) r.max = d;
        if (start[i] < r.firstStart) { r.firstStart = start[i]; r.first = { track: tr.id, index: i }; }
      }
    }
  }
  const rows = [...groups.values()];
  for (const r of rows) { r.mean = r.total / r.count; delete r.firstStart; }
  return sortRows(rows, "total", -1);
}

/**
 * The kernel summary of a run: kernel spans (cat "kernel") grouped by name and device, with FLOPs and bytes from
 * the kernel records (`kernels`: Map id -> {flops, bytes, ctx}). A run without kernel spans (a CPU-only Chrome
 * trace) is summed over all its spans, and the result says so. Returns {rows, allSpans, total}; rows:
 * {name, gid, device, count, total, self, mean, min, max, flops, bytes, gflops, gbs, kernel (an id or -1), first, longest}
 * by total time, `first` and `longest` as {track, index}; `self` is the time not spent in spans nested inside (a
 * Chrome trace's op spans nest; kernels do not), and `total` of the result sums self times, so nothing counts twice.
 * Typed-array sums: a million spans take tens of ms.
 */
export function kernelSummary(tracks, names, kernels = new Map()) {
  const anyKernel = tracks.some(tr => tr.chunk.cat.includes(CAT.kernel));
  const G = names.length, byDevice = new Map();
  let total = 0;
  for (const tr of tracks) {
    const { start, dur, name, cat, kernel } = tr.chunk, device = tr.device ?? tr.name ?? "";
    let a = byDevice.get(device);
    const self = chunkSelf(tr.chunk);
    if (!a) byDevice.set(device, a = { count: new Uint32Array(G), total: new Float64Array(G), self: new Float64Array(G), min: new Float64Array(G).fill(Infinity),
      max: new Float64Array(G).fill(-Infinity), flops: new Float64Array(G), bytes: new Float64Array(G), kernel: new Int32Array(G).fill(-1),
      first: new Array(G), firstStart: new Float64Array(G).fill(Infinity), longest: new Array(G) });
    let lastId = -2, lastK;
    for (let i = 0; i < dur.length; i++) {
      if (anyKernel && cat[i] !== CAT.kernel) continue;
      const g = tr.gid[name[i]], d = Math.max(dur[i], 0);
      a.count[g]++; a.total[g] += d; a.self[g] += self[i]; total += self[i];
      if (d < a.min[g]) a.min[g] = d;
      if (d > a.max[g]) { a.max[g] = d; a.longest[g] = { track: tr.id, index: i }; }
      if (start[i] < a.firstStart[g]) { a.firstStart[g] = start[i]; a.first[g] = { track: tr.id, index: i }; }
      const kid = kernel[i];
      if (kid < 0) continue;
      if (kid !== lastId) { lastId = kid; lastK = kernels.get(kid); }
      if (lastK) { a.flops[g] += lastK.flops ?? 0; a.bytes[g] += lastK.bytes ?? 0; }
      if (a.kernel[g] < 0) a.kernel[g] = kid;
    }
  }
  const rows = [];
  for (const [device, a] of byDevice) for (let g = 0; g < G; g++) {
    if (!a.count[g]) continue;
    const t = a.total[g];
    rows.push({ name: names[g], gid: g, device, count: a.count[g], total: t, self: a.self[g], mean: t / a.count[g], min: a.min[g], max: a.max[g],
      flops: a.flops[g], bytes: a.bytes[g], gflops: a.flops[g] && t ? a.flops[g] / t : NaN, gbs: a.bytes[g] && t ? a.bytes[g] / t : NaN,
      kernel: a.kernel[g], first: a.first[g], longest: a.longest[g] });
  }
  return { rows: sortRows(rows, "total", -1), allSpans: !anyKernel, total };
}

/**
 * Each span's self time: its duration less that of the spans directly inside it on the track (spans in start order,
 * longer first on a tie, as chunks hold them). One pass with a stack of the open spans.
 */
export function selfTimes(start, dur) {
  const out = new Float64Array(dur.length), stack = [];
  for (let i = 0; i < dur.length; i++) out[i] = Math.max(dur[i], 0);
  for (let i = 0; i < dur.length; i++) {
    const s = start[i], e = s + out[i];
    while (stack.length && start[stack.at(-1)] + Math.max(dur[stack.at(-1)], 0) <= s) stack.pop();
    const p = stack.at(-1);
    if (p !== undefined && e <= start[p] + Math.max(dur[p], 0)) out[p] -= e - s;
    stack.push(i);
  }
  for (let i = 0; i < out.length; i++) if (out[i] < 0) out[i] = 0;
  return out;
}

/** A chunk's self times, computed once and kept on it (chunks never change once decoded). */
export function chunkSelf(chunk) { return chunk.self ??= selfTimes(chunk.start, chunk.dur); }

/** The value of a counter (`ts` sorted, each value holding until the next) at time t, or null before its first. */
export function counterAt(ts, values, t) {
  const i = upperBound(ts, t) - 1;
  return i < 0 ? null : values[i];
}

/**
 * A counter over [t0, t1]: {min, max, mean} of the values in effect there (the one holding at t0 included), the
 * mean weighted by how long each held; null when it has no value in the window. The last value holds until `end`
 * (the trace's end), not for ever.
 */
export function counterStats(ts, values, t0, t1, end = Infinity) {
  const hi = Math.min(t1, Math.max(end, ts.length ? ts[ts.length - 1] : -Infinity));
  let i = Math.max(upperBound(ts, t0) - 1, 0);
  if (!ts.length || ts[i] > t1) return null;
  let min = Infinity, max = -Infinity, area = 0, time = 0;
  for (; i < ts.length && ts[i] <= t1; i++) {
    const v = values[i], a = Math.max(ts[i], t0), b = Math.min(i + 1 < ts.length ? ts[i + 1] : hi, hi);
    if (v < min) min = v;
    if (v > max) max = v;
    if (b > a) { area += v * (b - a); time += b - a; }
  }
  return { min, max, mean: time > 0 ? area / time : values[Math.max(upperBound(ts, t0) - 1, 0)] };
}

/**
 * A test of names for a search box: a case-insensitive substring, or a regular expression written as /re/ (an
 * invalid one matches as plain text). Returns null for an empty query.
 */
export function nameMatcher(query) {
  const q = (query ?? "").trim();
  if (!q) return null;
  const m = /^\/(.+)\/([a-z]*)$/.exec(q);
  if (m) { try { const re = new RegExp(m[1], m[2].includes("i") ? m[2] : m[2] + "i"); return s => re.test(s); } catch { /* plain text */ } }
  const lq = q.toLowerCase();
  return s => s.toLowerCase().includes(lq);
}

/**
 * Every span whose name passes `test`, in start order: {mask (Uint8Array over `names`: 1 = matches), hits:
 * [{track, index, start}]}. hits is capped at `cap` (a million matches need no list to step through at once).
 */
export function searchSpans(tracks, names, test, cap = 200000) {
  const mask = new Uint8Array(names.length);
  for (let g = 0; g < names.length; g++) if (test(names[g])) mask[g] = 1;
  const hits = [];
  for (const tr of tracks) {
    const { start, name } = tr.chunk;
    for (let i = 0; i < start.length && hits.length < cap; i++) if (mask[tr.gid[name[i]]]) hits.push({ track: tr.id, index: i, start: start[i] });
  }
  hits.sort((a, b) => a.start - b.start || a.track - b.track);
  return { mask, hits };
}

/** The hit after (dir 1) or before (dir -1) time t, wrapping around: an index into hits, or -1 when there are none. */
export function stepHit(hits, t, dir) {
  if (!hits.length) return -1;
  if (dir > 0) { let i = upperBound(hits.map(h => h.start), t); return i >= hits.length ? 0 : i; }
  const i = lowerBound(hits.map(h => h.start), t) - 1;
  return i < 0 ? hits.length - 1 : i;
}

/** Rows sorted by `key` (dir -1: descending); strings compare naturally, NaN sorts last; ties keep name order. */
export function sortRows(rows, key, dir = -1) {
  return rows.slice().sort((a, b) => {
    const x = a[key], y = b[key];
    if (typeof x === "string" || typeof y === "string") return dir * String(x).localeCompare(String(y), undefined, { numeric: true }) || 0;
    const xn = Number.isNaN(x), yn = Number.isNaN(y);
    if (xn || yn) return xn - yn;
    return dir * (x - y) || String(a.name).localeCompare(String(b.name));
  });
}

/**
 * Rows whose name (or device) matches `query`: a case-insensitive substring, or a regular expression written
 * as /re/. An invalid expression matches as plain text. Empty query: all rows.
 */
export function filterRows(rows, query) {
  const test = nameMatcher(query);
  if (!test) return rows;
  return rows.filter(r => test(String(r.name)) || (r.device && test(String(r.device))));
}

/** Union length of intervals (start, dur arrays, sorted by start): time a track was busy. */
export function busyTime(start, dur) {
  let total = 0, s0 = -Infinity, e0 = -Infinity;
  for (let i = 0; i < start.length; i++) {
    const s = start[i], e = s + Math.max(dur[i], 0);
    if (s > e0) { if (e0 > s0) total += e0 - s0; s0 = s; e0 = e; } else if (e > e0) e0 = e;
  }
  if (e0 > s0) total += e0 - s0;
  return total;
}
