// The layout with `prev` (graph/layout.js calls these when the previous step's positions are given): pure, no DOM.
//
// Stability: with `prev` (the previous step's positionsOf), a node that still exists keeps its x and y to the
// last bit unless that would make it overlap another node. The previous step's layers (the distinct old y)
// stay layers, at their old y and in their order, and old nodes stay in them where edges allow. New nodes go
// ALAP into old layers; where one needs a layer that is not there, the layering that moves the fewest old
// nodes wins (layerStable): a layer inserted into the gap between two old ones (minRankSep from each, no old
// layer moves if it fits), or the old nodes in its way moved down (up) a layer. A layer grown taller keeps its
// center. Where gaps cannot hold what goes in them, old layers move apart, all on the side of fewer old nodes.
// In a layer, old nodes are fixed at their old x (their buses at the old bus x, matched by layer y); each new
// node takes the hole nearest its neighbours' mean x, bus lines squeeze between nodes; of two old nodes that
// would overlap, one that left its layer gives way, else the later in the input. Everything runs in typed
// arrays, O((V+E) log V).
import { NODE_ANCHOR, csr, sortLayer, gap, scratch } from "./layered.js";

// Layering with `prev`. The previous step's layers (the distinct old y of the nodes that are still there) keep
// their order; old layer o gets level o * B, the s-th slot of the gap right above it o * B - s (smaller is
// higher); levels beyond the old ones are layers made up above the top or below the bottom. Three ways to make
// room for what a step adds, each O(V + E); the first that moves no old node wins, else the one that moves
// the fewest (in y: out of their old layer, or with a layer that has to move apart from its neighbours):
//   gaps: old nodes keep their levels (unless an edge forbids it: then just above their highest user); a new
//         node takes an old layer between its sources and users (ALAP) if there is one, else a new layer in
//         the gap right below its lowest source (placeLayersStable fits it between the old layers);
//   down: only old layers; a node that its sources leave no room in its layer moves down to the next one;
//   up:   only old layers; a node that its users leave no room in its layer moves up to the next one.
// New nodes lean ALAP counted in old layers. Returns {layer, H, oldY} (oldY[L]: the layer's old y, NaN if new).
export function layerStable(n, live, ef, et, was, h, rankSep, minSep) {
  const ys = [];
  for (let i = 0; i < n; i++) if (was[i]) ys.push(was[i].y);
  const sorted = Float64Array.from(ys).sort(), at = new Map();
  let K = 0;
  for (let j = 0; j < sorted.length; j++) if (!j || sorted[j] !== sorted[j - 1]) { at.set(sorted[j], K); sorted[K++] = sorted[j]; }
  const B = n + 2, bottom = (K - 1) * B, pref = new Float64Array(n).fill(NaN);
  for (let i = 0; i < n; i++) if (was[i]) pref[i] = at.get(was[i].y) * B;
  const srcs = csr(n, et.map((b) => (b < 0 ? 0 : b)), ef), users = csr(n, ef.map((a) => (a < 0 ? 0 : a)), et);
  // queue: a reverse topological order (Kahn from the sinks); walked backwards it is a topological one
  const outdeg = new Int32Array(n), queue = new Int32Array(n);
  for (let e = 0; e < ef.length; e++) if (ef[e] >= 0) outdeg[ef[e]]++;
  let qt = 0;
  for (let v = 0; v < n; v++) if (live[v] && outdeg[v] === 0) queue[qt++] = v;
  for (let qh = 0; qh < qt; qh++) {
    const v = queue[qh];
    for (let j = srcs.start[v]; j < srcs.start[v + 1]; j++) { const s = srcs.list[j]; if (s >= 0 && --outdeg[s] === 0) queue[qt++] = s; }
  }
  const highestUser = (lvl, v) => {
    let hi = Infinity;
    for (let j = users.start[v]; j < users.start[v + 1]; j++) { const u = users.list[j]; if (u >= 0 && lvl[u] < hi) hi = lvl[u]; }
    return hi - 1;
  };
  const lowestSource = (lvl, v) => {
    let lo = -Infinity;
    for (let j = srcs.start[v]; j < srcs.start[v + 1]; j++) { const s = srcs.list[j]; if (s >= 0 && lvl[s] > lo) lo = lvl[s]; }
    return lo + 1;
  };
  const oldLayerAbove = (l) => (l === Infinity ? bottom : Math.floor(l / B) * B);
  // ALAP in old layers, from the sinks up; old nodes where they were (up: moved up where their users say so)
  const alap = (movable) => {
    const lvl = new Float64Array(n);
    for (let q = 0; q < qt; q++) {
      const v = queue[q], hi = highestUser(lvl, v);
      lvl[v] = pref[v] === pref[v] && (pref[v] <= hi || !movable) ? pref[v] : oldLayerAbove(hi);
    }
    return lvl;
  };
  const gaps = () => {
    // loose: the lowest level a node may take (an old node's is its own, fixed here); lvl: where ALAP puts it
    const lvl = alap(false), loose = new Float64Array(n);
    for (let q = 0; q < qt; q++) {
      const v = queue[q];
      const hi = highestUser(loose, v);
      if (pref[v] === pref[v]) loose[v] = lvl[v] = pref[v] <= hi ? pref[v] : hi;
      else loose[v] = hi;
      if (lvl[v] > loose[v]) lvl[v] = oldLayerAbove(loose[v]);
    }
    // from the sources down: a new node that its sources leave no room at lvl takes the next old layer down
    // its users allow, else the gap slot right below its lowest source
    for (let q = qt - 1; q >= 0; q--) {
      const v = queue[q];
      if (pref[v] === pref[v]) continue;
      const lo = lowestSource(lvl, v);
      if (lvl[v] >= lo) continue;
      const next = Math.ceil(lo / B) * B;
      lvl[v] = next <= loose[v] ? next : lo;
    }
    return lvl;
  };
  const down = () => {
    const lvl = alap(false);
    for (let q = qt - 1; q >= 0; q--) {
      const v = queue[q], lo = lowestSource(lvl, v);
      if (lvl[v] < lo) lvl[v] = Math.ceil(lo / B) * B;
    }
    return lvl;
  };
  const finish = (lvl) => {
    const levels = new Float64Array(qt);
    for (let q = 0; q < qt; q++) levels[q] = lvl[queue[q]];
    levels.sort();
    const index = new Map();
    let H = -1;
    for (let j = 0; j < qt; j++) if (!j || levels[j] !== levels[j - 1]) { index.set(levels[j], ++H); levels[H] = levels[j]; }
    H = Math.max(H, 0);
    const layer = new Int32Array(n), oldY = new Float64Array(H + 1).fill(NaN), lh = new Float64Array(H + 1), keptIn = new Int32Array(H + 1);
    for (let L = 0; L < index.size; L++) {
      const l = levels[L];
      if (l >= 0 && l <= bottom && l % B === 0) oldY[L] = sorted[l / B];
    }
    let displaced = 0;
    for (let q = 0; q < qt; q++) {
      const v = queue[q], L = (layer[v] = index.get(lvl[v]));
      if (h[v] > lh[L]) lh[L] = h[v];
      if (pref[v] === pref[v]) { if (lvl[v] === pref[v]) keptIn[L]++; else displaced++; }
    }
    const cost = displaced + layerShifts(H, oldY, lh, keptIn, rankSep, minSep).moved;
    return { layer, H, oldY, lh, keptIn, cost };
  };
  let best = finish(gaps());
  for (const make of [down, () => alap(true)]) {
    if (!best.cost) break;
    const r = finish(make());
    if (r.cost < best.cost) best = r;
  }
  return best;
}

// With `beside` (v -> t): a node v with no users may move to the layer of t (drawn next to it), or to the layer right
// below t when t is one of its sources (drawn under it), if its sources all stay above. Changes layer in place;
// returns Int32Array(n): t's index for each v that ends in one of those two places, else -1.
export function besideLayers(n, live, ef, et, layer, H, index, get, nodes) {
  const out = new Int32Array(n).fill(-1), users = new Uint8Array(n), low = new Int32Array(n).fill(-1);
  for (let e = 0; e < ef.length; e++) {
    if (ef[e] < 0) continue;
    users[ef[e]] = 1;
    if (layer[ef[e]] > low[et[e]]) low[et[e]] = layer[ef[e]];
  }
  const taken = new Uint8Array(n);
  for (let v = 0; v < n; v++) {
    const t = index.get(get(nodes[v].id));
    if (t === undefined || t === v || !live[v] || !live[t] || taken[t]) continue;
    let src = false;
    for (let e = 0; e < ef.length && !src; e++) src = ef[e] === t && et[e] === v;
    const L = src ? layer[t] + 1 : layer[t];
    if (L === layer[v] || (!users[v] && L <= H && low[v] < L)) { layer[v] = L; out[v] = t; taken[t] = 1; }
  }
  return out;
}

// Stable order: anchors keep their previous x as sort key; other nodes take their neighbours' mean key,
// moved into the nearest hole that fits them. Of two anchored nodes of a layer that would overlap at their
// old x (a node given the place of one still drawn, a node grown wider or moved to another layer), the one
// of higher rank gives way: it stops being an anchor and is placed like a new node, from its old x.
export function orderByAnchors(g, anchor, ax, rank) {
  const { N, H, live, n, up, down, layerStart, lay, order } = g;
  const fill = layerStart.slice(0, H + 1);
  for (let v = 0; v < N; v++) if (v >= n || live[v]) order[fill[lay[v]]++] = v;
  const key = new Float64Array(N).fill(NaN), yielded = new Uint8Array(N);
  for (let L = 0; L <= H; L++) {
    const row = [];
    for (let j = layerStart[L]; j < layerStart[L + 1]; j++) if (order[j] < n && anchor[order[j]]) row.push(order[j]);
    row.sort((a, b) => ax[a] - ax[b] || a - b);
    const stay = [];
    for (let v of row) {
      while (stay.length) {
        const u = stay[stay.length - 1];
        if (ax[v] - ax[u] >= gap(g, u, v) - 1e-6) break;
        if (rank[u] < rank[v]) { yielded[v] = 1; v = -1; break; }
        stay.pop(); yielded[u] = 1;
      }
      if (v >= 0) stay.push(v);
    }
  }
  for (let v = 0; v < N; v++) {
    if (anchor[v] || yielded[v]) key[v] = ax[v];
    if (yielded[v]) anchor[v] = 0;
  }
  for (let pass = 0; pass < 4; pass++) {
    const downward = pass % 2 === 0;
    for (let i = 0; i < order.length; i++) {
      const v = order[downward ? i : order.length - 1 - i];
      if (anchor[v] || yielded[v]) continue;
      let sum = 0, c = 0;
      for (let q = up.start[v]; q < up.start[v + 1]; q++) { const k = key[up.list[q]]; if (k === k) { sum += k; c++; } }
      for (let q = down.start[v]; q < down.start[v + 1]; q++) { const k = key[down.list[q]]; if (k === k) { sum += k; c++; } }
      if (c) key[v] = sum / c;
    }
  }
  let lo = Infinity, hi = -Infinity;
  for (let v = 0; v < N; v++) if (key[v] === key[v]) { lo = Math.min(lo, key[v]); hi = Math.max(hi, key[v]); }
  if (lo === Infinity) lo = hi = 0;
  // nodes no anchor reaches (a new component) go to the right end
  for (let v = 0; v < N; v++) if (key[v] !== key[v]) key[v] = hi + g.o.nodeWidth;
  for (let L = 0; L <= H; L++) fitIntoGaps(g, L, anchor, ax, key);
  for (let v = 0; v < n; v++) if (g.besideOf[v] >= 0) key[v] = key[g.besideOf[v]] + 0.01;  // right after it, or under it
  for (let v = 0; v < N; v++) { g.x[v] = key[v]; lo = Math.min(lo, key[v]); hi = Math.max(hi, key[v]); }
  const scale = hi > lo ? 2 ** 31 / (hi - lo) : 1;  // into [0, 2^31] for the packed sort
  for (let v = 0; v < N; v++) key[v] = (key[v] - lo) * scale;
  const scratch = new Float64Array(g.maxLayer), slots = new Int32Array(g.maxLayer);
  for (let L = 0; L <= H; L++) sortLayer(g, L, key, scratch, slots);
}

// Give each new node of layer L the free space between anchors nearest its key, so that it takes the
// hole a removed node left instead of pushing anchors aside; its key moves into that space.
function fitIntoGaps(g, L, anchor, ax, key) {
  const { order, layerStart, width, n, o } = g, s = layerStart[L], e = layerStart[L + 1];
  const fixed = [], free = [];
  for (let j = s; j < e; j++) if (order[j] >= n || g.besideOf[order[j]] < 0) (anchor[order[j]] ? fixed : free).push(order[j]);
  if (!free.length || !fixed.length) return;
  fixed.sort((a, b) => ax[a] - ax[b] || a - b);
  free.sort((a, b) => key[a] - key[b] || a - b);
  // cap: room left in each gap; an item takes its width and one gap, and the gap needs one more gap at its end.
  // A bus line may squeeze (edgeSep / 2 each side, as placeXStable allows) so that it passes between anchors.
  const m = fixed.length + 1, gl = new Float64Array(m), gr = new Float64Array(m), cap = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    gl[i] = i ? ax[fixed[i - 1]] + width[fixed[i - 1]] / 2 : -Infinity;
    gr[i] = i < m - 1 ? ax[fixed[i]] - width[fixed[i]] / 2 : Infinity;
    cap[i] = gr[i] - gl[i];
  }
  for (const f of free) {
    const k = key[f], sep = f >= n ? o.edgeSep / 2 : o.nodeSep, need = width[f] + sep, fits = (i) => cap[i] >= need + sep;
    let lo = 0, hi = m - 1;  // gap i0: the one between the anchors left and right of k
    while (lo < hi) { const mid = (lo + hi) >> 1; if (gr[mid] <= k) lo = mid + 1; else hi = mid; }
    let l = lo, r = lo + 1, at = fits(lo) ? lo : -1;
    for (let probes = 0; at < 0 && probes < 64; probes++) {
      const dl = l > 0 ? k - gr[l - 1] : Infinity, dr = r < m ? gl[r] - k : Infinity;
      if (dl <= dr) { if (fits(--l)) at = l; } else if (fits(r)) at = r; else r++;
    }
    if (at < 0) at = k - gl[0] < gr[m - 1] - k ? 0 : m - 1;  // no hole near: go past the nearer end
    cap[at] -= need;
    const a = gl[at] + sep + width[f] / 2, b = gr[at] - sep - width[f] / 2;
    key[f] = a <= b ? Math.min(Math.max(k, a), b) : (gl[at] + gr[at]) / 2;
  }
}

// With `prev`, each x placement pass solves a layer between its fixed nodes (the anchors, at exactly their old x):
// the items between two fixed nodes (new nodes, bus lines, anchors that had to give way) get the closest
// positions to what they want that fit there (bounded isotonic regression). Fixed once per layer: if the items
// of a stretch do not fit between its two fixed ends at the normal gaps, bus lines squeeze (edgeSep / 2 from
// their neighbours); if they still do not fit, both ends give way (they become items that want their old x
// with a large weight) and the stretch joins its neighbours. Fixed nodes are set to their old x, not
// computed, so that a node that could stay stays to the last bit.
export function placeXStable(g, anchor, ax) {
  const { H, order, layerStart, x, up, down, n, o } = g, total = order.length;
  const fixed = new Uint8Array(total), off = new Float64Array(total), inc = new Float64Array(total);
  const want = new Float64Array(total), wt = new Float64Array(total), res = new Float64Array(total), blk = scratch(g.maxLayer);
  // the offsets of order[a..b] from order[a] into inc (when `write`), their sum returned: the normal gaps, or
  // squeezed ones where bus lines keep edgeSep / 2 from their neighbours (nodes still keep the normal gap
  // between each other across the bus lines between them)
  const span = (a, b, tight, write) => {
    let sum = 0, node = order[a] < n ? a : -1, nodeAt = 0;
    for (let j = a + 1; j <= b; j++) {
      const u = order[j - 1], v = order[j];
      let d = !tight ? gap(g, u, v) : u < n && v < n ? gap(g, u, v) : (g.width[u] + g.width[v]) / 2 + o.edgeSep / 2;
      if (tight && v < n && node >= 0) d = Math.max(d, nodeAt + gap(g, order[node], v) - sum);
      sum += d;
      if (write) inc[j] = d;
      if (v < n) { node = j; nodeAt = sum; }
    }
    return sum;
  };
  for (let L = 0; L <= H; L++) {
    const s = layerStart[L], e = layerStart[L + 1];
    if (s === e) continue;
    for (let j = s; j < e; j++) { const v = order[j]; fixed[j] = v < n && anchor[v] === NODE_ANCHOR ? 1 : 0; }
    // a node drawn beside (under) another: the fixed nodes on either side that would leave it no room at the place
    // it wants give way, as far as it pushes them (the items between packed at their least gaps)
    for (let j = s; j < e; j++) {
      const v = order[j], t = v < n ? g.besideOf[v] : -1;
      if (t < 0 || anchor[t] !== NODE_ANCHOR) continue;
      const at = ax[t] + (g.lay[t] === g.lay[v] ? gap(g, t, v) : 0);
      for (let q = j + 1, c = at; q < e; q++) {
        c += gap(g, order[q - 1], order[q]);
        if (fixed[q]) { if (ax[order[q]] < c - 1e-6) fixed[q] = 0; else break; }
      }
      for (let q = j - 1, c = at; q >= s; q--) {
        c -= gap(g, order[q], order[q + 1]);
        if (fixed[q]) { if (ax[order[q]] > c + 1e-6) fixed[q] = 0; else break; }
      }
    }
    for (let round = 0, changed = true; changed; round++) {
      changed = false;
      let j0 = -1;
      for (let j = s; j < e; j++) {
        if (!fixed[j]) continue;
        if (round > 64 || (j0 >= 0 && span(j0, j, true, false) > ax[order[j]] - ax[order[j0]] + 1e-6)) {  // 1e-6: old positions' rounding
          fixed[j] = 0; if (j0 >= 0) fixed[j0] = 0;
          changed = true; j0 = -1;
        } else j0 = j;
      }
    }
    for (let a = s, b = s; a < e - 1; a = b) {
      b = a + 1;
      while (b < e - 1 && !fixed[b]) b++;
      const room = fixed[a] && fixed[b] ? ax[order[b]] - ax[order[a]] + 1e-6 : Infinity;
      if (span(a, b, false, true) > room) span(a, b, true, true);
    }
    off[s] = 0;
    for (let j = s + 1; j < e; j++) off[j] = off[j - 1] + inc[j];
  }
  for (let v = 0; v < g.N; v++) if (anchor[v]) x[v] = ax[v];
  const passes = Math.max(1, o.passes);
  for (let pass = 0; pass < passes; pass++) {
    const downward = pass % 2 === 0;
    for (let i = 0; i <= H; i++) {
      const L = downward ? i : H - i, s = layerStart[L], e = layerStart[L + 1];
      let j0 = s - 1;
      for (let j = s; j <= e; j++) {
        if (j < e && !fixed[j]) {
          const v = order[j];
          if (anchor[v]) { want[j] = ax[v]; wt[j] = anchor[v]; continue; }
          const t = v < n ? g.besideOf[v] : -1;
          if (t >= 0) { want[j] = x[t] + (g.lay[t] === g.lay[v] ? gap(g, t, v) : 0); wt[j] = 8 * NODE_ANCHOR; continue; }
          let sum = 0, c = 0;
          for (let q = up.start[v]; q < up.start[v + 1]; q++) { sum += x[up.list[q]]; c++; }
          for (let q = down.start[v]; q < down.start[v + 1]; q++) { sum += x[down.list[q]]; c++; }
          want[j] = c ? sum / c : x[v];
          wt[j] = 1;
          continue;
        }
        if (j - j0 > 1) {  // the free stretch between the fixed j0 and j
          const lo = j0 >= s ? ax[order[j0]] - off[j0] : -Infinity, hi = j < e ? ax[order[j]] - off[j] : Infinity;
          pavRange(j0 + 1, j, want, wt, off, lo, hi, res, blk);
          for (let q = j0 + 1; q < j; q++) x[order[q]] = res[q];
        }
        j0 = j;
      }
    }
  }
}

// pav on items a..b-1 (any index range), each block's mean held within [lo, hi]: with a simple order and
// constant bounds, clipping the unbounded solution is the bounded one.
function pavRange(a, b, want, wt, off, lo, hi, out, blk) {
  const { s: bS, w: bW, wt: bWT } = blk;
  let nb = 0;
  for (let j = a; j < b; j++) {
    bS[nb] = j; bW[nb] = wt[j]; bWT[nb] = wt[j] * (want[j] - off[j]); nb++;
    while (nb > 1 && bWT[nb - 2] / bW[nb - 2] > bWT[nb - 1] / bW[nb - 1]) {
      bW[nb - 2] += bW[nb - 1]; bWT[nb - 2] += bWT[nb - 1]; nb--;
    }
  }
  for (let q = 0; q < nb; q++) {
    const mean = Math.min(Math.max(bWT[q] / bW[q], lo), hi), end = q + 1 < nb ? bS[q + 1] : b;
    for (let j = bS[q]; j < end; j++) out[j] = mean + off[j];
  }
}

// Where the old layers of a layering with `prev` have to move apart (see placeLayersStable). O: the old
// layers; d[i]: how far the two old layers around the gap above O[i] move apart: 0 if the gap can hold its
// new layers and the old layers' half heights with minSep between each two, else as far as a fresh layout
// would have them (rankSep), so that gaps do not stay cramped. Gaps 1..split push what is above them up, the
// others what is below them down; split is chosen to move the fewest old nodes (moved).
export function layerShifts(H, oldY, lh, keptIn, rankSep, minSep) {
  const O = [];
  for (let L = 0; L <= H; L++) if (oldY[L] === oldY[L]) O.push(L);
  const m = O.length - 1, d = new Float64Array(Math.max(m + 1, 0));
  for (let i = 1; i <= m; i++) {
    const a = O[i - 1], b = O[i];
    let want = (lh[a] + lh[b]) / 2;
    for (let L = a + 1; L < b; L++) want += lh[L];
    const room = oldY[b] - oldY[a];
    if (want + (b - a) * minSep - room > 1e-6) d[i] = Math.ceil(want + (b - a) * rankSep - room - 1e-6);
  }
  const P = new Float64Array(m + 2);  // P[j]: old nodes in O[0..j-1]
  for (let j = 0; j <= m; j++) P[j + 1] = P[j] + keptIn[O[j]];
  let moved = 0, split = 0, lastUp = 0;
  if (m > 0) {
    moved = Infinity;
    const firstDown = new Int32Array(m + 2).fill(m + 1);
    for (let i = m; i >= 1; i--) firstDown[i] = d[i] > 0 ? i : firstDown[i + 1];
    for (let p = 0; p <= m; p++) {
      if (p && d[p] > 0) lastUp = p;
      const c = P[lastUp] + P[m + 1] - P[firstDown[p + 1]];
      if (c < moved) { moved = c; split = p; }
    }
  }
  return { O, d, split, moved };
}

// Layer centers with `prev`: an old layer keeps its old y; the layers new in this step go into the gaps between
// old layers, spread evenly (at most rankSep apart, centered), or stacked rankSep apart above the top / below
// the bottom. Where a gap between two old layers cannot hold what goes there (the new layers, the old layers'
// half heights, minSep between each two), old layers move apart: for each such gap either everything above it
// moves up or everything below it moves down, one split point for all, chosen to move the fewest old nodes.
export function placeLayersStable(H, oldY, lh, keptIn, cy, rankSep, minSep) {
  const { O, d, split, moved } = layerShifts(H, oldY, lh, keptIn, rankSep, minSep);
  if (!O.length) return;
  const m = O.length - 1, bestP = split;
  for (let j = m, acc = 0; j >= 0; j--) { if (j + 1 <= bestP) acc += d[j + 1]; cy[O[j]] = oldY[O[j]] - acc; }
  for (let j = 0, acc = 0; j <= m; j++) { if (j > bestP) acc += d[j]; cy[O[j]] += acc; }
  for (let i = 1; i <= m; i++) {
    const a = O[i - 1], b = O[i], k = b - a - 1;
    if (!k) continue;
    let T = 0;
    for (let L = a + 1; L < b; L++) T += lh[L];
    const S = cy[b] - lh[b] / 2 - (cy[a] + lh[a] / 2), sp = Math.min((S - T) / (k + 1), rankSep);
    let y = cy[a] + lh[a] / 2 + (S - T - (k - 1) * sp) / 2;
    for (let L = a + 1; L < b; L++) { cy[L] = y + lh[L] / 2; y += lh[L] + sp; }
  }
  for (let L = O[0] - 1; L >= 0; L--) cy[L] = cy[L + 1] - (lh[L] + lh[L + 1]) / 2 - rankSep;
  for (let L = O[m] + 1; L <= H; L++) cy[L] = cy[L - 1] + (lh[L - 1] + lh[L]) / 2 + rankSep;
}
