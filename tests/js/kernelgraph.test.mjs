import { test } from "node:test";
import assert from "node:assert/strict";
import { buildKernelGraph, runOrder, bufferInfo, fmtBytes, fmtCount, parseOpen, formatOpen } from "../../viz/frontend/rewrites/kernelgraph.js";
import { AXIS_KINDS } from "../../viz/frontend/kernelname.js";

// the shape of GET /contexts/{ctx}/schedule for `x = ones(4,8).contiguous(); y = (x*2).sum(1); z = y.to("CPU:1")`:
// kernel 1 writes buffer 10, kernel 2 reads 10 and writes 11, a copy reads 11 and writes 12
const U = (id, op, dtype, arg, src = []) => ({ id, op, dtype: `dtypes.${dtype}`, arg, src });
const sched = {
  ctx: 5,
  items: [
    { i: 0, kind: "kernel", ast: 30, kernel: 1, reads: [], writes: [10] },
    { i: 1, kind: "kernel", ast: 40, kernel: 2, reads: [10], writes: [11] },
    { i: 2, kind: "copy", ast: 50, kernel: null, reads: [11], writes: [12] },
  ],
  kernels: {
    1: { id: 1, name: "E_4_8", device: "CPU", ctx: 6, global_size: [4, 8], local_size: [], flops: 32, bytes: 128, axis_kinds: ["global", "global"] },
    2: { id: 2, name: "r_4_2_4", device: "CPU", ctx: 7, global_size: [4], local_size: [], flops: 64, bytes: 144, axis_kinds: ["global", "reduce", "reduce"] },
  },
  uops: [
    U(1, "DEVICE", "void", "'CPU'"), U(2, "DEVICE", "void", "'CPU:1'"),
    U(10, "BUFFER", "float", "(0, 32)", [1]), U(11, "BUFFER", "float", "(1, 4)", [1]), U(12, "BUFFER", "float", "(2, 4)", [2]),
    U(20, "CONST", "float", "1.0", [1]), U(21, "EXPAND", "float", "(4, 8)", [20]), U(29, "STORE", "void", "None", [10, 21]), U(30, "SINK", "void", "None", [29]),
    U(31, "CONST", "float", "2.0", [1]), U(32, "MUL", "float", "None", [10, 31]), U(33, "REDUCE_AXIS", "float", "(ADD, (1,))", [32]),
    U(39, "STORE", "void", "None", [11, 33]), U(40, "SINK", "void", "None", [39]),
    U(50, "COPY", "float", "None", [11, 2]),
  ],
};
const byId = (g) => new Map(g.nodes.map((n) => [n.id, n]));
const has = (g, a, b) => g.edges.some(([x, y]) => x === a && y === b);

test("kernels: one box per kernel and copy, in run order, with name, launch size and FLOPs", () => {
  const g = buildKernelGraph(sched);
  assert.deepEqual(runOrder(g), [30, 40, 50]);
  const n = byId(g);
  assert.equal(g.nodes.filter((x) => x.box).length, 3);
  assert.equal(n.get(30).op, "KERNEL");
  assert.equal(n.get(50).op, "COPY");
  assert.equal(n.get(30).lines[0], "E_4_8");
  assert.match(n.get(30).lines[1], /^#1 of 3 · CPU 4×8 · 32 FLOPs · 128 B$/);
  assert.match(n.get(40).lines[1], /^#2 of 3 · CPU 4 · 64 FLOPs · 144 B$/);
  assert.match(n.get(50).lines[1], /^#3 of 3 · copy/);
  // the name's colours: the engine says r_4_2_4 reduces over 2 and 4 (without it only the last axis would be)
  const parts = n.get(40).parts.filter((p) => p.color);
  assert.deepEqual(parts.map((p) => p.text), ["4", "2", "4"]);
  assert.deepEqual(parts.map((p) => p.color), [AXIS_KINDS.global.color, AXIS_KINDS.reduce.color, AXIS_KINDS.reduce.color]);
  // none of the kernels' own UOps are drawn while folded
  for (const id of [20, 21, 29, 31, 32, 33, 39]) assert.ok(!n.has(id), `uop ${id} drawn while folded`);
});

test("buffers: a node per buffer with dtype and size; edges writer -> buffer -> reader", () => {
  const g = buildKernelGraph(sched), n = byId(g);
  assert.deepEqual([...g.buffers.keys()].sort(), [10, 11, 12]);
  assert.equal(n.get(10).lines[0], "float[32] · 128 B");
  assert.equal(n.get(11).lines[0], "float[4] · 16 B");
  assert.deepEqual(g.buffers.get(12), { num: 2, size: 4, dtype: "float", bytes: 16, device: "CPU:1" });
  assert.ok(has(g, 30, 10) && has(g, 10, 40) && has(g, 40, 11) && has(g, 11, 50) && has(g, 50, 12));
  assert.equal(g.edges.length, 5);
});

test("order: every edge goes from an earlier item to a later one (the graph is a DAG in run order)", () => {
  const g = buildKernelGraph(sched);
  const at = new Map(g.boxes.map((b) => [b.id, b.i]));
  const writerOf = new Map(g.boxes.flatMap((b) => b.writes.map((w) => [w, b.i])));
  for (const [a, b] of g.edges) {
    if (g.buffers.has(a) && at.has(b)) assert.ok(!writerOf.has(a) || writerOf.get(a) < at.get(b), `buffer ${a} read before it is written`);
  }
});

test("a kernel box expands in place into its UOps, down to the same buffer nodes", () => {
  const g = buildKernelGraph(sched, { expanded: new Set([40]) }), n = byId(g);
  assert.ok(n.get(40).box.expanded, "the SINK stands for the box, with the kernel's name");
  assert.equal(n.get(40).lines[0], "r_4_2_4");
  assert.match(n.get(40).lines[1], /▾$/);
  for (const id of [32, 33, 39]) assert.ok(n.has(id), `uop ${id} of the expanded kernel drawn`);
  assert.ok(!n.has(31), "its CONST is drawn inline (a hub)");
  assert.match(n.get(32).lines.join(" "), /← 2\.0/);
  // reads come from the buffer node; the write goes from the box to the buffer (not from the buffer into the STORE)
  assert.ok(has(g, 10, 32) && has(g, 33, 39) && has(g, 39, 40) && has(g, 40, 11));
  assert.ok(!has(g, 11, 39));
  // the other kernel stays a box
  assert.ok(n.get(30).box && !n.has(29));
  assert.equal(g.nodes.filter((x) => x.op === "BUFFER").length, 3);
});

test("helpers: sizes, counts and the open list in the URL", () => {
  assert.equal(fmtBytes(512), "512 B");
  assert.equal(fmtBytes(4096), "4.0 KB");
  assert.equal(fmtCount(1_200_000), "1.2 M");
  assert.equal(fmtCount(64), "64");
  assert.deepEqual([...parseOpen("40,12,x")], [40, 12]);
  assert.equal(formatOpen(new Set([40, 12])), "12,40");
  assert.equal(formatOpen(new Set()), null);
  assert.equal(bufferInfo({ op: "BUFFER", dtype: "dtypes.half", arg: "(3, 10)", src: [] }).bytes, 20);
});

test("an input buffer read by several kernels is drawn above each reader, not once with long edges", () => {
  // a weight (buffer 60, written by no item) read by the first kernel and again by the last
  const s = {
    items: [
      { i: 0, kind: "kernel", ast: 30, kernel: 1, reads: [60], writes: [10] },
      { i: 1, kind: "kernel", ast: 40, kernel: 2, reads: [10, 60], writes: [11] },
    ],
    kernels: sched.kernels,
    uops: [...sched.uops, U(60, "BUFFER", "float", "(9, 32)", [1]), U(61, "ADD", "float", "None", [32, 60]), U(62, "STORE", "void", "None", [11, 61]), U(63, "SINK", "void", "None", [62])]
      .map((u) => (u.id === 40 ? { ...u, src: [62] } : u)),
  };
  const g = buildKernelGraph(s), n = byId(g);
  const copies = g.nodes.filter((u) => u.copyOf === 60);
  assert.equal(copies.length, 2);
  assert.ok(!n.has(60), "no shared node for it");
  assert.deepEqual(copies.map((c) => c.lines[0]), ["float[32] · 128 B", "float[32] · 128 B"]);
  assert.ok(copies.every((c) => c.id < 0 && g.edges.some(([a, b]) => a === c.id)));
  assert.deepEqual(g.edges.filter(([a]) => a < 0).map(([, b]) => b).sort(), [30, 40]);
  assert.deepEqual(g.boxes.map((b) => b.drawnReads.map((r) => (r < 0 ? "copy" : r))), [["copy"], [10, "copy"]]);
  // a buffer one item writes is still one node, whatever reads it
  assert.ok(n.has(10) && has(g, 30, 10) && has(g, 10, 40));
  // opened, the kernel's UOps read its own copy
  const o = buildKernelGraph(s, { expanded: new Set([40]) });
  const mine = o.nodes.find((u) => u.copyOf === 60 && o.edges.some(([a, b]) => a === u.id && b === 61));
  assert.ok(mine, "the ADD reads the copy drawn above it");
});

// tinygrad 0.14's schedules (imported from its VIZ files) write in place: an SGD step reads weight 1 in two kernels and
// then a third writes weight 1 again; its BUFFERs are ParamArg(slot=N) over a CONST size
const inplace = {
  ctx: 11,
  items: [
    { i: 0, kind: "kernel", ast: 70, kernel: null, reads: [1, 3], writes: [4] },
    { i: 1, kind: "kernel", ast: 71, kernel: null, reads: [1, 4], writes: [5] },
    { i: 2, kind: "kernel", ast: 72, kernel: null, reads: [5], writes: [1] },
  ],
  kernels: {},
  uops: [U(0, "CONST", "weakint", "16"), U(1, "BUFFER", "float", "ParamArg(slot=0, dtype=dtypes.float, vmin_vmax=None", [0]),
    U(3, "BUFFER", "float", "ParamArg(slot=34, dtype=dtypes.float", [0]), U(4, "BUFFER", "float", "ParamArg(slot=68", [0]),
    U(5, "BUFFER", "float", "ParamArg(slot=69", [0])],
};

test("a buffer written after it was read is a new node: the graph stays acyclic and data flows one way", () => {
  const g = buildKernelGraph(inplace), n = byId(g);
  assert.equal(g.boxes.length, 3);
  const v = g.nodes.find((x) => x.versionOf === 1);
  assert.ok(v && v.id < 0 && has(g, 72, v.id), "the third kernel writes weight 1's new value");
  assert.ok(!g.nodes.some((x) => x.src.includes(v.id)), "nothing in this schedule reads the new value");
  assert.equal(g.boxes[2].drawnWrites[0], v.id);
  // the old value is read by the first two kernels (an input read twice: drawn above each), never written by the third
  assert.ok(!has(g, 72, 1) && g.nodes.filter((x) => x.copyOf === 1).length === 2);
  // acyclic: a topological order exists
  const indeg = new Map(g.nodes.map((x) => [x.id, 0]));
  for (const [, b] of g.edges) indeg.set(b, indeg.get(b) + 1);
  const q = [...indeg].filter(([, d]) => d === 0).map(([id]) => id);
  let seen = 0;
  while (q.length) { const a = q.pop(); seen++; for (const [x, b] of g.edges) if (x === a && indeg.set(b, indeg.get(b) - 1).get(b) === 0) q.push(b); }
  assert.equal(seen, g.nodes.length);
  // tinygrad's BUFFER: size from its CONST source, number from its slot
  assert.deepEqual(bufferInfo(inplace.uops[1], new Map(inplace.uops.map((u) => [u.id, u]))), { num: 0, size: 16, dtype: "float", bytes: 64, device: "" });
  assert.equal(n.get(4).lines[0], "float[16] · 64 B");
});
