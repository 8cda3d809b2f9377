import { test } from "node:test";
import assert from "node:assert/strict";
import { Rects, mergeLane, counterSteps } from "../../viz/frontend/timeline/lod.js";
import { buildLanes } from "../../viz/frontend/timeline/lanes.js";
import { randomSpans } from "./timeline_fixtures.mjs";

function laneOf(n, seed, overlap = 0) {
  const s = randomSpans(n, seed, { overlap });
  return { ...s, lanes: buildLanes(s.start, s.dur, overlap ? s.depth : new Uint16Array(n)) };
}

const visible = (lane, t0, t1) => { const out = []; for (let k = 0; k < lane.start.length; k++) if (lane.end[k] >= t0 && lane.start[k] <= t1) out.push(k); return out; };

function check(lane, t0, t1, width) {
  const k = width / (t1 - t0), out = mergeLane(lane, t0, t1, k, new Rects(4));
  const vis = visible(lane, t0, t1);
  // every visible span is inside a rectangle (clamped to the window)
  let q = 0;
  for (const kk of vis) {
    const a = Math.max((lane.start[kk] - t0) * k, -2), b = Math.min((lane.end[kk] - t0) * k, width + 2);
    while (q < out.n && out.x1[q] < b - 1e-3 * Math.max(1, Math.abs(b))) q++;
    assert.ok(q < out.n && out.x0[q] <= a + 1e-3 * Math.max(1, Math.abs(a)), `span ${kk} [${a}, ${b}] is drawn`);
  }
  // every span is counted once, and rectangles come in order
  assert.equal(Array.from(out.count.subarray(0, out.n)).reduce((s, c) => s + c, 0), vis.length);
  for (let i = 1; i < out.n; i++) assert.ok(out.x0[i] >= out.x0[i - 1] - 1e-6);
  // narrow rectangles (merged runs) are at least a pixel apart: no more of them than pixels
  const wide = vis.filter(kk => (lane.end[kk] - lane.start[kk]) * k >= 1).length;
  assert.ok(out.n <= wide + width + 3, `${out.n} rectangles for ${width}px and ${wide} wide spans`);
  return out;
}

test("zoomed out, a lane of many spans draws at most about a rectangle per pixel", () => {
  const { lanes } = laneOf(100000, 1);
  const l = lanes[0], end = l.pmax[l.pmax.length - 1];
  const out = check(l, 0, end, 1200);
  assert.ok(out.n <= 1203, `${out.n}`);
  // a busy stretch is not one long bar in one colour: merged runs stay a few pixels wide
  for (let i = 0; i < out.n; i++) if (out.count[i] > 1) assert.ok(out.x1[i] - out.x0[i] <= 5.01, `${out.x1[i] - out.x0[i]}px`);
});

test("zoomed in, every span in the window is its own rectangle with its own index", () => {
  const { lanes } = laneOf(5000, 2);
  const l = lanes[0], t0 = l.start[2000], t1 = l.end[2010];
  const out = check(l, t0, t1, 100000);
  assert.ok(out.n >= 10);
  for (let i = 0; i < out.n; i++) assert.equal(out.count[i], 1);
  assert.deepEqual(Array.from(out.idx.subarray(0, out.n)), visible(l, t0, t1).map(k => l.idx[k]));
});

test("every zoom level and window keeps every span covered and counted once", () => {
  const { lanes } = laneOf(20000, 3);
  const l = lanes[0], end = l.pmax[l.pmax.length - 1];
  for (const frac of [1, 0.3, 0.05, 0.01, 0.001, 0.0001]) {
    for (const at of [0, 0.25, 0.5, 0.9]) {
      const t0 = end * at * (1 - frac), t1 = t0 + end * frac;
      check(l, t0, t1, 900);
    }
  }
});

test("lanes whose spans overlap (a flat lane of concurrent work) still draw everything", () => {
  const s = randomSpans(20000, 4, { overlap: 0.6 });
  const [l] = buildLanes(s.start, s.dur, new Uint16Array(s.start.length));  // all in one lane on purpose
  const end = l.pmax[l.pmax.length - 1];
  for (const frac of [1, 0.1, 0.001]) check(l, end * 0.4, end * 0.4 + end * frac, 800);
});

test("a wide span right after a run of tiny ones keeps its own rectangle", () => {
  const start = [], dur = [];
  for (let i = 0; i < 1000; i++) { start.push(i); dur.push(0.5); }
  start.push(1000.2); dur.push(1e6);
  const [l] = buildLanes(Float64Array.from(start), Float64Array.from(dur), new Uint16Array(start.length));
  const out = mergeLane(l, 0, 2e6, 1000 / 2e6, new Rects());
  const last = out.n - 1;
  assert.equal(out.idx[last], 1000);
  assert.equal(out.count[last], 1);
  assert.equal(Array.from(out.count.subarray(0, out.n)).reduce((a, b) => a + b), 1001);
});

test("an empty window and an empty lane draw nothing", () => {
  const { lanes } = laneOf(100, 5);
  const l = lanes[0], end = l.pmax[l.pmax.length - 1];
  assert.equal(mergeLane(l, end + 10, end + 20, 1, new Rects()).n, 0);
  const [e] = buildLanes(new Float64Array(0), new Float64Array(0), new Uint16Array(0)).concat([{ idx: new Uint32Array(0), start: new Float64Array(0), end: new Float64Array(0), pmax: new Float64Array(0) }]);
  assert.equal(mergeLane(e, 0, 10, 1, new Rects()).n, 0);
});

test("Rects grows as needed", () => {
  const r = new Rects(2);
  for (let i = 0; i < 100; i++) r.push(i, i + 1, i, 1);
  assert.equal(r.n, 100);
  assert.equal(r.idx[99], 99);
  assert.equal(r.clear().n, 0);
});

test("counter steps: the value at the left edge, then each change; several changes in a pixel keep the peak", () => {
  const ts = Float64Array.of(0, 100, 101, 102, 500), v = Float64Array.of(1, 5, 9, 2, 3);
  const out = counterSteps(ts, v, 50, 1000, 1);  // 1 px per ns
  assert.equal(out.x[0], 0);
  assert.equal(out.v[0], 1);
  assert.deepEqual(Array.from(out.v), [1, 5, 9, 2, 3]);
  const coarse = counterSteps(ts, v, 0, 1000, 0.01);  // 100 ns per px: 100, 101, 102 share pixel 1
  assert.ok(Math.max(...coarse.v) === 9, "the peak survives");
  assert.equal(coarse.v[coarse.n - 1], 3);
  assert.ok(coarse.n <= 2 * 11);
});

test("counter steps before the first sample start at the first sample", () => {
  const out = counterSteps(Float64Array.of(100, 200), Float64Array.of(4, 6), 0, 300, 1);
  assert.deepEqual(Array.from(out.x), [100, 200]);
});
