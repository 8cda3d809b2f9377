import { test } from "node:test";
import assert from "node:assert/strict";
import { buildLanes, pick, lowerBound, upperBound, firstReaching } from "../../viz/frontend/timeline/lanes.js";
import { randomSpans } from "./timeline_fixtures.mjs";

test("binary searches", () => {
  const a = Float64Array.of(1, 2, 2, 2, 5);
  assert.equal(lowerBound(a, 2), 1);
  assert.equal(upperBound(a, 2), 4);
  assert.equal(lowerBound(a, 0), 0);
  assert.equal(lowerBound(a, 9), 5);
  assert.equal(upperBound(a, 5), 5);
});

test("lane indexes partition the spans and keep a running max of ends", () => {
  const { start, dur, depth } = randomSpans(2000, 5, { overlap: 0.4 });
  const lanes = buildLanes(start, dur, depth);
  const seen = new Uint8Array(start.length);
  lanes.forEach((l, d) => {
    for (let k = 0; k < l.idx.length; k++) {
      const i = l.idx[k];
      assert.equal(depth[i], d);
      assert.equal(seen[i], 0);
      seen[i] = 1;
      assert.equal(l.end[k], start[i] + dur[i]);
      if (k) { assert.ok(l.start[k] >= l.start[k - 1]); assert.ok(l.pmax[k] >= l.pmax[k - 1]); }
      assert.equal(l.pmax[k], Math.max(...l.end.subarray(0, k + 1)));
    }
  });
  assert.ok(seen.every(v => v === 1));
});

test("an unsorted chunk is sorted per lane", () => {
  const lanes = buildLanes(Float64Array.of(50, 10, 30), Float64Array.of(5, 5, 5), Uint16Array.of(0, 0, 0));
  assert.deepEqual(Array.from(lanes[0].idx), [1, 2, 0]);
  assert.deepEqual(Array.from(lanes[0].start), [10, 30, 50]);
});

test("firstReaching skips exactly the spans that end before t, even with a long span early in a lane", () => {
  // lane with overlaps: a long span at 0..1000 then short ones
  const start = Float64Array.of(0, 10, 20, 30, 2000), dur = Float64Array.of(1000, 5, 5, 5, 5);
  const [lane] = buildLanes(start, dur, new Uint16Array(5));
  assert.equal(firstReaching(lane, 500), 0);  // the long one still reaches 500
  assert.equal(firstReaching(lane, 1500), 4);
});

test("pick finds the span under a time, or the nearest within tolerance", () => {
  const { start, dur } = randomSpans(500, 9, { overlap: 0 });
  const lanes = buildLanes(start, dur, new Uint16Array(start.length));
  for (let i = 0; i < start.length; i += 7) {
    assert.equal(pick(lanes[0], start[i] + dur[i] / 2, 0), i);
  }
  const gapAfter = 3;
  const gapT = start[gapAfter] + dur[gapAfter] + 0.5;
  if (gapT < start[gapAfter + 1]) {
    assert.equal(pick(lanes[0], gapT, 0), -1);
    assert.equal(pick(lanes[0], gapT, 1), gapAfter);
  }
  assert.equal(pick(lanes[0], -100, 10), -1);
});

test("pick prefers the shortest of overlapping spans in one lane", () => {
  const [lane] = buildLanes(Float64Array.of(0, 10), Float64Array.of(100, 5), new Uint16Array(2));
  assert.equal(pick(lane, 12, 0), 1);
  assert.equal(pick(lane, 50, 0), 0);
});
