// Layered DAG layout for UOp graphs: pure, deterministic, no DOM (its parts: layered.js shared, stable.js with prev).
//
// Direction: an edge [from, to] means `from` is a source (operand) of `to`. Sources sit above their users,
// so every edge points downward and the SINK/root ends up in the bottom layer. Layering is ALAP
// (as late as possible): a node's layer is counted up from the bottom, so a CONST sits right above its
// first user instead of at the top of the graph.
//
// Pipeline: ALAP layering -> one chain of dummy nodes per source for its long edges (a "bus" shared by
// all of that source's users, so a hub costs one dummy per layer, not one per edge) -> DFS seed order ->
// barycenter sweeps, keeping the order with the fewest crossings -> x placement: Gauss-Seidel passes that
// pull each node to the mean x of its neighbours, resolved per layer without overlaps by isotonic
// regression (pool adjacent violators) -> y per layer -> each bus as one polyline, each edge's own part; bus lines
// packed side by side in a layer are drawn at one x there (a channel), so parallel long edges do not form ribbons.
//
// Stability (with `prev`): see graph/stable.js.

import { NODE_ANCHOR, BUS_ANCHOR, lookup, csr, sortLayer, gap, scratch } from "./layered.js";
import { layerStable, besideLayers, orderByAnchors, placeXStable, placeLayersStable } from "./stable.js";

/** Defaults for every option of `layout`. Sizes are in pixels. */
export const DEFAULTS = {
  nodeSep: 24,      // horizontal gap between two nodes in a layer
  edgeSep: 8,       // horizontal gap between two bus lines
  rankSep: 48,      // vertical gap between layers
  minRankSep: 8,    // with `prev`: the least vertical gap a layer new in this step (or one grown taller) may get
                    // between the old layers before old layers are moved apart to make room
  dummyWidth: 4,    // width a bus line occupies in a layer
  nodeWidth: 120,   // size of a node that gives none
  nodeHeight: 28,
  sweeps: 8,        // barycenter sweeps (alternating down/up; the second half look both ways)
  passes: 6,        // x placement passes (alternating down/up)
  maxDummies: null, // bus nodes allowed; null: 3 * (nodes + edges) + 1000. Long edges past it are drawn straight
  inline: null,     // iterable of node ids left out of the layout (hubs drawn in their users' labels)
  prev: null,       // Map or object: id -> {x, y, bus?, busY?} from the previous step (positionsOf)
  beside: null,     // with `prev`: Map or object id -> id: a node drawn right beside another of its layer (a
                    // removed node beside its replacement); old nodes next to them make room (they move this once)
  dir: "TB",        // "TB": sources above users; "LR": sources left of users (the same layout, transposed)
};

/**
 * Lay out a DAG.
 * nodes: [{id, width?, height?}]; ids are any Map keys (UOp ids are numbers).
 * edges: [[fromId, toId], ...] or a flat typed array [from0, to0, from1, to1, ...] (numeric ids);
 *   `from` is a source of `to`. Multi-edges, self loops, unknown ids and cycles are tolerated.
 * Returns (typed arrays; "polyline" = Float32Array of x,y pairs):
 *   x, y: Float64Array(n) node centers (NaN for inline nodes); layer: Int32Array(n) (0 = top, -1 for inline);
 *   layers; layerTop, layerBottom: Float64Array(layers), each layer's band (its tallest node); layerY: its center;
 *   edgeFrom, edgeTo: Int32Array(m) node indices, upper end first (-1: edge dropped);
 *   points, pointStart: Uint32Array(m+1): edge e's own polyline is points[pointStart[e]..pointStart[e+1]),
 *     from its source's bottom (or, for a long edge, from where it leaves the source's bus) to its user's top
 *     (a long edge whose source's bus went over the maxDummies budget: straight from the source's bottom);
 *   busPoints, busPointStart: Uint32Array(n+1): node i's bus, the trunk shared by all its long edges, as a
 *     polyline from its bottom down (empty if it has none). Drawing every bus and every edge's own part
 *     draws each edge once; `edgePolyline` gives one edge whole;
 *   busX, busStart: node i's bus x in layers layer[i]+1, +2, ... is busX[busStart[i]..busStart[i+1]);
 *   bounds: {x0, y0, x1, y1}; dummies (bus nodes made).
 * options: see DEFAULTS. prev: Map or object id -> {x, y, bus?, busY?} (`positionsOf` of the previous step);
 *   an entry without a finite x and y is ignored.
 */
export function layout(nodes, edges, options = {}) {
  if (options.dir === "LR") return layoutLR(nodes, edges, options);
  const o = { ...DEFAULTS, ...options };
  const n = nodes.length;
  const index = new Map();
  for (let i = 0; i < n; i++) index.set(nodes[i].id, i);
  const live = new Uint8Array(n).fill(1);
  if (o.inline) for (const id of o.inline) { const i = index.get(id); if (i !== undefined) live[i] = 0; }
  const w = new Float64Array(n), h = new Float64Array(n);
  for (let i = 0; i < n; i++) { w[i] = nodes[i].width ?? o.nodeWidth; h[i] = nodes[i].height ?? o.nodeHeight; }

  // edges -> node indices; a dropped edge gets -1
  const flat = ArrayBuffer.isView(edges), m = flat ? edges.length >> 1 : edges.length;
  const ef = new Int32Array(m), et = new Int32Array(m);
  for (let e = 0; e < m; e++) {
    const a = index.get(flat ? edges[2 * e] : edges[e][0]), b = index.get(flat ? edges[2 * e + 1] : edges[e][1]);
    const ok = a !== undefined && b !== undefined && a !== b && live[a] && live[b];
    ef[e] = ok ? a : -1; et[e] = ok ? b : -1;
  }
  breakCycles(n, ef, et);
  const prev = o.prev ? lookup(o.prev) : () => undefined;
  const was = nodes.map((u, i) => { const p = live[i] && prev(u.id); return p && Number.isFinite(p.x) && Number.isFinite(p.y) ? p : null; });
  const stable = was.some(Boolean);
  // oldY[L]: the y the layer had in the previous step (NaN: a layer new in this step)
  const minSep = Math.min(o.minRankSep, o.rankSep);
  const { layer, H, oldY, keptIn } = stable ? layerStable(n, live, ef, et, was, h, o.rankSep, minSep) : layerALAP(n, live, ef, et);
  const besideTo = stable && o.beside ? besideLayers(n, live, ef, et, layer, H, index, lookup(o.beside), nodes) : null;

  // dummies: source s gets one bus node per layer from layer[s]+1 down to the layer above its lowest long-edge user
  const busEnd = new Int32Array(n).fill(-1);
  for (let e = 0; e < m; e++) {
    const a = ef[e], b = et[e];
    if (a >= 0 && layer[b] - layer[a] >= 2 && layer[b] > busEnd[a]) busEnd[a] = layer[b];
  }
  capBuses(n, layer, busEnd, o.maxDummies ?? 3 * (n + m) + 1000);
  const busBase = new Int32Array(n + 1);
  busBase[0] = n;
  for (let s = 0; s < n; s++) busBase[s + 1] = busBase[s] + (busEnd[s] >= 0 ? busEnd[s] - 1 - layer[s] : 0);
  const N = busBase[n];
  const nd = N - n;
  const lay = new Int32Array(N), width = new Float64Array(N);
  lay.set(layer); width.set(w);
  for (let s = 0; s < n; s++) for (let d = busBase[s], L = layer[s] + 1; L < busEnd[s]; d++, L++) {
    lay[d] = L; width[d] = o.dummyWidth;
  }

  // layered edges (each spans one layer), in input order so up-neighbours keep source order
  const straight = (e) => layer[et[e]] - layer[ef[e]] > 1 && busBase[ef[e] + 1] === busBase[ef[e]];
  let le = nd;
  for (let e = 0; e < m; e++) if (ef[e] >= 0 && !straight(e)) le++;
  const lf = new Int32Array(le), lt = new Int32Array(le);
  let k = 0;
  for (let e = 0; e < m; e++) {
    const a = ef[e]; if (a < 0 || straight(e)) continue;
    const b = et[e], span = layer[b] - layer[a];
    lf[k] = span === 1 ? a : busBase[a] + span - 2; lt[k++] = b;
  }
  for (let s = 0; s < n; s++) for (let d = busBase[s], L = layer[s] + 1; L < busEnd[s]; d++, L++) {
    lf[k] = d === busBase[s] ? s : d - 1; lt[k++] = d;
  }
  const up = csr(N, lt, lf), down = csr(N, lf, lt);

  // layer buckets
  const layerStart = new Int32Array(H + 2);
  for (let v = 0; v < N; v++) if (v >= n || live[v]) layerStart[lay[v] + 1]++;
  for (let L = 0; L <= H; L++) layerStart[L + 1] += layerStart[L];
  let maxLayer = 0;
  for (let L = 0; L <= H; L++) maxLayer = Math.max(maxLayer, layerStart[L + 1] - layerStart[L]);
  const g = { n, N, H, live, lay, width, up, down, layerStart, order: new Int32Array(layerStart[H + 1]),
    pos: new Int32Array(N), x: new Float64Array(N), maxLayer, o };

  const anchor = new Float64Array(N), ax = new Float64Array(N);  // anchor: weight of the wish to stay at ax
  let anchors = 0;
  for (let i = 0; i < n; i++) {
    const p = was[i];
    if (!p) continue;
    anchor[i] = NODE_ANCHOR; ax[i] = p.x; anchors++;
    const bus = p.bus ?? [], busY = p.busY;
    if (busY && busY.length === bus.length) {
      // the bus keeps its x in the layers that were there before (matched by their y); in new layers it is free
      for (let d = busBase[i], L = layer[i] + 1, k = 0; d < busBase[i + 1]; d++, L++) {
        const y = oldY[L];
        if (y !== y) continue;
        while (k < bus.length && busY[k] < y) k++;
        if (k < bus.length && busY[k] === y) { anchor[d] = BUS_ANCHOR; ax[d] = bus[k]; }
      }
    } else for (let d = busBase[i], k = 0; d < busBase[i + 1] && k < bus.length; d++, k++) { anchor[d] = BUS_ANCHOR; ax[d] = bus[k]; }
  }
  // besideOf[v]: the node v is drawn next to (in its layer) or right under (in the layer below); -1: none
  const besideOf = new Int32Array(N).fill(-1);
  if (anchors && besideTo) for (let i = 0; i < n; i++) if (besideTo[i] >= 0) { besideOf[i] = besideTo[i]; anchor[i] = 0; }
  g.besideOf = besideOf;
  if (anchors) {
    // of two old nodes that would overlap, one that left its old layer gives way first, then the later one
    const rank = new Float64Array(n);
    for (let i = 0; i < n; i++) rank[i] = was[i] && was[i].y !== oldY[layer[i]] ? n + i : i;
    orderByAnchors(g, anchor, ax, rank);
    placeXStable(g, anchor, ax);
  } else {
    seedOrder(g);
    reduceCrossings(g);
    packX(g);
    placeX(g, anchor, ax);
  }

  // y: each layer as tall as its tallest node; with anchors, layers go where their nodes were
  const lh = new Float64Array(H + 1), cy = new Float64Array(H + 1), top = new Float64Array(H + 1);
  for (let i = 0; i < n; i++) if (live[i] && h[i] > lh[layer[i]]) lh[layer[i]] = h[i];
  for (let L = 1; L <= H; L++) cy[L] = cy[L - 1] + (lh[L - 1] + lh[L]) / 2 + o.rankSep;
  for (let L = 0; L <= H; L++) cy[L] += lh[0] / 2;
  let dx = 0;
  if (stable) {
    placeLayersStable(H, oldY, lh, keptIn, cy, o.rankSep, minSep);
  } else {
    let x0 = Infinity;
    for (let v = 0; v < N; v++) if (v >= n || live[v]) x0 = Math.min(x0, g.x[v] - width[v] / 2);
    if (x0 !== Infinity) dx = -x0;
  }
  for (let L = 0; L <= H; L++) top[L] = cy[L] - lh[L] / 2;

  const X = new Float64Array(n).fill(NaN), Y = new Float64Array(n).fill(NaN), outLayer = new Int32Array(n).fill(-1);
  const b = { x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity };
  for (let i = 0; i < n; i++) {
    if (!live[i]) continue;
    X[i] = g.x[i] + dx; Y[i] = cy[layer[i]]; outLayer[i] = layer[i];
    b.x0 = Math.min(b.x0, X[i] - w[i] / 2); b.x1 = Math.max(b.x1, X[i] + w[i] / 2);
    b.y0 = Math.min(b.y0, Y[i] - h[i] / 2); b.y1 = Math.max(b.y1, Y[i] + h[i] / 2);
  }
  for (let d = n; d < N; d++) { b.x0 = Math.min(b.x0, g.x[d] + dx); b.x1 = Math.max(b.x1, g.x[d] + dx); }
  if (b.x0 === Infinity) { b.x0 = b.y0 = b.x1 = b.y1 = 0; }

  // channels: bus lines packed side by side in a layer (nothing between them, edgeSep apart) are drawn as one line at
  // their middle, so that long edges running together read as one channel instead of a ribbon of parallel lines.
  // Only the drawing: busX (and so the next step's positions) keeps each line's own place.
  const drawX = channels(g, dx);
  // a bus is drawn once: from its source's bottom down its dummies (a bend only where it moves sideways)
  const busPointStart = new Uint32Array(n + 1), bp = new Float32Array(4 * nd + 2 * n);
  let p = 0;
  for (let s = 0; s < n; s++) {
    if (busBase[s + 1] > busBase[s]) {
      bp[p++] = X[s]; bp[p++] = Y[s] + h[s] / 2;
      for (let d = busBase[s], L = layer[s] + 1; d < busBase[s + 1]; d++, L++) {
        const xd = drawX[d - n];
        if (Math.fround(xd) !== bp[p - 2]) { bp[p++] = xd; bp[p++] = top[L]; }
        bp[p++] = xd; bp[p++] = top[L] + lh[L];
      }
    }
    busPointStart[s + 1] = p;
  }
  const busPoints = bp.slice(0, p);
  // each edge's own part: from its source's bottom, or from where it leaves the bus, to its user's top
  const pointStart = new Uint32Array(m + 1), points = new Float32Array(4 * m);
  p = 0;
  for (let e = 0; e < m; e++) {
    const a = ef[e], t = et[e];
    if (a >= 0 && (layer[t] - layer[a] === 1 || straight(e))) { points[p++] = X[a]; points[p++] = Y[a] + h[a] / 2; }
    else if (a >= 0) { const L = layer[t] - 1; points[p++] = drawX[busBase[a] + L - layer[a] - 1 - n]; points[p++] = top[L] + lh[L]; }
    if (a >= 0) { points[p++] = X[t]; points[p++] = Y[t] - h[t] / 2; }
    pointStart[e + 1] = p;
  }
  const busStart = new Uint32Array(n + 1), busX = new Float64Array(nd);
  for (let s = 0; s <= n; s++) busStart[s] = busBase[s] - n;
  for (let d = 0; d < nd; d++) busX[d] = g.x[n + d] + dx;
  const layerTop = top.slice(0, n ? H + 1 : 0), layerBottom = layerTop.map((y, L) => y + lh[L]), layerY = cy.slice(0, n ? H + 1 : 0);
  return { x: X, y: Y, layer: outLayer, layers: n ? H + 1 : 0, layerTop, layerBottom, layerY, edgeFrom: ef, edgeTo: et,
    points: points.slice(0, p), pointStart, busPoints, busPointStart, busX, busStart, bounds: b, dummies: nd, dir: "TB" };
}

// Left to right: the top-to-bottom layout of the graph with every node's width and height swapped, transposed
// back (x <-> y in nodes, polylines, bounds). Per-layer fields (layerTop, layerBottom, layerY, busX and the
// bus/busY of positionsOf) stay in the layout's own frame: along the layers (x) and across them (y).
function layoutLR(nodes, edges, options) {
  const swapped = nodes.map((u) => ({ id: u.id, width: u.height ?? options.nodeHeight ?? DEFAULTS.nodeHeight, height: u.width ?? options.nodeWidth ?? DEFAULTS.nodeWidth }));
  let prev = options.prev;
  if (prev) {
    const get = lookup(prev), out = new Map();
    for (const u of nodes) { const p = get(u.id); if (p) out.set(u.id, { ...p, x: p.y, y: p.x }); }
    prev = out;
  }
  const r = layout(swapped, edges, { ...options, dir: "TB", prev });
  const flip = (a) => { for (let j = 0; j + 1 < a.length; j += 2) { const t = a[j]; a[j] = a[j + 1]; a[j + 1] = t; } };
  flip(r.points); flip(r.busPoints);
  [r.x, r.y] = [r.y, r.x];
  const b = r.bounds;
  r.bounds = { x0: b.y0, y0: b.x0, x1: b.y1, y1: b.x1 };
  r.dir = "LR";
  return r;
}

// Drawn x of each bus dummy (index d - n): runs of dummies adjacent in their layer's order and packed (at most
// edgeSep + dummyWidth apart) share the run's middle x.
function channels(g, dx) {
  const { n, N, H, order, layerStart, x, o } = g, out = new Float64Array(N - n), pack = o.edgeSep + o.dummyWidth + 1e-6;
  for (let L = 0; L <= H; L++) {
    for (let j = layerStart[L]; j < layerStart[L + 1];) {
      if (order[j] < n) { j++; continue; }
      let e = j + 1;
      while (e < layerStart[L + 1] && order[e] >= n && x[order[e]] - x[order[e - 1]] <= pack) e++;
      const mid = (x[order[j]] + x[order[e - 1]]) / 2 + dx;
      for (let q = j; q < e; q++) out[order[q] - n] = mid;
      j = e;
    }
  }
  return out;
}

/**
 * The whole polyline of edge e of a layout result, from its upper end down: the source's bus (if the edge
 * is long) up to where the edge leaves it, then its own part. Float32Array of x,y pairs, empty if dropped.
 */
export function edgePolyline(r, e) {
  const a = r.edgeFrom[e], own = r.points.subarray(r.pointStart[e], r.pointStart[e + 1]);
  if (a < 0 || r.layer[r.edgeTo[e]] - r.layer[a] === 1 || r.busPointStart[a + 1] === r.busPointStart[a]) return own.slice();
  const exit = r.layerBottom[r.layer[r.edgeTo[e]] - 1], along = r.dir === "LR" ? 0 : 1;
  let q = r.busPointStart[a];
  while (q < r.busPointStart[a + 1] && r.busPoints[q + along] < exit) q += 2;
  const bus = r.busPoints.subarray(r.busPointStart[a], q);
  const out = new Float32Array(bus.length + own.length);
  out.set(bus); out.set(own, bus.length);
  return out;
}

/**
 * Map id -> {x, y, depth, bus?, busY?} of a layout result, to pass as `prev` to the next step's layout (depth:
 * layers above the bottom one; bus: x of the node's bus line per layer below it, busY: those layers' y). A
 * caller that knows a new node stands for an old one (a rebuilt user) may give it the old node's entry.
 */
export function positionsOf(nodes, result) {
  const out = new Map();
  const { busStart: b, busX } = result;
  for (let i = 0; i < nodes.length; i++) {
    if (result.layer[i] < 0) continue;
    const p = { x: result.x[i], y: result.y[i], depth: result.layers - 1 - result.layer[i] };
    if (b[i + 1] > b[i]) {
      p.bus = busX.slice(b[i], b[i + 1]);
      if (result.layerY) p.busY = result.layerY.slice(result.layer[i] + 1, result.layer[i] + 1 + p.bus.length);
    }
    out.set(nodes[i].id, p);
  }
  return out;
}

/** Edges in source order from UOp-shaped nodes: [{id, src: [ids]}] -> [[srcId, id], ...]. */
export function edgesFromSrc(nodes) {
  const out = [];
  for (const u of nodes) if (u.src) for (const s of u.src) out.push([s, u.id]);
  return out;
}

// Reverse, in place, the edges that close a cycle (DFS back edges) so layering sees a DAG.
function breakCycles(n, ef, et) {
  const m = ef.length, out = csr(n, ef.map((a) => (a < 0 ? 0 : a)), Int32Array.from({ length: m }, (_, e) => e));
  const deg = new Int32Array(n), queue = new Int32Array(n);
  for (let e = 0; e < m; e++) if (ef[e] >= 0) deg[et[e]]++;
  let qt = 0;
  for (let v = 0; v < n; v++) if (deg[v] === 0) queue[qt++] = v;
  for (let qh = 0; qh < qt; qh++) {
    const v = queue[qh];
    for (let j = out.start[v]; j < out.start[v + 1]; j++) { const e = out.list[j]; if (ef[e] >= 0 && --deg[et[e]] === 0) queue[qt++] = et[e]; }
  }
  if (qt === n) return;
  // iterative DFS; state 1 = on the stack, 2 = done; an edge to a node on the stack closes a cycle
  const state = new Uint8Array(n), stack = new Int32Array(n), it = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    if (state[r]) continue;
    let sp = 0; stack[sp++] = r; state[r] = 1; it[r] = out.start[r];
    while (sp) {
      const v = stack[sp - 1];
      if (it[v] === out.start[v + 1]) { state[v] = 2; sp--; continue; }
      const e = out.list[it[v]++], u = et[e];
      if (ef[e] < 0) continue;
      if (state[u] === 1) { ef[e] = u; et[e] = v; }
      else if (state[u] === 0) { state[u] = 1; it[u] = out.start[u]; stack[sp++] = u; }
    }
  }
}

// ALAP: height above the bottom layer, via a reverse topological order (Kahn from the sinks).
function layerALAP(n, live, ef, et) {
  const srcs = csr(n, et.map((b) => (b < 0 ? 0 : b)), ef);
  const outdeg = new Int32Array(n);
  for (let e = 0; e < ef.length; e++) if (ef[e] >= 0) outdeg[ef[e]]++;
  const depth = new Int32Array(n), queue = new Int32Array(n);
  let qt = 0, H = 0;
  for (let v = 0; v < n; v++) if (live[v] && outdeg[v] === 0) queue[qt++] = v;
  for (let qh = 0; qh < qt; qh++) {
    const v = queue[qh];
    if (depth[v] > H) H = depth[v];
    for (let j = srcs.start[v]; j < srcs.start[v + 1]; j++) {
      const s = srcs.list[j];
      if (s < 0) continue;
      if (depth[v] + 1 > depth[s]) depth[s] = depth[v] + 1;
      if (--outdeg[s] === 0) queue[qt++] = s;
    }
  }
  const layer = new Int32Array(n);
  for (let v = 0; v < n; v++) layer[v] = H - depth[v];
  return { layer, H, oldY: null };
}

// Keep the dummy count within budget (a pathological graph can ask for O(V^2)): the longest buses go
// first; their long edges are then drawn straight and left out of ordering and placement.
function capBuses(n, layer, busEnd, budget) {
  let total = 0;
  for (let s = 0; s < n; s++) if (busEnd[s] >= 0) total += busEnd[s] - 1 - layer[s];
  if (total <= budget) return;
  const by = [];
  for (let s = 0; s < n; s++) if (busEnd[s] >= 0) by.push(s);
  const len = (s) => busEnd[s] - 1 - layer[s];
  by.sort((a, b) => len(b) - len(a) || a - b);
  for (const s of by) { if (total <= budget) break; total -= len(s); busEnd[s] = -1; }
}

// Pre-order DFS up from each sink (input order), operands left to right: a node's operands fan out above it
function seedOrder(g) {
  const { n, N, live, up, down, lay, layerStart, order, pos } = g;
  const fill = layerStart.slice(0, g.H + 1), seen = new Uint8Array(N), stack = new Int32Array(up.list.length + N);
  for (let r = 0; r < n; r++) {
    if (!live[r] || down.start[r + 1] !== down.start[r]) continue;
    let sp = 0; stack[sp++] = r;
    while (sp) {
      const v = stack[--sp];
      if (seen[v]) continue;
      seen[v] = 1; pos[v] = fill[lay[v]] - layerStart[lay[v]]; order[fill[lay[v]]++] = v;
      for (let j = up.start[v + 1] - 1; j >= up.start[v]; j--) if (!seen[up.list[j]]) stack[sp++] = up.list[j];
    }
  }
}

// Barycenter sweeps on slot positions, keeping the best order seen (fewest crossings). The first half of
// the sweeps look at one neighbouring layer, alternating down and up; the rest at both, which on hub-heavy
// graphs keeps improving where one-sided sweeps oscillate.
function reduceCrossings(g) {
  const { H, order, pos, up, down, layerStart, maxLayer } = g;
  if (H === 0) return;
  const key = new Float64Array(g.N), scratch = new Float64Array(maxLayer), slots = new Int32Array(maxLayer);
  const bit = new Int32Array(maxLayer + 1);
  let best = countCrossings(g, bit), bestOrder = order.slice();
  for (let sw = 0; sw < g.o.sweeps && best > 0; sw++) {
    const downward = sw % 2 === 0, adj = downward ? up : down, other = downward ? down : up;
    const both = sw >= Math.ceil(g.o.sweeps / 2);
    for (let i = 0; i < H; i++) {
      const L = downward ? i + 1 : H - 1 - i;
      for (let j = layerStart[L]; j < layerStart[L + 1]; j++) {
        const v = order[j];
        let sum = 0, c = adj.start[v + 1] - adj.start[v];
        for (let q = adj.start[v]; q < adj.start[v + 1]; q++) sum += pos[adj.list[q]];
        if (both) { for (let q = other.start[v]; q < other.start[v + 1]; q++) sum += pos[other.list[q]]; c += other.start[v + 1] - other.start[v]; }
        key[v] = (c ? sum / c : j - layerStart[L]) * 256;
      }
      sortLayer(g, L, key, scratch, slots);
    }
    const c = countCrossings(g, bit);
    if (c < best) { best = c; bestOrder = order.slice(); }
  }
  order.set(bestOrder);
  for (let L = 0; L <= H; L++) for (let j = layerStart[L]; j < layerStart[L + 1]; j++) pos[order[j]] = j - layerStart[L];
}

// Crossings between each pair of layers: walk the upper layer left to right; an edge crosses every earlier
// edge (from a node further left) that lands strictly right of it, counted with a Fenwick tree.
function countCrossings(g, bit) {
  const { H, order, pos, down, layerStart } = g;
  let total = 0;
  for (let L = 0; L < H; L++) {
    const size = layerStart[L + 2] - layerStart[L + 1];
    bit.fill(0, 0, size + 1);
    let seen = 0;
    for (let j = layerStart[L]; j < layerStart[L + 1]; j++) {
      const v = order[j], q0 = down.start[v], q1 = down.start[v + 1];
      for (let q = q0; q < q1; q++) {
        let le = 0;
        for (let i = pos[down.list[q]] + 1; i > 0; i -= i & -i) le += bit[i];
        total += seen - le;
      }
      for (let q = q0; q < q1; q++) for (let i = pos[down.list[q]] + 1; i <= size; i += i & -i) bit[i]++;
      seen += q1 - q0;
    }
  }
  return total;
}

function packX(g) {
  const { H, order, layerStart, x } = g;
  for (let L = 0; L <= H; L++) {
    let c = 0;
    for (let j = layerStart[L]; j < layerStart[L + 1]; j++) {
      if (j > layerStart[L]) c += gap(g, order[j - 1], order[j]);
      x[order[j]] = c;
    }
    for (let j = layerStart[L]; j < layerStart[L + 1]; j++) x[order[j]] -= c / 2;
  }
}

// Passes of "move to the mean x of your neighbours"; each layer is then solved for the closest
// non-overlapping positions in its order (weighted least squares, pool adjacent violators).
// Anchors want their previous x with a large weight and do not follow their neighbours.
function placeX(g, anchor, ax) {
  const { H, order, layerStart, x, up, down, maxLayer, n } = g;
  const want = new Float64Array(maxLayer), wt = new Float64Array(maxLayer), off = new Float64Array(maxLayer);
  const blk = scratch(maxLayer), res = new Float64Array(maxLayer);
  for (let v = 0; v < g.N; v++) if (anchor[v]) x[v] = ax[v];
  const passes = Math.max(1, g.o.passes);
  for (let pass = 0; pass < passes; pass++) {
    const downward = pass % 2 === 0;
    for (let i = 0; i <= H; i++) {
      const L = downward ? i : H - i, s = layerStart[L], len = layerStart[L + 1] - s;
      for (let j = 0; j < len; j++) {
        const v = order[s + j];
        if (anchor[v]) { want[j] = ax[v]; wt[j] = anchor[v]; continue; }
        let sum = 0, c = 0;
        for (let q = up.start[v]; q < up.start[v + 1]; q++) { sum += x[up.list[q]]; c++; }
        for (let q = down.start[v]; q < down.start[v + 1]; q++) { sum += x[down.list[q]]; c++; }
        want[j] = c ? sum / c : x[v];
        wt[j] = 1;
      }
      off[0] = 0;
      for (let j = 1; j < len; j++) off[j] = off[j - 1] + gap(g, order[s + j - 1], order[s + j]);
      pav(len, want, wt, off, res, blk);
      for (let j = 0; j < len; j++) x[order[s + j]] = res[j];
    }
  }
}

// The p closest to `want` (least squares, weights wt) with p[j+1] - p[j] >= off[j+1] - off[j]: isotonic
// regression of want - off by pool adjacent violators, O(len). blk: scratch arrays of length >= len.
function pav(len, want, wt, off, out, blk) {
  const { s: bS, w: bW, wt: bWT } = blk;
  let nb = 0;
  for (let j = 0; j < len; j++) {
    bS[nb] = j; bW[nb] = wt[j]; bWT[nb] = wt[j] * (want[j] - off[j]); nb++;
    while (nb > 1 && bWT[nb - 2] / bW[nb - 2] > bWT[nb - 1] / bW[nb - 1]) {
      bW[nb - 2] += bW[nb - 1]; bWT[nb - 2] += bWT[nb - 1]; nb--;
    }
  }
  for (let b = 0; b < nb; b++) {
    const mean = bWT[b] / bW[b], end = b + 1 < nb ? bS[b + 1] : len;
    for (let j = bS[b]; j < end; j++) out[j] = mean + off[j];
  }
}
