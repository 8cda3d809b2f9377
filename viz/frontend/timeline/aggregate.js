// Sums over spans: what an area selection holds, grouped by name, and the run's kernel summary (top kernels by
// total time, as `tinyviz summary` prints it). Pure; works on the model's tracks:
// {id, chunk: {start, dur, name, kernel, cat}, lanes, gid} where gid maps the chunk's name indices to `names`.

import { lowerBound, upperBound, firstReaching } from "./lanes.js";
import { CAT } from "./chunk.js";

/**
 * Spans of `tracks` overlapping [t0, t1] grouped by name: [{name, count, total, mean, min, max, first}], by total
 * time, largest first. `total` sums whole durations (a span half inside counts fully); `first` is the earliest
 * span of the group as {track, index}.
 */
export function groupByName(tracks, names, t0, t1) {
  const groups = new Map();
  for (const tr of tracks) {
    const { start, dur, name } = tr.chunk;
    for (const lane of tr.lanes) {
      const end = upperBound(lane.start, t1);
      for (let k = firstReaching(lane, t0); k < end; k++) {
        if (lane.end[k] < t0) continue;
        const i = lane.idx[k], g = tr.gid[name[i]], d = dur[i];
        let r = groups.get(g);
        if (!r) groups.set(g, r = { name: names[g], gid: g, count: 0, total: 0, mean: 0, min: Infinity, max: -Infinity, first: { track: tr.id, index: i }, firstStart: start[i] });
        r.count++; r.total += d;
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
 * the kernel records (`kernels`: Map id -> {flops, mem_bytes, ctx}). A run without kernel spans (a CPU-only Chrome
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
    const self = selfTimes(start, dur);
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
      if (lastK) { a.flops[g] += lastK.flops ?? 0; a.bytes[g] += lastK.mem_bytes ?? lastK.bytes ?? 0; }
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
  const q = (query ?? "").trim();
  if (!q) return rows;
  let test;
  const m = /^\/(.+)\/([a-z]*)$/.exec(q);
  if (m) { try { const re = new RegExp(m[1], m[2].includes("i") ? m[2] : m[2] + "i"); test = s => re.test(s); } catch { test = null; } }
  if (!test) { const lq = q.toLowerCase(); test = s => s.toLowerCase().includes(lq); }
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
