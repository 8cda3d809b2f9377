// Merged lanes kept from frame to frame. Zoomed out, merging a lane (lod.js mergeLane) was a third of a frame's
// JS, and panning or a redraw for the cursor redid the same merge. A lane is merged over the window and half a
// window either side, from a whole pixel of time 0's grid at this zoom (mergeLane counts its pixels from time 0): the
// result holds while the view pans inside that range at the same zoom, and is drawn shifted by whole pixels, so
// what a frame shows is what a fresh merge for its window would show. A zoom merges again, the window only. Pure.

import { Rects, mergeLane } from "./lod.js";

/**
 * A lane merged for the window [t0, t1] at k px/ns, `margin` windows either side: {lane, k, ta, tb, rects} with
 * rects' x in pixels from ta (ta * k a whole number). On screen for a window from t0, x + shift(e, t0).
 */
export function mergeFor(lane, t0, t1, k, margin = 0.5, out = new Rects(1024)) {
  const w = (t1 - t0) * margin, ta = Math.floor((t0 - w) * k - 1) / k, tb = t1 + w;
  return { lane, k, ta, tb, rects: mergeLane(lane, ta, tb, k, out) };
}

/** The same zoom: a pan moves t0 and t1 alike, but t1 - t0 may then differ in its last bits (so may k). */
export const sameK = (a, b) => Math.abs(a - b) <= 1e-9 * b;

/** Whether `e` (mergeFor) answers the window [t0, t1] at k px/ns for this lane. */
export function covers(e, lane, t0, t1, k) { return e.lane === lane && sameK(e.k, k) && t0 >= e.ta && t1 <= e.tb; }

/**
 * Whole pixels to add to an entry's x for the window from t0: the time-0 grid's pixels land on whole screen pixels,
 * (the lanes move by whole pixels while panning, at most half a pixel from the exact place, all lanes alike).
 */
export function shift(e, t0) { return Math.round((e.ta - t0) * e.k); }

/**
 * One entry per lane of each track: merged again only when the lane's data changed (a new lane object: the track's
 * chunk was replaced), the zoom changed or the window left the merged range. Entries hang off an owner object, weakly:
 * render.js gives the track's array of lanes, so lanes replaced (a live run's new chunk) or gone take theirs along.
 */
export class LaneCache {
  constructor() { this.byOwner = new WeakMap(); this.hits = 0; this.misses = 0; }

  /** The entry for lane number `l` of `owner` (its track's lanes), holding `lane`, over [t0, t1] at k px/ns. */
  get(owner, l, lane, t0, t1, k) {
    let list = this.byOwner.get(owner);
    if (!list) this.byOwner.set(owner, list = []);
    const e = list[l];
    if (e && covers(e, lane, t0, t1, k)) { this.hits++; return e; }
    this.misses++;
    // zooming: every frame has its own k, a margin would only cost; panning (or a first draw) gets one
    const margin = e && !sameK(e.k, k) ? 0 : 0.5;
    return list[l] = mergeFor(lane, t0, t1, k, margin, e ? e.rects.clear() : undefined);  // reuses the old buffers
  }
}
