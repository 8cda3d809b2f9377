// Shared generators for the timeline's node tests (not a test file itself).

/** A small seeded PRNG (mulberry32): the same seed gives the same spans in every run. */
export function rng(seed = 1) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n spans sorted by start: mostly back to back, some overlapping (concurrent kernels), durations over 4 decades;
 *  `depth`: lanes as the server gives them (no two spans of a lane overlap), here the lowest lane free at the start. */
export function randomSpans(n, seed = 1, { overlap = 0.2, names = 7 } = {}) {
  const r = rng(seed), start = new Float64Array(n), dur = new Float64Array(n), name = new Uint32Array(n), depth = new Uint16Array(n);
  const laneEnd = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    const d = Math.floor(10 ** (1 + 4 * r()));
    start[i] = t; dur[i] = d; name[i] = Math.floor(r() * names);
    let lane = laneEnd.findIndex(e => e <= t);
    if (lane < 0) lane = laneEnd.push(0) - 1;
    laneEnd[lane] = t + d; depth[i] = lane;
    t += r() < overlap ? Math.floor(d * r()) : d + Math.floor(r() * 50);
  }
  return { start, dur, name, depth, names: Array.from({ length: names }, (_, i) => `k${i}`) };
}
