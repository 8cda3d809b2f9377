import { test } from "node:test";
import assert from "node:assert/strict";
import { searchNodes } from "../../viz/frontend/rewrites/search.js";
import { buildView } from "../../viz/frontend/rewrites/graph.js";

// a LOAD of data2 at r0: DEFINE_GLOBAL and the RANGE's CONST are hubs, written inside their users' labels
const U = (id, op, dtype, arg, src = []) => ({ id, op, dtype: `dtypes.${dtype}`, arg, src });
const nodes = [
  U(1, "DEFINE_GLOBAL", "float.ptr()", "(2, 128)"), U(2, "CONST", "int", "16"), U(3, "RANGE", "int", "(0, 'global')", [2]),
  U(4, "INDEX", "float.ptr()", "None", [1, 3]), U(5, "LOAD", "float", "None", [4]), U(6, "SINK", "void", "None", [5]),
];

test("search finds what is drawn inline: a hub's name and the users whose labels show it", () => {
  const view = buildView(nodes, { hubs: "inline" });
  assert.ok(view.hubs.has(1), "DEFINE_GLOBAL is drawn inline");
  const labels = new Map(view.nodes.map((u) => [u.id, u.lines]));
  assert.match(labels.get(4).join(" "), /data2/);
  const hits = searchNodes(nodes, "data2", 500, labels);
  assert.deepEqual(hits, [1, 4], "the hub itself first, then the INDEX whose label reads ← data2");
  assert.deepEqual(searchNodes(nodes, "data2"), [1], "without labels only the hub's own name");
  assert.deepEqual(searchNodes(nodes, "data7", 500, labels), []);
});
