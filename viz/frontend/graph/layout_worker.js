// Web Worker shell around layout.js: `new Worker(new URL("./layout_worker.js", import.meta.url), {type: "module"})`.
// Request: {id, nodes: [{id, width, height}], edges: [[fromId, toId]] or a flat Int32Array,
//           prev?: Map id -> {x, y, depth, bus, busY} (positionsOf of the previous step), options?: {inline, nodeSep, ...}}
// Reply:   {id, ms, ...the layout result} with its typed arrays transferred, or {id, error}.
import { layout } from "./layout.js";

self.onmessage = (event) => {
  const { id, nodes, edges, prev, options } = event.data;
  try {
    const t = performance.now();
    const r = layout(nodes, edges, { ...options, prev });
    r.ms = performance.now() - t;
    self.postMessage({ id, ...r }, [...new Set(Object.values(r).filter(ArrayBuffer.isView).map((a) => a.buffer))]);
  } catch (err) {
    self.postMessage({ id, error: String(err?.stack ?? err) });
  }
};

// Lay out a small graph once at startup, so the first real request does not pay for a cold JIT.
const warm = Array.from({ length: 400 }, (_, i) => ({ id: i }));
layout(warm, warm.flatMap((_, i) => (i ? [[i - 1, i], [i >> 1, i], [i % 7, i]] : [])));
