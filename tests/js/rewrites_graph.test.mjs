import { test } from "node:test";
import assert from "node:assert/strict";
import { indexGraph, hubIds, unionGraph, correspond, diffSteps, buildView, nodeLabel, labelSize, exprText, exprTree, opFamily, opColor, HUB_USERS } from "../../viz/frontend/rewrites/graph.js";
import { searchNodes, parseQuery } from "../../viz/frontend/rewrites/search.js";

const U = (id, op, src = [], arg = "None", dtype = "dtypes.int") => ({ id, op, dtype, arg, src });
// 2 + 2 -> 4 folded, under a STORE: step 0 and step 1 of a constant-folding rewrite
const step0 = [U(1, "CONST", [], "2"), U(2, "ADD", [1, 1]), U(3, "DEFINE_GLOBAL", [], "(0, 4)"), U(4, "STORE", [3, 2], "None", "dtypes.void"), U(5, "SINK", [4], "None", "dtypes.void")];
const step1 = [U(6, "CONST", [], "4"), U(3, "DEFINE_GLOBAL", [], "(0, 4)"), U(7, "STORE", [3, 6], "None", "dtypes.void"), U(8, "SINK", [7], "None", "dtypes.void")];

test("diff between steps: removed are old ids gone, added are new ids", () => {
  assert.deepEqual(diffSteps(step0, step1), { removed: [1, 2, 4, 5], added: [6, 7, 8] });
  assert.deepEqual(diffSteps(step1, step1), { removed: [], added: [] });
});

test("union graph keeps removed nodes beside the new graph, tagged", () => {
  const u = unionGraph(step1, step0);
  const state = Object.fromEntries(u.map((n) => [n.id, n.state]));
  assert.deepEqual(state, { 6: "added", 3: "same", 7: "added", 8: "added", 1: "removed", 2: "removed", 4: "removed", 5: "removed" });
  assert.equal(u.length, 8);
  assert.ok(unionGraph(step0).every((n) => n.state === "same"), "step 0: nothing changed");
  // the server's lists win when given
  const v = unionGraph(step1, step0, [2], [6]);
  assert.deepEqual(v.filter((n) => n.state !== "same").map((n) => [n.id, n.state]), [[6, "added"], [2, "removed"]]);
});

test("rebuilt users correspond to the nodes they replace; only the real change is added / removed", () => {
  // x*1 -> x deep in a chain: every user above it gets a new id (hash-consing), with only its source changed
  const prev = [U(1, "LOAD", []), U(2, "CONST", [], "1"), U(3, "MUL", [1, 2]), U(4, "EXP2", [3]), U(5, "NEG", [4]), U(6, "SINK", [5], "None", "dtypes.void")];
  const cur = [U(1, "LOAD", []), U(14, "EXP2", [1]), U(15, "NEG", [14]), U(16, "SINK", [15], "None", "dtypes.void")];
  const match = { before: 3, after: 1 };
  const corr = correspond(prev, cur, match);
  assert.deepEqual([...corr], [[14, 4], [15, 5], [16, 6]]);
  const u = unionGraph(cur, prev, null, null, corr);
  assert.deepEqual(u.map((n) => [n.id, n.state, n.was]), [[1, "same", undefined], [14, "same", 4], [15, "same", 5], [16, "same", 6], [2, "removed", undefined], [3, "removed", undefined]]);
  // a new node that is not a rebuild stays added; an old node is taken once
  const cur2 = [...cur, U(17, "EXP2", [1])];
  assert.equal(correspond(prev, cur2, match).size, 3);
  assert.equal(unionGraph(cur2, prev, null, null, correspond(prev, cur2, match)).find((n) => n.id === 17).state, "added");
});

test("hubs: CONST and DEFINE_GLOBAL with users; a RANGE with many users over a CONST; never a kept or unused node", () => {
  const g = indexGraph(step0);
  assert.deepEqual([...hubIds(g)].sort(), [1, 3]);
  assert.deepEqual([...hubIds(g, "shown")], []);
  assert.deepEqual([...hubIds(g, "inline", new Set([1]))], [3]);
  const lone = indexGraph([U(1, "CONST", [], "2")]);
  assert.deepEqual([...hubIds(lone)], [], "a CONST that is the whole graph stays");
  const users = Array.from({ length: HUB_USERS }, (_, i) => U(100 + i, "ADD", [11, 10]));
  const r = indexGraph([U(10, "CONST", [], "8"), U(11, "RANGE", [10], "(0, 'global')"), ...users]);
  assert.deepEqual([...hubIds(r)].sort(), [10, 11]);
  const few = indexGraph([U(10, "CONST", [], "8"), U(11, "RANGE", [10], "(0, 'global')"), ...users.slice(1)]);
  assert.deepEqual([...hubIds(few)], [10]);
});

test("buildView: hubs inline in their users' labels, hidden, or shown as nodes", () => {
  const inl = buildView(step0, { hubs: "inline" });
  assert.deepEqual(inl.nodes.map((n) => n.id), [2, 4, 5]);
  assert.deepEqual(inl.edges, [[2, 4], [4, 5]]);
  assert.deepEqual(inl.nodes[0].lines, ["ADD int", "← 2, 2"]);
  assert.deepEqual(inl.nodes[1].lines, ["STORE", "← data0"]);
  const hid = buildView(step0, { hubs: "hidden" });
  assert.deepEqual(hid.nodes[0].lines, ["ADD int"]);
  const all = buildView(step0, { hubs: "shown" });
  assert.equal(all.nodes.length, 5);
  assert.deepEqual(all.edges, [[1, 2], [1, 2], [3, 4], [2, 4], [4, 5]], "edges in source order, a source used twice twice");
  for (const n of all.nodes) assert.ok(n.width >= 44 && n.height > 0);
});

test("labels: op and dtype, arg, cut long args; size grows with the longest line", () => {
  assert.deepEqual(nodeLabel(U(1, "CONST", [], "2.0", "dtypes.float")), ["CONST float", "2.0"]);
  assert.deepEqual(nodeLabel(U(1, "SINK", [], "None", "dtypes.void")), ["SINK"]);
  const long = nodeLabel(U(1, "RESHAPE", [], "x".repeat(100)));
  assert.ok(long[1].length <= 34 && long[1].endsWith("…"));
  assert.ok(labelSize(["a".repeat(30)]).width > labelSize(["a"]).width);
  assert.equal(labelSize(["a", "b", "c"]).height, 3 * 14 + 12);
});

test("expression text and tree of a rewritten subgraph", () => {
  const g = indexGraph(step0);
  assert.equal(exprText(g.byId, 2), "ADD(CONST 2, CONST 2)");
  assert.deepEqual(exprTree(g.byId, 4), ["#4 STORE", "  #3 DEFINE_GLOBAL int (0, 4)", "  #2 ADD int", "    #1 CONST int 2", "    #1 CONST int 2"], "a leaf met again is written again");
  assert.deepEqual(exprTree(g.byId, 5, 1), ["#5 SINK", "  #4 STORE …"]);
  assert.equal(exprTree(g.byId, 5, 9, 2).at(-1), "  …");
  assert.equal(exprText(g.byId, 5, 1), "SINK(STORE(…#4))");
  assert.equal(exprText(g.byId, 99), "#99");
});

test("op families have colours", () => {
  assert.equal(opFamily("ADD"), "alu");
  assert.equal(opFamily("LOAD"), "memory");
  assert.equal(opFamily("RANGE"), "loop");
  assert.equal(opFamily("WHATEVER"), "other");
  assert.notEqual(opColor("ADD"), opColor("LOAD"));
});

test("search by id, op, arg and text, best first", () => {
  const nodes = [...step0, U(9, "ADDR", []), U(-3, "MUL", [], "'add'"), U(12, "LOAD", [], "None", "dtypes.float")];
  assert.equal(searchNodes(nodes, "4")[0], 4, "an id first");
  assert.deepEqual(searchNodes(nodes, "#4").slice(0, 1), [4]);
  assert.deepEqual(searchNodes(nodes, "-3").slice(0, 1), [-3]);
  assert.deepEqual(searchNodes(nodes, "add"), [2, 9, -3], "exact op, op prefix, then arg");
  assert.deepEqual(searchNodes(nodes, "op:add"), [2, 9]);
  assert.deepEqual(searchNodes(nodes, "arg:(0"), [3]);
  assert.deepEqual(searchNodes(nodes, "float"), [12], "dtype");
  assert.deepEqual(searchNodes(nodes, "  "), []);
  assert.deepEqual(searchNodes(nodes, "zzz"), []);
  assert.deepEqual(parseQuery("#12"), { id: 12, text: "12" });
  assert.deepEqual(parseQuery("OP: load"), { op: "LOAD" });
});
