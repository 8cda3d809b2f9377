// Lanes: spans that overlap on one track never draw on top of each other. The server assigns each span's lane
// (`depth`, viz/server/timeline.py: the only lane assignment). Each lane is indexed here for drawing and
// picking: its spans in start order with their ends and a running maximum of the ends, so the first span
// reaching into a window is one binary search away even when spans in a lane overlap.

/** First index i in the sorted array `a` (within [lo, hi)) with a[i] >= x. */
export function lowerBound(a, x, lo = 0, hi = a.length) {
  while (lo < hi) { const m = (lo + hi) >>> 1; if (a[m] < x) lo = m + 1; else hi = m; }
  return lo;
}

/** First index i in the sorted array `a` (within [lo, hi)) with a[i] > x. */
export function upperBound(a, x, lo = 0, hi = a.length) {
  while (lo < hi) { const m = (lo + hi) >>> 1; if (a[m] <= x) lo = m + 1; else hi = m; }
  return lo;
}

/**
 * Index a chunk's spans by lane: [{idx: Uint32Array (chunk indices, by start), start, end, pmax: Float64Array}].
 * pmax[k] is the largest end among the lane's first k+1 spans. Spans must be sorted by start (the server's order);
 * a chunk that is not gets sorted here, per lane.
 */
export function buildLanes(start, dur, depth) {
  const n = start.length;
  let nl = 0;
  for (let i = 0; i < n; i++) if (depth[i] >= nl) nl = depth[i] + 1;
  const counts = new Uint32Array(nl);
  for (let i = 0; i < n; i++) counts[depth[i]]++;
  const lanes = Array.from(counts, c => ({ idx: new Uint32Array(c), start: new Float64Array(c), end: new Float64Array(c), pmax: new Float64Array(c) }));
  const fill = new Uint32Array(nl);
  for (let i = 0; i < n; i++) {
    const l = lanes[depth[i]], k = fill[depth[i]]++;
    l.idx[k] = i; l.start[k] = start[i]; l.end[k] = start[i] + Math.max(dur[i], 0);
  }
  for (const l of lanes) {
    if (!isSorted(l.start)) sortLane(l);
    let m = -Infinity;
    for (let k = 0; k < l.end.length; k++) { if (l.end[k] > m) m = l.end[k]; l.pmax[k] = m; }
  }
  return lanes;
}

function isSorted(a) { for (let i = 1; i < a.length; i++) if (a[i] < a[i - 1]) return false; return true; }

function sortLane(l) {
  const order = Array.from(l.idx.keys()).sort((a, b) => l.start[a] - l.start[b] || l.idx[a] - l.idx[b]);
  const idx = Uint32Array.from(order, k => l.idx[k]), s = Float64Array.from(order, k => l.start[k]), e = Float64Array.from(order, k => l.end[k]);
  l.idx = idx; l.start = s; l.end = e;
}

/** Index (into the lane) of the first span that ends at or after t: every span before it ends before t. */
export function firstReaching(lane, t) { return lowerBound(lane.pmax, t); }

/**
 * The span of a lane under time t, allowing `tol` ns either side (for thin spans): the containing span if
 * any, else the nearest within tol. Returns a chunk index or -1.
 */
export function pick(lane, t, tol = 0) {
  let k = upperBound(lane.start, t + tol) - 1, best = -1, bestDist = Infinity, steps = 0;
  // walk back while earlier spans may still reach t (pmax says so); lanes rarely overlap, so this is short
  for (; k >= 0 && lane.pmax[k] >= t - tol; k--) {
    const s = lane.start[k], e = lane.end[k];
    const d = t < s ? s - t : t > e ? t - e : 0;
    if (d < bestDist || (d === 0 && bestDist === 0 && e - s < lane.end[best] - lane.start[best])) { bestDist = d; best = k; }
    if (++steps > 64 && bestDist === 0) break;
  }
  return best >= 0 && bestDist <= tol ? lane.idx[best] : -1;
}
