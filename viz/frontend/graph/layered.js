// What the fresh and the stable layout share (graph/layout.js, graph/stable.js): pure, no DOM, no imports.

export const SHIFT = 1048576;  // 2^20: sort keys pack (quantized key, slot) in one float64; layers hold < 2^20 nodes

// anchors move only when a collision leaves no other way; a bus line gives way to a node
export const NODE_ANCHOR = 1e6, BUS_ANCHOR = 1e3;

export function lookup(prev) {
  return prev instanceof Map ? (id) => prev.get(id) : (id) => prev[id];
}

// CSR adjacency: for each node a, the list of b over pairs (a, b), in pair order
export function csr(N, a, b) {
  const start = new Int32Array(N + 1), list = new Int32Array(a.length);
  for (let i = 0; i < a.length; i++) start[a[i] + 1]++;
  for (let v = 0; v < N; v++) start[v + 1] += start[v];
  const fill = start.slice(0, N);
  for (let i = 0; i < a.length; i++) list[fill[a[i]]++] = b[i];
  return { start, list };
}

export function setLayerOrder(g, L, slots) {
  const s = g.layerStart[L];
  for (let j = 0; j < slots.length; j++) { g.order[s + j] = slots[j]; g.pos[slots[j]] = j; }
}

// Sort layer L by key[v] (ties keep the current order). keys must be >= 0 and < 2^32 after scaling.
export function sortLayer(g, L, key, scratch, slots) {
  const s = g.layerStart[L], len = g.layerStart[L + 1] - s;
  const packed = scratch.subarray(0, len);
  for (let j = 0; j < len; j++) packed[j] = Math.round(key[g.order[s + j]]) * SHIFT + j;
  packed.sort();
  const sl = slots.subarray(0, len);
  for (let j = 0; j < len; j++) sl[j] = g.order[s + (packed[j] % SHIFT)];
  setLayerOrder(g, L, sl);
}

export function gap(g, a, b) {
  const o = g.o, da = a >= g.n, db = b >= g.n;
  return (g.width[a] + g.width[b]) / 2 + (da && db ? o.edgeSep : da || db ? (o.edgeSep + o.nodeSep) / 2 : o.nodeSep);
}

export const scratch = (len) => ({ s: new Int32Array(len), w: new Float64Array(len), wt: new Float64Array(len) });
