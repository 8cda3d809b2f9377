// Level of detail: what to draw for a lane or a counter in a window of time, at most a few rectangles or
// points per pixel however many spans the window holds. Spans narrower than a pixel that sit within a pixel of
// each other merge into one rectangle (a few pixels at most); a run of them is crossed with one binary search per pixel instead of
// a visit per span, so a lane of 1M spans zoomed out costs about as much as its width in pixels. Pure.

import { lowerBound, upperBound, firstReaching } from "./lanes.js";

/** Rectangles in lane-relative pixels: x0, x1, the chunk index of their first span and how many spans they merge. */
export class Rects {
  constructor(cap = 1024) {
    this.n = 0;
    this.x0 = new Float32Array(cap); this.x1 = new Float32Array(cap); this.idx = new Uint32Array(cap); this.count = new Uint32Array(cap);
  }
  push(x0, x1, idx, count) {
    if (this.n === this.x0.length) for (const f of ["x0", "x1", "idx", "count"]) {
      const a = new this[f].constructor(this.n * 2);
      a.set(this[f]);
      this[f] = a;
    }
    const i = this.n++;
    this.x0[i] = x0; this.x1[i] = x1; this.idx[i] = idx; this.count[i] = count;
  }
  clear() { this.n = 0; return this; }
}

/**
 * Append to `out` the rectangles for `lane` (lanes.js buildLanes) over [t0, t1] at `k` pixels per ns.
 * A span at least `minPx` wide is its own rectangle; narrower ones closer than `minPx` to each other merge, into
 * runs that start and stay within one cell of `maxPx` pixels (so a busy stretch zoomed out still shows which
 * kernels it holds, pixel by pixel). Pixels and cells are counted from time 0, not from t0: a run is the same
 * whatever window it is merged for (from its second cell on), so a merge can be kept while the view pans
 * (lodcache.js) and panning does not reshuffle the runs. x is relative to t0, clamped to a pixel or two outside
 * [0, (t1 - t0) * k]. Returns out.
 */
export function mergeLane(lane, t0, t1, k, out, minPx = 1, maxPx = 3) {
  const { start, end, pmax, idx } = lane;
  // o: the whole pixel of time 0's grid at or before t0; X = (t - o) * k, and x = X - frac on output
  const base = Math.floor(t0 * k), o = base / k, frac = (t0 - o) * k, right = (t1 - t0) * k + 2;
  const n = upperBound(start, t1);
  let cx0 = 0, cx1 = 0, cfirst = 0, ccount = 0, cend = 0;
  const flush = () => { if (ccount) out.push(Math.max(cx0 - frac, -2), Math.min(cx1 - frac, right), cfirst, ccount); ccount = 0; };
  let i = firstReaching(lane, t0);
  while (i < n) {
    const s = start[i], e = end[i];
    if (e < t0) { i++; continue; }  // a lane whose spans overlap: an earlier span reached t0, this one does not
    const x0 = (s - o) * k, x1 = (e - o) * k;
    if (x1 - x0 >= minPx) { flush(); out.push(Math.max(x0 - frac, -2), Math.min(x1 - frac, right), idx[i], 1); i++; continue; }
    if (ccount && x0 <= cx1 + minPx && x0 < cend) { if (x1 > cx1) cx1 = x1; ccount++; }
    else { flush(); cx0 = x0; cx1 = x1; cfirst = idx[i]; ccount = 1; cend = (Math.floor((Math.floor(x0) + base) / maxPx) + 1) * maxPx - base; }
    // every later span that starts before the next pixel boundary (inside the cell) lands in this rectangle: jump
    // past them, unless the last of them reaches far beyond it (a wide span: it gets its own rectangle)
    const bound = Math.min(Math.floor(cx1) + 1, cend);
    const j = gallop(start, o + bound / k, i + 1, n);
    let last = j - 1;
    if (last > i && (pmax[last] - o) * k > bound + minPx) last--;
    if (last > i + 1 && (pmax[last] - o) * k <= bound + minPx) {
      const x = (pmax[last] - o) * k;
      if (x > cx1) cx1 = x;
      ccount += last - i;
      i = last + 1;
    } else i++;
  }
  flush();
  return out;
}

/** lowerBound from lo, probing lo, lo+1, lo+3, lo+7, ...: the span wanted is usually a few spans on (half the time of a
 * binary search over the rest of the lane, the same answer). */
function gallop(a, x, lo, hi) {
  let step = 1, p = lo;
  while (p < hi && a[p] < x) { lo = p + 1; p += step; step *= 2; }
  return lowerBound(a, x, lo, Math.min(p, hi));
}

/**
 * A step chart of a counter (`ts` sorted, each value holding until the next) over [t0, t1] at k px/ns, at most
 * two points per pixel: where several changes share a pixel the highest is kept, then the last value carries
 * on. Returns {n, x: Float32Array, v: Float64Array}; x is lane-relative, the first point at the left edge.
 */
export function counterSteps(ts, values, t0, t1, k) {
  const n = ts.length;
  let i = upperBound(ts, t0) - 1;
  const xs = [], vs = [];
  if (i >= 0) { xs.push(0); vs.push(values[i]); }
  i++;
  while (i < n && ts[i] <= t1) {
    const x = (ts[i] - t0) * k, px = Math.floor(x);
    const j = lowerBound(ts, t0 + (px + 1) / k, i + 1, n);
    let m = values[i];
    for (let q = i + 1; q < j; q++) if (values[q] > m) m = values[q];
    xs.push(x); vs.push(m);
    if (j - 1 > i && values[j - 1] !== m) { xs.push(Math.min(px + 1, (ts[j - 1] - t0) * k + 1)); vs.push(values[j - 1]); }
    i = j;
  }
  return { n: xs.length, x: Float32Array.from(xs), v: Float64Array.from(vs) };
}
