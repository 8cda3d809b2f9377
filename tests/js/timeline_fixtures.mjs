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

/** n spans sorted by start: mostly back to back, some overlapping (concurrent kernels), durations over 4 decades. */
export function randomSpans(n, seed = 1, { overlap = 0.2, names = 7 } = {}) {
  const r = rng(seed), start = new Float64Array(n), dur = new Float64Array(n), name = new Uint32Array(n);
  let t = 0;
  for (let i = 0; i < n; i++) {
    const d = Math.floor(10 ** (1 + 4 * r()));
    start[i] = t; dur[i] = d; name[i] = Math.floor(r() * names);
    t += r() < overlap ? Math.floor(d * r()) : d + Math.floor(r() * 50);
  }
  return { start, dur, name, names: Array.from({ length: names }, (_, i) => `k${i}`) };
}

/** Properly nested spans (a call tree): returns {start, dur, depth} sorted by start, depth = nesting level. */
export function nestedSpans(seed = 2, maxDepth = 5, breadth = 3) {
  const r = rng(seed), out = [];
  const grow = (s, e, d) => {
    out.push({ start: s, dur: e - s, depth: d });
    if (d + 1 >= maxDepth) return;
    let t = s;
    const k = 1 + Math.floor(r() * breadth);
    for (let i = 0; i < k; i++) {
      const len = (e - s) / (k + 1) * (0.3 + 0.6 * r());
      const a = t + r() * ((e - s) / (k + 1) - len) + 1, b = a + len;
      if (b >= e) break;
      grow(a, b, d + 1);
      t = b;
    }
  };
  for (let i = 0, t = 0; i < 4; i++, t += 1e6) grow(t, t + 8e5, 0);
  out.sort((a, b) => a.start - b.start);
  return { start: Float64Array.from(out, s => s.start), dur: Float64Array.from(out, s => s.dur), depth: Uint16Array.from(out, s => s.depth) };
}
