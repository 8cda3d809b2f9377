import { test } from "node:test";
import assert from "node:assert/strict";
import { layout, edgesFromSrc, positionsOf, edgePolyline, DEFAULTS } from "../../viz/frontend/graph/layout.js";
import { irGraph, hubIds, rewriteStep } from "../../bench/layout_bench.mjs";

const chain = (ids) => ids.map((id, i) => ({ id, src: i ? [ids[i - 1]] : [] }));

function assertDownward(nodes, edges, r) {
  const at = new Map(nodes.map((u, i) => [u.id, i]));
  for (const [a, b] of edges) {
    const i = at.get(a), j = at.get(b);
    if (r.layer[i] < 0 || r.layer[j] < 0) continue;
    assert.ok(r.layer[i] < r.layer[j], `edge ${a}->${b}: layer ${r.layer[i]} not above ${r.layer[j]}`);
    assert.ok(r.y[i] < r.y[j]);
  }
}

function assertNoOverlap(nodes, r, sep = DEFAULTS.nodeSep) {
  const byLayer = new Map();
  nodes.forEach((u, i) => { if (r.layer[i] >= 0) (byLayer.get(r.layer[i]) ?? byLayer.set(r.layer[i], []).get(r.layer[i])).push(i); });
  for (const row of byLayer.values()) {
    row.sort((a, b) => r.x[a] - r.x[b]);
    for (let k = 1; k < row.length; k++) {
      const a = row[k - 1], b = row[k];
      const space = r.x[b] - nodes[b].width / 2 - (r.x[a] + nodes[a].width / 2);
      assert.ok(space >= sep - 1e-6, `nodes ${nodes[a].id} and ${nodes[b].id} are ${space}px apart`);
    }
  }
}

test("every edge points down: sources above users, the SINK at the bottom", () => {
  const nodes = irGraph(800), edges = edgesFromSrc(nodes), r = layout(nodes, edges);
  assertDownward(nodes, edges, r);
  const sink = nodes.length - 1;
  assert.equal(nodes[sink].op, "SINK");
  assert.equal(r.layer[sink], r.layers - 1);
});

test("ALAP: a source sits right above its first user", () => {
  const nodes = [...chain([0, 1, 2, 3]), { id: 9, src: [] }];
  nodes[3].src.push(9);  // 9 is used only by the last node
  const r = layout(nodes, edgesFromSrc(nodes));
  assert.deepEqual([...r.layer], [0, 1, 2, 3, 2]);
});

test("no two nodes of a layer overlap", () => {
  const nodes = irGraph(1500, 7), r = layout(nodes, edgesFromSrc(nodes));
  assertNoOverlap(nodes, r);
  assert.ok(r.dummies > 0);
});

test("deterministic: the same input gives the same output", () => {
  const a = irGraph(600, 3), b = irGraph(600, 3), ra = layout(a, edgesFromSrc(a));
  assert.deepEqual(ra, layout(b, edgesFromSrc(b)));
  const next = rewriteStep(a, 300), prev = positionsOf(a, ra);
  assert.deepEqual(layout(next, edgesFromSrc(next), { prev }), layout(next, edgesFromSrc(next), { prev: positionsOf(b, ra) }));
});

test("edges as a flat typed array lay out the same as pairs", () => {
  const nodes = irGraph(300), pairs = edgesFromSrc(nodes);
  assert.deepEqual(layout(nodes, Int32Array.from(pairs.flat())), layout(nodes, pairs));
});

test("edge routes run down from the source's bottom to the user's top", () => {
  const nodes = irGraph(400, 5), edges = edgesFromSrc(nodes), r = layout(nodes, edges);
  const near = (a, b) => Math.abs(a - b) < 1e-3;
  let long = 0;
  edges.forEach(([a, b], e) => {
    const own = r.points.subarray(r.pointStart[e], r.pointStart[e + 1]), line = edgePolyline(r, e);
    assert.equal(own.length, 4);
    assert.ok(near(own[2], r.x[b]) && near(own[3], r.y[b] - nodes[b].height / 2), "own part ends at the user's top");
    assert.ok(near(line[0], r.x[a]) && near(line[1], r.y[a] + nodes[a].height / 2), "whole line starts at the source's bottom");
    assert.deepEqual(line.subarray(line.length - 4), own);
    for (let p = 3; p < line.length; p += 2) assert.ok(line[p] >= line[p - 2], "routes never go up");
    if (r.layer[b] - r.layer[a] > 1) {
      long++;
      const bus = r.busPoints.subarray(r.busPointStart[a], r.busPointStart[a + 1]);
      assert.deepEqual(line.subarray(0, line.length - 4), bus.subarray(0, line.length - 4), "a long edge follows its source's bus");
      assert.ok(near(own[1], r.layerBottom[r.layer[b] - 1]), "and leaves it in the layer above its user");
    }
  });
  assert.ok(long > 0);
});

test("a bus is one line per source, however many long edges it carries", () => {
  const nodes = [{ id: "c", src: [] }, ...chain([0, 1, 2, 3, 4, 5])];
  for (const u of nodes.slice(1)) u.src.push("c");  // a hub used by every node of a chain
  const r = layout(nodes, edgesFromSrc(nodes));
  assert.equal(r.layer[0], 0);
  assert.equal(r.dummies, 5);  // layers 1..5 between the hub (layer 0) and its lowest user (layer 6)
  assert.deepEqual([r.busStart[0], r.busStart[1]], [0, 5]);
});

test("hub nodes given as inline are left out", () => {
  const nodes = irGraph(500), edges = edgesFromSrc(nodes), hubs = new Set(hubIds(nodes));
  const r = layout(nodes, edges, { inline: hubs });
  nodes.forEach((u, i) => {
    assert.equal(r.layer[i] < 0, hubs.has(u.id));
    assert.equal(Number.isNaN(r.x[i]), hubs.has(u.id));
  });
  edges.forEach(([a, b], e) => assert.equal(r.pointStart[e + 1] === r.pointStart[e], hubs.has(a) || hubs.has(b)));
  assertDownward(nodes, edges, r);
  assertNoOverlap(nodes, r);
  assert.ok(r.dummies < layout(nodes, edges).dummies);
});

test("stability: replacing one node keeps the other nodes where they were", () => {
  const nodes = irGraph(1000, 11), r0 = layout(nodes, edgesFromSrc(nodes)), prev = positionsOf(nodes, r0);
  for (const victim of [200, 500, 900]) {
    // the rewrite: node `victim` becomes a new node with a new id, the same sources, the same users
    const fresh = 100000 + victim;
    const next = nodes.map((u) => (u.id === victim ? { ...u, id: fresh } : { ...u, src: u.src.map((s) => (s === victim ? fresh : s)) }));
    const r1 = layout(next, edgesFromSrc(next), { prev });
    let kept = 0, total = 0;
    next.forEach((u, i) => {
      if (u.id === fresh) return;
      total++;
      if (Math.abs(r1.x[i] - prev.get(u.id).x) < 0.5 && Math.abs(r1.y[i] - prev.get(u.id).y) < 0.5) kept++;
    });
    assert.ok(kept / total > 0.95, `only ${kept}/${total} kept their position`);
    assertNoOverlap(next, r1);
    assertDownward(next, edgesFromSrc(next), r1);
  }
});

test("stability: after a rewrite that rebuilds the users, every old node keeps x and y", () => {
  const nodes = irGraph(1000, 11), r0 = layout(nodes, edgesFromSrc(nodes)), prev = positionsOf(nodes, r0);
  for (const remove of [false, true]) for (const victim of [100, 500, 700]) {
    const next = rewriteStep(nodes, victim, remove), r1 = layout(next, edgesFromSrc(next), { prev });
    const old = next.map((u, i) => [prev.get(u.id), i]).filter(([p]) => p);
    const kept = old.filter(([p, i]) => Math.abs(r1.x[i] - p.x) < 0.5 && Math.abs(r1.y[i] - p.y) < 0.5).length;
    assert.ok(kept / old.length > 0.95, `${remove ? "remove" : "replace"} ${victim}: ${kept}/${old.length} kept their place`);
    assert.ok(old.length < next.length, "the rewrite renamed some nodes");
    assertNoOverlap(next, r1);
    assertDownward(next, edgesFromSrc(next), r1);
  }
});

test("stability: a new node goes next to its neighbours; the rest stay", () => {
  const nodes = irGraph(400, 2), r0 = layout(nodes, edgesFromSrc(nodes)), prev = positionsOf(nodes, r0);
  const user = nodes[300], next = [...nodes.map((u) => ({ ...u })), { id: "new", src: [user.src[0]], width: 100, height: 28 }];
  next[300].src = ["new", ...user.src.slice(1)];
  const r1 = layout(next, edgesFromSrc(next), { prev });
  const moved = nodes.filter((u, i) => Math.abs(r1.x[i] - prev.get(u.id).x) >= 0.5).length;
  assert.ok(moved < nodes.length * 0.05, `${moved} nodes moved`);
  assert.ok(Math.abs(r1.x[next.length - 1] - r1.x[300]) < 600, "the new node sits near its user");
  assertNoOverlap(next, r1);
});

test("a graph that would need O(V^2) dummies stays within the dummy budget", () => {
  // node i reads i-1 and i/4: long edges of every length
  const nodes = Array.from({ length: 2000 }, (_, i) => ({ id: i, src: i ? [i - 1, i >> 2] : [], width: 80, height: 28 }));
  const edges = edgesFromSrc(nodes), r = layout(nodes, edges);
  assert.ok(r.dummies <= 3 * (nodes.length + edges.length) + 1000);
  assertDownward(nodes, edges, r);
  assertNoOverlap(nodes, r);
  edges.forEach(([a], e) => {
    const line = edgePolyline(r, e);
    assert.ok(Math.abs(line[0] - r.x[a]) < 1e-3 && Math.abs(line[1] - (r.y[a] + 14)) < 1e-3);
  });
  assert.ok(layout(nodes, edges, { maxDummies: 0 }).dummies === 0);
});

test("0 and 1 node", () => {
  const r0 = layout([], []);
  assert.equal(r0.x.length, 0);
  assert.equal(r0.points.length, 0);
  assert.deepEqual([...r0.pointStart], [0]);
  const r1 = layout([{ id: "a", width: 50, height: 20 }], []);
  assert.deepEqual([...r1.layer], [0]);
  assert.ok(Number.isFinite(r1.x[0]) && Number.isFinite(r1.y[0]));
  assert.deepEqual(r1.bounds, { x0: 0, y0: 0, x1: 50, y1: 20 });
});

test("disconnected components are all laid out without overlaps", () => {
  const nodes = [...chain([1, 2, 3]), ...chain([10, 11]), { id: 20, src: [] }, ...chain([30, 31, 32, 33])];
  const edges = edgesFromSrc(nodes), r = layout(nodes, edges);
  assert.ok([...r.x, ...r.y].every(Number.isFinite));
  assertDownward(nodes, edges, r);
  assertNoOverlap(nodes.map((u) => ({ ...u, width: DEFAULTS.nodeWidth })), r);
});

test("multi-edges: a source used twice by one node gets two routes", () => {
  const nodes = [{ id: 0 }, { id: 1 }, { id: 2, src: [0, 0, 1] }], edges = edgesFromSrc(nodes), r = layout(nodes, edges);
  assert.deepEqual(edges, [[0, 2], [0, 2], [1, 2]]);
  assertDownward(nodes, edges, r);
  const route = (e) => [...r.points.subarray(r.pointStart[e], r.pointStart[e + 1])];
  assert.equal(route(0).length, 4);
  assert.deepEqual(route(0), route(1));
});

test("bad input is tolerated: cycles, self loops, unknown ids", () => {
  const nodes = [{ id: 0 }, { id: 1 }, { id: 2 }];
  const r = layout(nodes, [[0, 1], [1, 2], [2, 0], [1, 1], [7, 0]]);
  assert.ok([...r.x, ...r.y].every(Number.isFinite));
  assert.equal(r.pointStart[4], r.pointStart[5]);  // the unknown id's edge has no route
  assert.equal(r.pointStart[3], r.pointStart[4]);  // neither has the self loop
  assert.ok(r.pointStart[3] - r.pointStart[2] >= 4);  // the edge closing the cycle is still drawn
});

test("the worker answers a request with its id and the layout", async () => {
  const posted = [];
  globalThis.self = { postMessage: (msg, transfer) => posted.push({ msg, transfer }) };
  await import("../../viz/frontend/graph/layout_worker.js");
  const nodes = irGraph(200), edges = edgesFromSrc(nodes);
  self.onmessage({ data: { id: 42, nodes, edges } });
  self.onmessage({ data: { id: 43, nodes: [{ id: 0 }], edges: [[0, "nope"]], prev: new Map([[0, { x: 5, y: 7 }]]) } });
  self.onmessage({ data: { id: 44, nodes: null, edges: [] } });
  delete globalThis.self;
  assert.equal(posted[0].msg.id, 42);
  assert.deepEqual(posted[0].msg.x, layout(nodes, edges).x);
  assert.ok(posted[0].transfer.includes(posted[0].msg.points.buffer) && posted[0].transfer.includes(posted[0].msg.x.buffer));
  assert.deepEqual([posted[1].msg.x[0], posted[1].msg.y[0]], [5, 7]);
  assert.equal(posted[2].msg.id, 44);
  assert.match(posted[2].msg.error, /./);
});

// A kernel after an upcast, in small: `lanes` parallel lanes (LOAD, a chain of ALU ops, STORE) that all read two
// shared nodes and end in one SINK, so every layer in the middle is `lanes` nodes wide
function laneGraph(lanes = 256, depth = 8) {
  const nodes = [], add = (op, src, height = 28) => {
    nodes.push({ id: nodes.length, op, src, width: 60 + (nodes.length % 4) * 9, height });
    return nodes.length - 1;
  };
  const buf = add("DEFINE_GLOBAL", []), rng = add("RANGE", []), stores = [];
  for (let l = 0; l < lanes; l++) {
    let x = add("LOAD", [add("INDEX", [buf, rng])], 40);
    for (let d = 0; d < depth; d++) x = add(d % 2 ? "MUL" : "ADD", [x, d % 3 ? rng : buf]);
    stores.push(add("STORE", [add("INDEX", [buf, rng]), x], 40));
  }
  add("SINK", stores);
  return nodes;
}

// One step as the rewrite view lays it out: `edit` changes copies of the nodes; every node whose sources changed
// and all its users, transitively, get new ids (hash-consing rebuilds them), and the view gives each rebuilt
// node its old node's place. Returns the new nodes and the prev to lay them out with.
function viewStep(nodes, pos, edit) {
  const next = nodes.map((u) => ({ ...u, src: [...u.src] })), had = new Map(nodes.map((u) => [u.id, u.src.join()]));
  edit(next);
  const users = new Map();
  for (const u of next) for (const s of u.src) (users.get(s) ?? users.set(s, []).get(s)).push(u.id);
  const todo = next.filter((u) => had.has(u.id) && had.get(u.id) !== u.src.join()).map((u) => u.id), rebuilt = new Set(todo);
  while (todo.length) for (const u of users.get(todo.pop()) ?? []) if (!rebuilt.has(u)) { rebuilt.add(u); todo.push(u); }
  const id = (x) => (rebuilt.has(x) ? `re${x}` : x), prev = new Map(pos);
  for (const x of rebuilt) prev.set(id(x), pos.get(x));
  return { next: next.map((u) => ({ ...u, id: id(u.id), src: u.src.map(id) })), prev };
}

// how many of the nodes that have a prev entry are exactly (to the bit) where it says
function keptInPlace(nodes, prev, r) {
  let kept = 0, total = 0;
  nodes.forEach((u, i) => {
    const p = prev.get(u.id);
    if (!p) return;
    total++;
    if (r.x[i] === p.x && r.y[i] === p.y) kept++;
  });
  return { kept, total };
}

function assertStableStep(nodes, prev, r1, label) {
  const { kept, total } = keptInPlace(nodes, prev, r1);
  assert.ok(total > 0 && kept / total >= 0.99, `${label}: only ${kept}/${total} old nodes kept x and y exactly`);
  assertNoOverlap(nodes, r1);
  assertDownward(nodes, edgesFromSrc(nodes), r1);
  for (let L = 1; L < r1.layers; L++) assert.ok(r1.layerTop[L] > r1.layerBottom[L - 1], `${label}: layers ${L - 1} and ${L} overlap`);
  const again = layout(nodes.map((u) => ({ ...u })), edgesFromSrc(nodes), { prev: new Map(prev) });
  assert.deepEqual(again, r1, `${label}: not deterministic`);
}

// a chain down the longest path of a layout: from a top node, each step to a user one layer down
function longestPath(nodes, r) {
  const at = new Map(nodes.map((u, i) => [u.id, i])), users = new Map();
  for (const u of nodes) for (const s of u.src) (users.get(s) ?? users.set(s, []).get(s)).push(u.id);
  let i = r.layer.indexOf(0);
  const path = [i];
  for (;;) {
    const next = (users.get(nodes[i].id) ?? []).map((id) => at.get(id)).find((j) => r.layer[j] === r.layer[i] + 1);
    if (next === undefined) return path;
    path.push((i = next));
  }
}

test("stability: a step that adds a layer in the middle keeps the old nodes' x and y", () => {
  // a new layer 28px tall fits between two old layers (rankSep 48 apart); a taller one does not, and then the
  // nodes of the longest path below it (or above it) move down (up) a layer instead: few in a wide graph
  const cases = [["lanes", laneGraph(), [28, 40, 54]], ["ir", irGraph(1500, 4), [28]]];
  for (const [name, nodes, heights] of cases) for (const height of heights) {
    const r0 = layout(nodes, edgesFromSrc(nodes)), pos = positionsOf(nodes, r0);
    // a new node between two nodes of the longest path, halfway down: a fresh layout is one layer deeper
    const path = longestPath(nodes, r0), user = nodes[path[path.length >> 1]], src = nodes[path[(path.length >> 1) - 1]];
    const { next, prev } = viewStep(nodes, pos, (ns) => {
      const u = ns.find((w) => w.id === user.id);
      u.src = u.src.map((s) => (s === src.id ? "new" : s));
      ns.push({ id: "new", op: "NEG", src: [src.id], width: 70, height });
    });
    assert.equal(layout(next, edgesFromSrc(next)).layers, r0.layers + 1, "the step deepens the graph");
    const r1 = layout(next, edgesFromSrc(next), { prev });
    const label = `${name}, a new node ${height}px tall`;
    assertStableStep(next, prev, r1, label);
    const at = (id) => next.findIndex((w) => w.id === id);
    assert.equal(r1.layers, r0.layers + 1, `${label}: one layer added`);
    assert.ok(r1.layer[at(src.id)] < r1.layer[at("new")], label);
    const moved = next.length - 1 - keptInPlace(next, prev, r1).kept;
    assert.ok(moved <= Math.max(2, path.length / 2 + 1), `${label}: ${moved} old nodes moved`);
  }
});

test("stability: a layer that grows taller moves no layer", () => {
  for (const [name, nodes] of [["lanes", laneGraph()], ["ir", irGraph(1500, 4)]]) {
    const r0 = layout(nodes, edgesFromSrc(nodes)), pos = positionsOf(nodes, r0);
    // a new tall source of a node in the middle: it joins the layer right above, which grows taller
    const user = nodes.find((u, i) => r0.layer[i] === r0.layers >> 1 && u.op !== "STORE");
    const { next, prev } = viewStep(nodes, pos, (ns) => {
      ns.find((w) => w.id === user.id).src.push("tall");
      ns.push({ id: "tall", op: "LOAD", src: [], width: 90, height: 66 });
    });
    const r1 = layout(next, edgesFromSrc(next), { prev }), L = r1.layer[next.length - 1];
    assertStableStep(next, prev, r1, name);
    assert.equal(keptInPlace(next, prev, r1).kept, next.length - 1, `${name}: every old node stays`);
    assert.equal(r1.layers, r0.layers);
    assert.ok(r1.layerBottom[L] - r1.layerTop[L] > r0.layerBottom[L] - r0.layerTop[L], `${name}: layer ${L} grew taller`);
  }
});

test("stability: a step that empties a layer keeps the old nodes' x and y", () => {
  const nodes = laneGraph(64), r0 = layout(nodes, edgesFromSrc(nodes)), pos = positionsOf(nodes, r0);
  // every lane loses its third ALU op: a fresh layout would be one layer shorter
  const gone = new Set(nodes.filter((u, i) => r0.layer[i] === 4 && u.op !== "RANGE").map((u) => u.id));
  assert.equal(gone.size, 64);
  const { next, prev } = viewStep(nodes, pos, (ns) => {
    const by = new Map(ns.map((u) => [u.id, u]));
    for (const u of ns) u.src = u.src.map((s) => (gone.has(s) ? by.get(s).src[0] : s));
    ns.splice(0, ns.length, ...ns.filter((u) => !gone.has(u.id)));
  });
  assert.equal(layout(next, edgesFromSrc(next)).layers, r0.layers - 1);
  const r1 = layout(next, edgesFromSrc(next), { prev });
  assertStableStep(next, prev, r1, "a layer emptied");
  assert.equal(keptInPlace(next, prev, r1).kept, next.length);
});

test("stability: nothing changed, nothing moves; two nodes given one place: the later one gives way", () => {
  const nodes = irGraph(800, 6), edges = edgesFromSrc(nodes), r0 = layout(nodes, edges), pos = positionsOf(nodes, r0);
  const same = layout(nodes, edges, { prev: pos });
  assert.deepEqual([same.x, same.y], [r0.x, r0.y]);
  // the view draws a match's result where the matched node was, and the matched node (after the step's nodes)
  // beside it for that step
  const victim = nodes[400], next = nodes.map((u) => (u === victim ? { ...u, id: "after" } : { ...u }));
  for (const u of next) u.src = u.src.map((s) => (s === victim.id ? "after" : s));
  next.push({ ...victim });
  const prev = new Map(pos).set("after", pos.get(victim.id)), r1 = layout(next, edgesFromSrc(next), { prev });
  const { kept, total } = keptInPlace(next, prev, r1);
  assert.equal(kept, total - 1, "only one of the two moves");
  assert.deepEqual([r1.x[400], r1.y[400]], [pos.get(victim.id).x, pos.get(victim.id).y], "the earlier one stays");
  assertNoOverlap(next, r1);
  assertDownward(next, edgesFromSrc(next), r1);
});

test("beside: a removed node is drawn right next to its replacement; the rest stays where it was", () => {
  const nodes = irGraph(1000, 11), r0 = layout(nodes, edgesFromSrc(nodes)), prev0 = positionsOf(nodes, r0);
  for (const victim of [300, 600, 900]) {
    const v = nodes[victim], after = "after" + victim;
    // the step: `after` takes the victim's place (and its prev entry); the victim stays drawn, removed, with its sources
    const next = [...nodes.map((u) => (u.id === victim ? { ...u, id: after } : { ...u, src: u.src.map((s) => (s === victim ? after : s)) })), { ...v }];
    const prev = new Map(prev0); prev.set(after, prev0.get(victim));
    const far = layout(next, edgesFromSrc(next), { prev });
    const r = layout(next, edgesFromSrc(next), { prev, beside: new Map([[victim, after]]) });
    const i = next.length - 1, j = next.findIndex((u) => u.id === after);
    assert.equal(r.y[i], r.y[j]);
    const d = Math.abs(r.x[i] - r.x[j]), want = (v.width + next[j].width) / 2 + DEFAULTS.nodeSep;
    assert.ok(Math.abs(d - want) < 1, `removed node ${d}px from its replacement, want ${want}`);
    assert.ok(Math.abs(far.x[i] - far.x[j]) >= d, "without beside it is no nearer");
    assertNoOverlap(next, r);
    let kept = 0;
    next.forEach((u, k) => { const p = prev.get(u.id); if (k !== i && p && Math.abs(r.x[k] - p.x) < 0.5 && Math.abs(r.y[k] - p.y) < 0.5) kept++; });
    assert.ok(kept / (next.length - 1) > 0.95, `only ${kept} of ${next.length - 1} kept their place`);
  }
});

test("left to right: the top-to-bottom layout transposed, edges run rightward, stable steps keep x and y", () => {
  const nodes = irGraph(600, 4), edges = edgesFromSrc(nodes), tb = layout(nodes.map((u) => ({ ...u, width: u.height, height: u.width })), edges);
  const r = layout(nodes, edges, { dir: "LR" });
  assert.equal(r.dir, "LR");
  assert.deepEqual([...r.x], [...tb.y]);
  assert.deepEqual([...r.y], [...tb.x]);
  const at = new Map(nodes.map((u, i) => [u.id, i]));
  for (const [a, b] of edges) assert.ok(r.x[at.get(a)] < r.x[at.get(b)], `edge ${a}->${b} does not run right`);
  edges.forEach(([a, b], e) => {
    const line = edgePolyline(r, e), i = at.get(a), j = at.get(b);
    assert.ok(Math.abs(line[0] - (r.x[i] + nodes[i].width / 2)) < 1e-3 && Math.abs(line[1] - r.y[i]) < 1e-3, "starts at the source's right side");
    assert.ok(Math.abs(line[line.length - 2] - (r.x[j] - nodes[j].width / 2)) < 1e-3, "ends at the user's left side");
    for (let p = 2; p < line.length; p += 2) assert.ok(line[p] >= line[p - 2] - 1e-3, "never runs back left");
  });
  for (let i = 0; i < nodes.length; i++) for (const [x, y] of [[r.x[i], r.y[i]]]) {
    assert.ok(x - nodes[i].width / 2 >= r.bounds.x0 - 1e-6 && y + nodes[i].height / 2 <= r.bounds.y1 + 1e-6);
  }
  const next = rewriteStep(nodes, 300), prev = positionsOf(nodes, r), r1 = layout(next, edgesFromSrc(next), { dir: "LR", prev });
  let kept = 0, old = 0;
  next.forEach((u, i) => { const p = prev.get(u.id); if (p) { old++; if (Math.abs(r1.x[i] - p.x) < 0.5 && Math.abs(r1.y[i] - p.y) < 0.5) kept++; } });
  assert.ok(old > 100 && kept === old, `${kept} of ${old} old nodes kept x and y`);
});

test("direction: a graph with wide layers goes left to right in a wide pane; a narrow or small one stays top to bottom", async () => {
  const { pickDirection } = await import("../../viz/frontend/graph/direction.js");
  const run = (nodes) => (options) => layout(nodes, edgesFromSrc(nodes), options);
  // 30 lanes of 40-node chains meeting in one sink: 41 layers of 30 nodes
  const lanes = [];
  for (let l = 0; l < 30; l++) for (let d = 0; d < 40; d++) lanes.push({ id: l * 40 + d, src: d ? [l * 40 + d - 1] : [], width: 120, height: 28 });
  lanes.push({ id: -1, src: Array.from({ length: 30 }, (_, l) => l * 40 + 39), width: 60, height: 28 });
  assert.equal((await pickDirection({ nodes: lanes }, run(lanes), 1280, 700, -1)).dir, "LR");
  assert.equal((await pickDirection({ nodes: lanes }, run(lanes), 500, 1400, -1)).dir, "TB", "a tall pane keeps it top to bottom");
  const deep = chain(Array.from({ length: 40 }, (_, i) => i)).map((u) => ({ ...u, width: 120, height: 28 }));
  assert.equal((await pickDirection({ nodes: deep }, run(deep), 1280, 700, 39)).dir, "TB", "a chain reads as well either way");
  const small = deep.slice(0, 5);
  assert.equal((await pickDirection({ nodes: small }, run(small), 1280, 700)).dir, "TB", "fits: no second layout");
  assert.equal((await pickDirection({ nodes: [] }, run([]), 1280, 700)).dir, "TB");
});

test("channels: bus lines packed side by side are drawn as one line; their own places stay apart", () => {
  const nodes = irGraph(1500, 9), r = layout(nodes, edgesFromSrc(nodes));
  // drawn x of each bus per layer (from its polyline's vertical runs) against its own x (busX)
  const drawn = new Map(), own = new Map();  // "layer:x" -> count of buses drawn there / placed there
  let merged = 0;
  for (let s = 0; s < nodes.length; s++) {
    const pts = r.busPoints.subarray(r.busPointStart[s], r.busPointStart[s + 1]);
    for (let d = r.busStart[s], L = r.layer[s] + 1; d < r.busStart[s + 1]; d++, L++) {
      const bottom = r.layerBottom[L];
      let x = null;
      for (let j = 0; j + 1 < pts.length; j += 2) if (Math.abs(pts[j + 1] - bottom) < 1e-3) x = pts[j];
      assert.ok(x !== null, `bus of ${s} has no point at the bottom of layer ${L}`);
      const k = `${L}:${x}`, o = `${L}:${r.busX[d]}`;
      drawn.set(k, (drawn.get(k) ?? 0) + 1);
      own.set(o, (own.get(o) ?? 0) + 1);
      if (Math.abs(x - r.busX[d]) > 1e-3) merged++;
    }
  }
  assert.ok([...drawn.values()].some((c) => c > 1) && merged > 0, "no two buses share a channel");
  assert.ok([...own.values()].every((c) => c === 1), "two buses placed at one x of a layer");
});

test("beside: a removed node whose replacement is its own source is drawn right under it", () => {
  const nodes = irGraph(1000, 11), r0 = layout(nodes, edgesFromSrc(nodes)), prev = positionsOf(nodes, r0);
  let checked = 0;
  for (const victim of [250, 450, 650, 850]) {
    const v = nodes[victim], s0 = v.src[0];
    if (s0 === undefined || hubIds(nodes).includes(s0)) continue;
    // x + 0 -> x: the victim's users read its first source; the victim stays drawn, removed, with its sources
    const next = [...nodes.filter((u) => u.id !== victim).map((u) => ({ ...u, src: u.src.map((s) => (s === victim ? s0 : s)) })), { ...v }];
    const r = layout(next, edgesFromSrc(next), { prev, beside: new Map([[victim, s0]]) });
    const i = next.length - 1, j = next.findIndex((u) => u.id === s0);
    assert.equal(r.layer[i], r.layer[j] + 1, "in the layer right under its replacement");
    // under it: its centre under its replacement's box (bus lines and the old nodes beside it may hold it off a little)
    assert.ok(Math.abs(r.x[i] - r.x[j]) < next[j].width / 2, `${r.x[i] - r.x[j]}px off its replacement's x`);
    assertNoOverlap(next, r);
    assertDownward(next, edgesFromSrc(next), r);
    checked++;
  }
  assert.ok(checked >= 2);
});
