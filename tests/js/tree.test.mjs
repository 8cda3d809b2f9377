import { test } from "node:test";
import assert from "node:assert/strict";
import { RunModel, contextRows, defaultRewrite, locText } from "../../viz/frontend/rewrites/tree.js";

const rw = (id, name, n) => ({ id, name, loc: ["/x/sched.py", 10 + id], input: 1, output: 2, n_matches: n, start_ns: 0, dur_ns: 1500 });
const snapshot = {
  contexts: [
    { id: 1, parent: null, kind: "schedule", name: "schedule", loc: ["", 0], rewrites: [rw(1, "schedule: split", 4)] },
    { id: 2, parent: 1, kind: "kernel", name: "r_8_8", loc: ["", 0], rewrites: [rw(2, "lower: index", 0), rw(3, "lower: simplify", 2)] },
    { id: 3, parent: null, kind: "user", name: "fold", loc: ["", 0], rewrites: [rw(4, "fold", 0)] },
  ],
  kernels: [{ id: 7, name: "r_8_8", device: "CPU", ctx: 2 }],
};

test("merge is by id: a live batch may repeat what the snapshot had", () => {
  const m = new RunModel();
  assert.equal(m.merge(snapshot), true);
  assert.equal(m.merge(snapshot), false, "the same again changes nothing");
  assert.equal(m.merge({ contexts: [{ ...snapshot.contexts[2], rewrites: [rw(5, "fold again", 1)] }] }), true);
  assert.deepEqual(m.contexts.get(3).rewrites.map((r) => r.id), [4, 5]);
  assert.equal(m.contextOfRewrite(5), 3);
  assert.equal(m.kernelOf(2).id, 7);
  assert.equal(m.kernelOf(1), null);
  m.merge({ contexts: [{ id: 4, parent: 2, kind: "user", name: "inner", loc: ["", 0], rewrites: [] }] });
  assert.equal(m.kernelOf(4).id, 7, "a context inside a kernel's codegen belongs to that kernel");
});

test("rows nest by parent; a filter keeps ancestors; hideEmpty drops contexts without matches", () => {
  const m = new RunModel();
  m.merge(snapshot);
  assert.deepEqual(contextRows(m).map((r) => [r.ctx.id, r.depth, r.matches]), [[1, 0, 4], [2, 1, 2], [3, 0, 0]]);
  assert.deepEqual(contextRows(m, { filter: "SIMPLIFY" }).map((r) => r.ctx.id), [1, 2]);
  assert.deepEqual(contextRows(m, { hideEmpty: true }).map((r) => r.ctx.id), [1, 2]);
});

test("default rewrite, loc text and durations", () => {
  assert.equal(defaultRewrite(snapshot.contexts[1]).id, 3);
  assert.equal(defaultRewrite(snapshot.contexts[2]).id, 4);
  assert.equal(defaultRewrite({ rewrites: [] }), null);
  assert.equal(locText(["/a/b/c.py", 12]), "c.py:12");
  assert.equal(locText(["", 0]), "");
});
