import { test } from "node:test";
import assert from "node:assert/strict";
import { parseHash, formatHash, withParams, select, sameState } from "../../viz/frontend/common/urlstate.js";

test("round trip: format then parse gives the same state", () => {
  const states = [
    { view: "rewrites", params: { run: 1, ctx: 5, rw: 8, step: 3, node: 42, code: "1", hubs: "shown" } },
    { view: "rewrites", params: { run: 2, node: -7, q: "ADD 2 & x=y" } },
    { view: "timeline", params: { run: 1, t0: "12.5", t1: "99", track: "CUDA:1/copy" } },
    { view: "rewrites", params: {} },
  ];
  for (const s of states) assert.deepEqual(parseHash(formatHash(s)), s);
});

test("parse then format is stable and orders keys run > ctx > rw > step > node, others after, sorted", () => {
  const h = "#/rewrites?zeta=1&node=4&step=2&run=1&alpha=x&rw=3&ctx=9";
  const s = parseHash(h);
  assert.equal(formatHash(s), "#/rewrites?run=1&ctx=9&rw=3&step=2&node=4&alpha=x&zeta=1");
  assert.equal(formatHash(parseHash(formatHash(s))), formatHash(s));
});

test("integers are parsed, bad integers dropped, unknown views fall back to rewrites", () => {
  assert.deepEqual(parseHash("#/nope?run=abc&step=4&node=-3"), { view: "rewrites", params: { step: 4, node: -3 } });
  assert.deepEqual(parseHash(""), { view: "rewrites", params: {} });
  assert.deepEqual(parseHash("#/timeline"), { view: "timeline", params: {} });
  assert.deepEqual(parseHash("#timeline?run=2"), { view: "timeline", params: { run: 2 } });
});

test("withParams merges and deletes; empty values are not written", () => {
  const s = { view: "rewrites", params: { run: 1, step: 2 } };
  assert.deepEqual(withParams(s, { step: null, node: 5 }), { view: "rewrites", params: { run: 1, node: 5 } });
  assert.equal(formatHash({ view: "rewrites", params: { run: 1, q: "" } }), "#/rewrites?run=1");
  assert.equal(withParams(s, {}, "timeline").view, "timeline");
});

test("select clears the levels below the one that changed", () => {
  const s = { view: "rewrites", params: { run: 1, ctx: 5, rw: 8, step: 3, node: 42, hubs: "shown" } };
  assert.deepEqual(select(s, { ctx: 6 }).params, { run: 1, ctx: 6, hubs: "shown" });
  assert.deepEqual(select(s, { ctx: 5 }).params, s.params, "same value: nothing cleared");
  assert.deepEqual(select(s, { rw: 9, step: 0 }).params, { run: 1, ctx: 5, rw: 9, step: 0, hubs: "shown" });
  assert.deepEqual(select(s, { run: 2 }).params, { run: 2, hubs: "shown" });
  const t = { view: "timeline", params: { run: 1, t0: "5", t1: "9", span: "2:7", tab: "kernels", code: "1", q: "x" } };
  assert.deepEqual(select(t, { run: 3 }).params, { run: 3, tab: "kernels", code: "1" }, "another run: its viewport and span go");
  assert.deepEqual(select(t, { t0: "6" }).params, { ...t.params, t0: "6" });
  assert.ok(sameState(s, parseHash(formatHash(s))));
});

test("the graph camera and layout direction: round trip, bad values refused, cleared with the rewrite", async () => {
  const { parseCamera, formatCamera } = await import("../../viz/frontend/common/urlstate.js");
  assert.equal(formatCamera({ x: 420.4, y: -1180.6, k: 1.23456 }), "420,-1181,1.235");
  assert.deepEqual(parseCamera("420,-1181,1.235"), { x: 420, y: -1181, k: 1.235 });
  for (const bad of ["", "1,2", "a,b,c", "1,2,0", "1,2,-1", "1,2,3,4", undefined]) assert.equal(parseCamera(bad), null, String(bad));
  const s = { view: "rewrites", params: { run: 1, ctx: 5, rw: 8, step: 3, layout: "lr", cam: "1,2,1.5" } };
  assert.equal(formatHash(s), "#/rewrites?run=1&ctx=5&rw=8&step=3&layout=lr&cam=1,2,1.5");
  assert.deepEqual(parseHash(formatHash(s)), s);
  assert.deepEqual(select(s, { step: 4 }).params.cam, "1,2,1.5", "a step keeps the camera");
  assert.deepEqual(select(s, { rw: 9 }).params, { run: 1, ctx: 5, rw: 9, layout: "lr" }, "another rewrite: the camera goes, the direction stays");
  assert.deepEqual(select(s, { run: 2 }).params, { run: 2, layout: "lr" });
});
