import { test } from "node:test";
import assert from "node:assert/strict";
import { Rects, mergeLane } from "../../viz/frontend/timeline/lod.js";
import { LaneCache, mergeFor, shift } from "../../viz/frontend/timeline/lodcache.js";
import { buildLanes } from "../../viz/frontend/timeline/lanes.js";
import { randomSpans } from "./timeline_fixtures.mjs";

const W = 900, TRACK = { id: 0 }, OTHER = { id: 1 };  // the cache keys its entries by track object

function laneOf(n, seed, overlap = 0) {
  const s = randomSpans(n, seed, { overlap });
  return buildLanes(s.start, s.dur, new Uint16Array(n))[0];
}

/** The lane as render.js paints it: per screen pixel, the chunk index of the span whose rectangle covers it, or -1. */
function paint(rects, off) {
  const px = new Int32Array(W).fill(-1);
  for (let q = 0; q < rects.n; q++) {
    const a = Math.round(rects.x0[q] + off), b = Math.max(Math.round(rects.x1[q] + off), a + 1);
    for (let x = Math.max(a, 0); x < Math.min(b, W); x++) px[x] = rects.idx[q];
  }
  return px;
}
const drawn = (e, t0) => paint(e.rects, shift(e, t0));

/** A view from the middle of the lane: window of `frac` of its length at W pixels. */
function view(lane, frac, at = 0.4) {
  const end = lane.pmax[lane.pmax.length - 1], t0 = end * at, t1 = t0 + end * frac;
  return { t0, t1, k: W / (t1 - t0) };
}

test("a cached merge, panned, draws what a fresh merge for the new window draws", () => {
  const lane = laneOf(50000, 1);
  for (const frac of [1, 0.1, 0.01, 0.0005]) {
    const cache = new LaneCache(), v = view(lane, frac), len = v.t1 - v.t0;
    const first = cache.get(TRACK, 0, lane, v.t0, v.t1, v.k);
    for (const d of [0.013, 0.2, -0.31, 0.49]) {  // fractions of the window, not whole pixels
      const t0 = v.t0 + d * len, t1 = v.t1 + d * len, e = cache.get(TRACK, 0, lane, t0, t1, v.k);
      assert.equal(e, first, `pan ${d} at ${frac} reuses the merge`);
      const fresh = mergeFor(lane, t0, t1, v.k);
      assert.deepEqual(drawn(e, t0), drawn(fresh, t0), `pan ${d} at ${frac}`);
      // and mergeLane for the window alone, placed on the same whole pixels: the same from its second cell on
      const plain = mergeLane(lane, t0, t1, v.k, new Rects()), snap = Math.round(t0 * v.k) - t0 * v.k;
      assert.deepEqual(paint(plain, -snap).subarray(4), drawn(e, t0).subarray(4), `plain merge, pan ${d} at ${frac}`);
    }
    assert.equal(cache.misses, 1);
    assert.equal(cache.hits, 4);
  }
});

test("every span in the window shows at its pixel, and nothing shows where no span is", () => {
  const lane = laneOf(30000, 2, 0.3);
  const cache = new LaneCache();
  let v = view(lane, 0.3, 0.2);
  for (let step = 0; step < 40; step++) {  // zoom in and pan, as a user does
    const len = v.t1 - v.t0, f = step % 3 === 0 ? 1.3 : 1;
    const mid = (v.t0 + v.t1) / 2 + len * 0.07;
    v = { t0: mid - len / 2 / f, t1: mid + len / 2 / f };
    v.k = W / (v.t1 - v.t0);
    const e = cache.get(TRACK, 0, lane, v.t0, v.t1, v.k), px = drawn(e, v.t0);
    const snap = Math.round(v.t0 * v.k);  // screen x of a time t: t * k - snap
    for (let i = 0; i < lane.start.length; i++) {
      const a = lane.start[i] * v.k - snap, b = lane.end[i] * v.k - snap;
      if (b < 0 || a > W - 1) continue;
      let seen = false;
      for (let x = Math.max(0, Math.floor(a) - 1); x <= Math.min(W - 1, Math.ceil(b) + 1) && !seen; x++) seen = px[x] >= 0;
      assert.ok(seen, `step ${step}: span ${i} at [${a.toFixed(2)}, ${b.toFixed(2)}] px is drawn`);
    }
    const covered = new Uint8Array(W + 4);
    for (let i = 0; i < lane.start.length; i++) {
      const a = lane.start[i] * v.k - snap, b = lane.end[i] * v.k - snap;
      if (b < -2 || a > W + 2) continue;
      for (let x = Math.max(0, Math.floor(a) - 1); x <= Math.min(W + 3, Math.ceil(b) + 1); x++) covered[x] = 1;
    }
    for (let x = 0; x < W; x++) if (px[x] >= 0) assert.ok(covered[x], `step ${step}: pixel ${x} drawn over no span`);
  }
  assert.ok(cache.hits > 0 && cache.misses > 0);
});

test("the cache merges again when the lane's data, the zoom or the range changes", () => {
  const lane = laneOf(5000, 3), cache = new LaneCache(), v = view(lane, 0.05);
  const e = cache.get(TRACK, 0, lane, v.t0, v.t1, v.k);
  assert.equal(cache.get(TRACK, 0, lane, v.t0, v.t1, v.k), e);  // the same frame again (a cursor move): kept
  // new data for the track (a chunk replaced: a new lane object), even with the same spans
  const again = laneOf(5000, 3), e2 = cache.get(TRACK, 0, again, v.t0, v.t1, v.k);
  assert.notEqual(e2, e);
  assert.equal(e2.lane, again);
  const other = laneOf(5000, 4), e3 = cache.get(TRACK, 0, other, v.t0, v.t1, v.k);
  assert.deepEqual(drawn(e3, v.t0), drawn(mergeFor(other, v.t0, v.t1, v.k), v.t0));
  // a zoom: merged for the new k, the window alone
  const k2 = v.k * 1.04, t1 = v.t0 + W / k2, e4 = cache.get(TRACK, 0, other, v.t0, t1, k2);
  assert.equal(e4.k, k2);
  assert.deepEqual(drawn(e4, v.t0), drawn(mergeFor(other, v.t0, t1, k2, 0), v.t0));
  // a pan out of the merged range
  const len = t1 - v.t0, e5 = cache.get(TRACK, 0, other, v.t0 + 2 * len, t1 + 2 * len, k2);
  assert.ok(e5.ta <= v.t0 + 2 * len && e5.tb >= t1 + 2 * len);
  // lanes of a track and tracks are apart
  assert.notEqual(cache.get(TRACK, 1, lane, v.t0, v.t1, v.k), cache.get(OTHER, 1, lane, v.t0, v.t1, v.k));
  assert.equal(cache.misses, 7);
});

test("a pan whose window length differs in its last bits still reuses the merge", () => {
  const lane = laneOf(5000, 5), cache = new LaneCache(), v = view(lane, 0.05);
  const e = cache.get(TRACK, 0, lane, v.t0, v.t1, v.k);
  // t1 - t0 of a panned window is not always the same float: nor then is k
  const d = (v.t1 - v.t0) * 0.1, t0 = v.t0 + d, t1 = v.t1 + d + (v.t1 - v.t0) * 1e-13, k = W / (t1 - t0);
  assert.notEqual(k, v.k);
  assert.equal(cache.get(TRACK, 0, lane, t0, t1, k), e);
  assert.notEqual(cache.get(TRACK, 0, lane, t0, t1, k * 1.001), e);  // a zoom is not
});
