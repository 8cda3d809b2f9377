import { test } from "node:test";
import assert from "node:assert/strict";
import { indexGraph, callBodyIds, buildView } from "../../viz/frontend/rewrites/graph.js";
import { RunModel } from "../../viz/frontend/rewrites/tree.js";

const U = (id, op, src = [], arg = "None", dtype = "dtypes.float") => ({ id, op, dtype, arg, src });
// y = f(x): GETTUPLE(CALL(SINK(PARAM * 2), x)) + 1, the body (2 to 6) reachable only through the CALL's first source
const nodes = [U(1, "BUFFER", [], "(0, 4)"), U(2, "DEVICE", [], "'CPU'", "dtypes.void"), U(3, "PARAM", [2], "p0 (4,)"), U(4, "CONST", [], "2.0"),
  U(5, "MUL", [3, 4]), U(6, "SINK", [5], "None", "dtypes.void"), U(7, "CALL", [6, 1], "Model.__call__", "dtypes.void"),
  U(8, "GETTUPLE", [7], "0"), U(9, "CONST", [], "1.0"), U(10, "ADD", [8, 9]), U(11, "SINK", [10], "None", "dtypes.void")];

test("a call's body is left out of its caller's graph, the call drawn as one node that says it opens", () => {
  assert.deepEqual([...callBodyIds(indexGraph(nodes))].sort((a, b) => a - b), [2, 3, 4, 5, 6]);  // the DEVICE only its PARAM reads too
  const v = buildView(nodes);
  const drawn = v.nodes.map((u) => u.id);
  assert.ok(!drawn.includes(5) && !drawn.includes(6) && drawn.includes(7) && drawn.includes(1));
  assert.ok(!v.edges.some(([s]) => s === 6), "no edge from the body into the call");
  assert.ok(v.nodes.find((u) => u.id === 7).lines.some((l) => l.includes("double-click")));
  // the body's own graph (its context's rewrite) shows everything
  assert.equal(callBodyIds(indexGraph(nodes.slice(0, 6))).size, 0);
});

test("a CALL node's body is found as the result of a call context's rewrite", () => {
  const m = new RunModel();
  m.merge({ contexts: [{ id: 1, parent: null, kind: "schedule", name: "s", rewrites: [{ id: 10, name: "x", input: 6, output: 6, n_matches: 0 }] },
    { id: 2, parent: null, kind: "call", name: "Model.__call__", rewrites: [{ id: 11, name: "Model.__call__: inputs to params", input: 5, output: 6, n_matches: 1 }] }] });
  assert.deepEqual(m.callBody(6), { ctx: 2, rw: 11 });
  assert.equal(m.callBody(99), null);
});
