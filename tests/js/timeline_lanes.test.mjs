import { test } from "node:test";
import assert from "node:assert/strict";
import { assignLanes, buildLanes, pick, lowerBound, upperBound, firstReaching } from "../../viz/frontend/timeline/lanes.js";
import { randomSpans, nestedSpans } from "./timeline_fixtures.mjs";

function maxOverlap(start, dur) {
  const ev = [];
  for (let i = 0; i < start.length; i++) { ev.push([start[i], 1]); ev.push([start[i] + dur[i], -1]); }
  ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]);  // an end before a start at the same time: touching spans share
  let cur = 0, best = 0;
  for (const [, d] of ev) { cur += d; best = Math.max(best, cur); }
  return best;
}

test("binary searches", () => {
  const a = Float64Array.of(1, 2, 2, 2, 5);
  assert.equal(lowerBound(a, 2), 1);
  assert.equal(upperBound(a, 2), 4);
  assert.equal(lowerBound(a, 0), 0);
  assert.equal(lowerBound(a, 9), 5);
  assert.equal(upperBound(a, 5), 5);
});

test("overlapping spans never share a lane, and use as few lanes as the deepest overlap", () => {
  for (const seed of [1, 2, 3, 4]) {
    const { start, dur } = randomSpans(3000, seed, { overlap: 0.5 });
    const depth = assignLanes(start, dur);
    const lastEnd = new Map();
    for (let i = 0; i < start.length; i++) {
      const e = lastEnd.get(depth[i]);
      assert.ok(e === undefined || e <= start[i], `span ${i} overlaps the previous span of lane ${depth[i]}`);
      lastEnd.set(depth[i], start[i] + dur[i]);
    }
    assert.equal(Math.max(...depth) + 1, maxOverlap(start, dur), `seed ${seed}`);
  }
});

test("nested spans stack as a flame: lane = nesting depth", () => {
  const { start, dur, depth } = nestedSpans(7, 6, 3);
  assert.ok(start.length > 50);
  assert.deepEqual(Array.from(assignLanes(start, dur)), Array.from(depth));
});

test("touching spans share a lane; spans with no overlap all sit in lane 0", () => {
  const depth = assignLanes(Float64Array.of(0, 10, 20, 25), Float64Array.of(10, 10, 5, 1));
  assert.deepEqual(Array.from(depth), [0, 0, 0, 0]);
  assert.deepEqual(Array.from(assignLanes(Float64Array.of(0, 1, 2), Float64Array.of(10, 10, 10))), [0, 1, 2]);
  assert.deepEqual(Array.from(assignLanes(new Float64Array(0), new Float64Array(0))), []);
});

test("a freed lane is reused lowest first", () => {
  // lanes 0,1,2 busy; 1 frees first, then a new span must take 1, not 3
  const start = Float64Array.of(0, 1, 2, 6), dur = Float64Array.of(100, 4, 100, 3);
  assert.deepEqual(Array.from(assignLanes(start, dur)), [0, 1, 2, 1]);
});

test("lane indexes partition the spans and keep a running max of ends", () => {
  const { start, dur } = randomSpans(2000, 5, { overlap: 0.4 });
  const depth = assignLanes(start, dur), lanes = buildLanes(start, dur, depth);
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
