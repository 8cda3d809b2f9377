// A schedule as kernels: one box per kernel or copy the schedule made, in the order they run, and the buffers between
// them (a small node per buffer, its dtype and size written on it: what travels along the edge). A kernel box can
// open in place into its UOps, down to the same buffer nodes. Pure: the answer of
// GET /api/runs/{run}/contexts/{ctx}/schedule in, the node list the layout and the canvas draw out.
import { buildView, labelSize, shortDtype } from "./graph.js";
import { parseKernelName, kernelHints, AXIS_KINDS } from "../kernelname.js";

const ITEMSIZE = { bool: 1, char: 1, uchar: 1, int8: 1, uint8: 1, short: 2, ushort: 2, half: 2, bfloat16: 2, int16: 2, uint16: 2,
  int: 4, uint: 4, float: 4, int32: 4, uint32: 4, float32: 4, long: 8, ulong: 8, double: 8, int64: 8, uint64: 8, float64: 8 };

/** "512 B", "4.0 KB", "1.5 MB". */
export function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

/** "64", "1.2 K", "3.4 M", "5.6 G" (FLOPs). */
export function fmtCount(n) {
  if (n < 1e3) return String(n);
  for (const [d, s] of [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "K"]]) if (n >= d) return `${(n / d).toFixed(n >= 10 * d ? 0 : 1)} ${s}`;
  return String(n);
}

/** A BUFFER node's {num, size (elements), dtype, bytes, device} (its arg is "(number, size)"). */
export function bufferInfo(u, byId) {
  // ours: arg "(number, size)", src [DEVICE]; tinygrad 0.14's: arg "ParamArg(slot=N, ...)", src [CONST size]
  const m = /^\((\d+),\s*(\d+)/.exec(u.arg ?? ""), slot = /^ParamArg\(slot=(\d+)/.exec(u.arg ?? "");
  const src0 = byId?.get(u.src?.[0]);
  const size = m ? Number(m[2]) : src0?.op === "CONST" && /^\d+$/.test(src0.arg) ? Number(src0.arg) : 0;
  const dtype = shortDtype(u.dtype);
  const device = src0?.op === "DEVICE" ? String(src0.arg).replace(/^'|'$/g, "") : "";
  return { num: m ? Number(m[1]) : slot ? Number(slot[1]) : null, size, dtype, bytes: size * (ITEMSIZE[dtype] ?? 4), device };
}

/** A kernel's name as coloured parts [{text, color}] for a canvas (the colours of kernelname.js, as DEBUG=2 has them). */
export function nameParts(name, kernel) {
  return parseKernelName(name, kernelHints(kernel)).parts.map((p) => ({ text: p.text, color: p.kind ? AXIS_KINDS[p.kind].color : null }));
}

/**
 * The kernel graph of one schedule. sched: {items: [{i, kind, ast, kernel, reads, writes}], kernels: {id: record},
 * uops: [{id, op, dtype, arg, src}]}; expanded: ids of kernel boxes (their item's ast) drawn as their UOps.
 * Returns {nodes, edges, hubs, index} as buildView does (nodes carry lines and sizes), plus boxes: per item in run
 * order {id, i, kind, name, kernel, reads, writes, expanded}, and buffers: per buffer id its bufferInfo.
 * A box's node has `box` (that entry) and `parts` (its coloured name, line 0); a buffer's has `buffer`.
 * An input buffer (no item of the schedule writes it: a weight, a batch) read by several items is drawn once above
 * each reader (copies get negative ids and `copyOf`): one node joined to kernels far apart would pull long edges
 * through the whole graph, as hubs do in a UOp graph.
 */
export function buildKernelGraph(sched, { expanded = new Set(), hubs = "inline" } = {}) {
  const byId = new Map((sched.uops ?? []).map((u) => [u.id, u]));
  const kernels = sched.kernels ?? {};
  const writer = new Map(), boxes = [], buffers = new Map(), nodes = [], keep = new Set();
  const bufferNode = (id) => {
    if (buffers.has(id)) return;
    const u = byId.get(id) ?? { id, op: "BUFFER", dtype: "", arg: "", src: [] };
    buffers.set(id, bufferInfo(u, byId));
  };
  // a write to a buffer an earlier item (or this one) already read or wrote is a new value of it: its own node (a
  // negative id, `versionOf`), which later readers read; one node for both would make a cycle (tinygrad's assigns
  // write the BUFFER they read; our engine gives the new value its own BUFFER UOp already)
  const current = new Map(), touched = new Set(), versions = [];  // [node id, buffer id]
  let fresh = -1;
  for (const it of sched.items ?? []) {
    const k = it.kernel !== null && it.kernel !== undefined ? kernels[it.kernel] ?? null : null;
    const name = it.kind === "copy" ? "copy" : k?.name ?? `kernel ${it.i + 1}`;
    const open = it.kind === "kernel" && expanded.has(it.ast) && byId.has(it.ast);
    const readAt = new Map(it.reads.map((b) => [b, current.get(b) ?? b]));
    for (const b of it.reads) touched.add(b);
    const writeAt = new Map(it.writes.map((b) => {
      if (!touched.has(b)) { touched.add(b); return [b, b]; }
      const v = fresh--;
      versions.push([v, b]);
      current.set(b, v);
      return [b, v];
    }));
    const box = { id: it.ast, i: it.i, kind: it.kind, name, kernel: k, reads: it.reads, writes: it.writes, expanded: open, readAt, writeAt };
    boxes.push(box);
    for (const b of [...it.reads, ...it.writes]) bufferNode(b);
    for (const v of writeAt.values()) writer.set(v, it.ast);
  }
  const versionOf = new Map(versions);
  const readers = new Map();
  for (const box of boxes) for (const b of new Set(box.readAt.values())) readers.set(b, (readers.get(b) ?? 0) + 1);
  const copies = [];  // [copy id, buffer id]
  for (const box of boxes) {
    keep.add(box.id);
    // this reader's own copy of each shared input buffer
    const mine = new Map();
    for (const [raw, b] of box.readAt) {
      if (writer.has(b) || readers.get(b) < 2) { mine.set(raw, b); continue; }
      const c = fresh--;
      copies.push([c, b]);
      mine.set(raw, c);
    }
    const at = (s) => mine.get(s) ?? s;
    box.drawnReads = box.reads.map(at);  // the nodes its reads are drawn as (its own copy of a shared input)
    box.drawnWrites = box.writes.map((b) => box.writeAt.get(b));  // and its writes (a new value of a buffer read before)
    if (!box.expanded) { nodes.push({ id: box.id, op: box.kind === "copy" ? "COPY" : "KERNEL", dtype: "", arg: "", src: box.reads.map(at), box }); continue; }
    // the kernel's own UOps, from its SINK down to the buffers (kept as the shared buffer nodes); the STOREs no longer
    // point at the buffer they write: the buffer's edge comes from the box (the SINK), so data flows one way
    const writes = new Set(box.writes), seen = new Set(), stack = [box.id];
    while (stack.length) {
      const id = stack.pop();
      if (seen.has(id) || buffers.has(id)) continue;
      seen.add(id);
      const u = byId.get(id);
      if (!u || u.op === "DEVICE") continue;
      const src = u.op === "STORE" ? u.src.filter((s) => !writes.has(s)) : u.src;
      nodes.push(id === box.id ? { ...u, src: src.map(at), box } : { ...u, src: src.map(at), kernelOf: box.id });
      for (const s of src) stack.push(s);
    }
  }
  const copied = new Set(copies.map(([, b]) => b)), drawn = new Set(boxes.flatMap((b) => [...b.readAt.values(), ...b.writeAt.values()]));
  for (const [id, info] of buffers) {
    if (copied.has(id) || !drawn.has(id)) continue;  // (not drawn: only its copies or new values are)
    keep.add(id);
    const u = byId.get(id) ?? { id, op: "BUFFER", dtype: "", arg: "" };
    nodes.push({ ...u, src: writer.has(id) ? [writer.get(id)] : [], buffer: info });
  }
  for (const [v, b] of versionOf) {
    keep.add(v);
    const u = byId.get(b) ?? { op: "BUFFER", dtype: "", arg: "" };
    nodes.push({ ...u, id: v, src: [writer.get(v)], buffer: buffers.get(b), versionOf: b });
  }
  for (const [c, b] of copies) {
    keep.add(c);
    const u = byId.get(b) ?? { op: "BUFFER", dtype: "", arg: "" };
    nodes.push({ ...u, id: c, src: [], buffer: buffers.get(b), copyOf: b });
  }
  const view = buildView(nodes, { hubs, keep });
  for (const n of view.nodes) {
    if (n.box) Object.assign(n, boxLabel(n.box, boxes.length));
    else if (n.buffer) Object.assign(n, bufferLabel(n.buffer));
  }
  return { ...view, boxes, buffers };
}

function boxLabel(box, n) {
  const k = box.kernel;
  // two lines, so a schedule reads at a glance: the name, then where it runs in the order, its launch and its work
  const lines = [box.name];
  if (box.kind === "copy") lines.push(`#${box.i + 1} of ${n} · copy`);
  else if (k) lines.push(`#${box.i + 1} of ${n} · ${k.device} ${(k.global_size ?? []).join("×") || "1"}${k.local_size?.length ? `/${k.local_size.join("×")}` : ""} · ${fmtCount(k.flops)} FLOPs · ${fmtBytes(k.bytes ?? 0)}${box.expanded ? " ▾" : ""}`);
  else lines.push(`#${box.i + 1} of ${n}`);
  return { lines, parts: box.kind === "kernel" ? nameParts(box.name, k) : null, ...labelSize(lines) };
}

function bufferLabel(b) {
  const lines = [`${b.dtype || "?"}[${b.size}] · ${fmtBytes(b.bytes)}`];
  return { lines, ...labelSize(lines) };
}

/** The boxes' ids in run order: what `order` tests and the toolbar's "next kernel" walk. */
export const runOrder = (g) => g.boxes.map((b) => b.id);

/** The `open` URL value <-> a set of box ids ("12,40"). */
export const parseOpen = (s) => new Set(String(s ?? "").split(",").filter(Boolean).map(Number).filter(Number.isFinite));
export const formatOpen = (set) => [...set].sort((a, b) => a - b).join(",") || null;
