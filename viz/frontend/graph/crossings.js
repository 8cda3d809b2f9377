// Edge crossings of a drawn graph: pure, no DOM, no imports. Used by bench/layout_bench.mjs to compare our
// layout with dagre's on the same graphs, and by tests.
//
// A crossing is a point where two drawn lines properly intersect (touching at an end does not count), and lines
// that share a node never cross (they meet there). Our layout draws each source's long edges as one trunk
// (a bus) plus each edge's own part, so a trunk that crosses a line counts once, as it is seen on screen.
// Segments are bucketed in a uniform grid; an intersection is counted only in the cell that holds it, so each
// pair is counted once without a set of pairs. O(S + crossings + pairs tested) for S segments of similar length.

/**
 * Crossings between polylines. lines: [{pts, a, b}]: pts a flat array of x,y pairs, a and b the node (any key)
 * at its upper and lower end (b: null for a bus, which belongs to its source a only).
 */
export function countCrossings(lines) {
  const segs = [];  // [x0, y0, x1, y1, line]
  let total = 0, n = 0;
  lines.forEach((l, i) => {
    for (let j = 0; j + 3 < l.pts.length; j += 2) {
      const s = [l.pts[j], l.pts[j + 1], l.pts[j + 2], l.pts[j + 3], i];
      if (s[0] === s[2] && s[1] === s[3]) continue;
      segs.push(s); total += Math.abs(s[2] - s[0]) + Math.abs(s[3] - s[1]); n++;
    }
  });
  if (n < 2) return 0;
  const cell = Math.max(1, (total / n) * 2);
  const grid = new Map();
  const key = (cx, cy) => cx * 1048576 + cy;
  segs.forEach((s, k) => {
    const cx0 = Math.floor(Math.min(s[0], s[2]) / cell), cx1 = Math.floor(Math.max(s[0], s[2]) / cell);
    const cy0 = Math.floor(Math.min(s[1], s[3]) / cell), cy1 = Math.floor(Math.max(s[1], s[3]) / cell);
    for (let cx = cx0; cx <= cx1; cx++) for (let cy = cy0; cy <= cy1; cy++) {
      const q = key(cx, cy);
      (grid.get(q) ?? grid.set(q, []).get(q)).push(k);
    }
  });
  const share = (p, q) => p.a === q.a || (p.b !== null && (p.b === q.a || p.b === q.b)) || (q.b !== null && q.b === p.a);
  let count = 0;
  for (const [q, list] of grid) {
    for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) {
      const s = segs[list[i]], t = segs[list[j]];
      if (s[4] === t[4] || share(lines[s[4]], lines[t[4]])) continue;
      const p = properIntersection(s, t);
      if (p && key(Math.floor(p[0] / cell), Math.floor(p[1] / cell)) === q) count++;
    }
  }
  return count;
}

// The point where segments s and t cross inside both (not at an end of either), or null; parallel: null.
function properIntersection(s, t) {
  const dx1 = s[2] - s[0], dy1 = s[3] - s[1], dx2 = t[2] - t[0], dy2 = t[3] - t[1];
  const den = dx1 * dy2 - dy1 * dx2;
  if (Math.abs(den) < 1e-12) return null;
  const ex = t[0] - s[0], ey = t[1] - s[1];
  const u = (ex * dy2 - ey * dx2) / den, v = (ex * dy1 - ey * dx1) / den;
  const eps = 1e-6;
  if (u <= eps || u >= 1 - eps || v <= eps || v >= 1 - eps) return null;
  return [s[0] + u * dx1, s[1] + u * dy1];
}

/** The lines a layout result (graph/layout.js) draws: every bus once, every edge's own part. */
export function layoutLines(r) {
  const lines = [];
  for (let s = 0; s + 1 < r.busPointStart.length; s++) {
    if (r.busPointStart[s + 1] > r.busPointStart[s]) lines.push({ pts: r.busPoints.subarray(r.busPointStart[s], r.busPointStart[s + 1]), a: s, b: null });
  }
  for (let e = 0; e < r.edgeFrom.length; e++) {
    if (r.edgeFrom[e] < 0) continue;
    lines.push({ pts: r.points.subarray(r.pointStart[e], r.pointStart[e + 1]), a: r.edgeFrom[e], b: r.edgeTo[e] });
  }
  return lines;
}
