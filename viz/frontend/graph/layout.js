// Layered DAG layout for UOp graphs: pure, deterministic, no DOM, no imports.
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

const SHIFT = 1048576;  // 2^20: sort keys pack (quantized key, slot) in one float64; layers hold < 2^20 nodes
// anchors move only when a collision leaves no other way; a bus line gives way to a node
const NODE_ANCHOR = 1e6, BUS_ANCHOR = 1e3;

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

function lookup(prev) {
  return prev instanceof Map ? (id) => prev.get(id) : (id) => prev[id];
}

// CSR adjacency: for each node a, the list of b over pairs (a, b), in pair order
function csr(N, a, b) {
  const start = new Int32Array(N + 1), list = new Int32Array(a.length);
  for (let i = 0; i < a.length; i++) start[a[i] + 1]++;
  for (let v = 0; v < N; v++) start[v + 1] += start[v];
  const fill = start.slice(0, N);
  for (let i = 0; i < a.length; i++) list[fill[a[i]]++] = b[i];
  return { start, list };
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
function layerStable(n, live, ef, et, was, h, rankSep, minSep) {
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
function besideLayers(n, live, ef, et, layer, H, index, get, nodes) {
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

function setLayerOrder(g, L, slots) {
  const s = g.layerStart[L];
  for (let j = 0; j < slots.length; j++) { g.order[s + j] = slots[j]; g.pos[slots[j]] = j; }
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

// Sort layer L by key[v] (ties keep the current order). keys must be >= 0 and < 2^32 after scaling.
function sortLayer(g, L, key, scratch, slots) {
  const s = g.layerStart[L], len = g.layerStart[L + 1] - s;
  const packed = scratch.subarray(0, len);
  for (let j = 0; j < len; j++) packed[j] = Math.round(key[g.order[s + j]]) * SHIFT + j;
  packed.sort();
  const sl = slots.subarray(0, len);
  for (let j = 0; j < len; j++) sl[j] = g.order[s + (packed[j] % SHIFT)];
  setLayerOrder(g, L, sl);
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

// Stable order: anchors keep their previous x as sort key; other nodes take their neighbours' mean key,
// moved into the nearest hole that fits them. Of two anchored nodes of a layer that would overlap at their
// old x (a node given the place of one still drawn, a node grown wider or moved to another layer), the one
// of higher rank gives way: it stops being an anchor and is placed like a new node, from its old x.
function orderByAnchors(g, anchor, ax, rank) {
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

function gap(g, a, b) {
  const o = g.o, da = a >= g.n, db = b >= g.n;
  return (g.width[a] + g.width[b]) / 2 + (da && db ? o.edgeSep : da || db ? (o.edgeSep + o.nodeSep) / 2 : o.nodeSep);
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

const scratch = (len) => ({ s: new Int32Array(len), w: new Float64Array(len), wt: new Float64Array(len) });

// With `prev`, each x placement pass solves a layer between its fixed nodes (the anchors, at exactly their old x):
// the items between two fixed nodes (new nodes, bus lines, anchors that had to give way) get the closest
// positions to what they want that fit there (bounded isotonic regression). Fixed once per layer: if the items
// of a stretch do not fit between its two fixed ends at the normal gaps, bus lines squeeze (edgeSep / 2 from
// their neighbours); if they still do not fit, both ends give way (they become items that want their old x
// with a large weight) and the stretch joins its neighbours. Fixed nodes are set to their old x, not
// computed, so that a node that could stay stays to the last bit.
function placeXStable(g, anchor, ax) {
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
function layerShifts(H, oldY, lh, keptIn, rankSep, minSep) {
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
function placeLayersStable(H, oldY, lh, keptIn, cy, rankSep, minSep) {
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
