import { test } from "node:test";
import assert from "node:assert/strict";
import { countCrossings, layoutLines } from "../../viz/frontend/graph/crossings.js";
import { layout, edgesFromSrc } from "../../viz/frontend/graph/layout.js";
import { irGraph, hubIds } from "../../bench/layout_bench.mjs";

const line = (a, b, ...pts) => ({ a, b, pts });

test("two lines that cross count once; lines that only touch or share a node do not", () => {
  assert.equal(countCrossings([line(1, 2, 0, 0, 10, 10), line(3, 4, 10, 0, 0, 10)]), 1);
  assert.equal(countCrossings([line(1, 2, 0, 0, 10, 10), line(1, 4, 10, 0, 0, 10)]), 0, "share node 1");
  assert.equal(countCrossings([line(1, 2, 0, 0, 10, 10), line(3, 2, 10, 0, 0, 10)]), 0, "share node 2");
  assert.equal(countCrossings([line(1, 2, 0, 0, 0, 10), line(3, 4, 0, 10, 0, 20)]), 0, "end to end");
  assert.equal(countCrossings([line(1, 2, 0, 0, 0, 10), line(3, 4, 5, 0, 5, 10)]), 0, "parallel");
  assert.equal(countCrossings([line(1, 2, 0, 5, 10, 5), line(3, 4, 5, 0, 5, 10)]), 1, "a T-free plus");
});

test("a polyline that weaves across another counts each crossing; a bus belongs to its source only", () => {
  const zig = line(1, 2, 0, 0, 10, 10, 0, 20, 10, 30), straight = line(3, 4, 5, -5, 5, 35);
  assert.equal(countCrossings([zig, straight]), 3);
  assert.equal(countCrossings([line(1, null, 5, -5, 5, 35), zig]), 0, "bus of node 1 meets its own edges");
  assert.equal(countCrossings([line(7, null, 5, -5, 5, 35), zig]), 3);
});

test("the count does not depend on how the grid cuts the plane: brute force agrees", () => {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const lines = Array.from({ length: 60 }, (_, i) => line(i, i + 1000, rand() * 500, rand() * 500, rand() * 500, rand() * 500, rand() * 500, rand() * 500));
  let brute = 0;
  const segs = lines.flatMap((l, i) => [[...l.pts.slice(0, 4), i], [...l.pts.slice(2, 6), i]]);
  const cross = (s, t) => {
    const d = (ax, ay, bx, by, cx, cy) => (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
    return d(s[0], s[1], s[2], s[3], t[0], t[1]) * d(s[0], s[1], s[2], s[3], t[2], t[3]) < 0
      && d(t[0], t[1], t[2], t[3], s[0], s[1]) * d(t[0], t[1], t[2], t[3], s[2], s[3]) < 0;
  };
  for (let i = 0; i < segs.length; i++) for (let j = i + 1; j < segs.length; j++) if (segs[i][4] !== segs[j][4] && cross(segs[i], segs[j])) brute++;
  assert.ok(brute > 100);
  assert.equal(countCrossings(lines), brute);
});

test("a layout's drawn lines: a crossing-free graph has none; an IR graph with hubs inline (as the UI draws it) few", () => {
  const tree = [{ id: 0, src: [] }, { id: 1, src: [0] }, { id: 2, src: [0] }, { id: 3, src: [1, 2] }, { id: 4, src: [0, 3] }];
  assert.equal(countCrossings(layoutLines(layout(tree, edgesFromSrc(tree)))), 0);
  const nodes = irGraph(400, 3), edges = edgesFromSrc(nodes), r = layout(nodes, edges, { inline: hubIds(nodes) });
  const c = countCrossings(layoutLines(r));
  assert.ok(c < edges.length / 4, `${c} crossings for ${edges.length} edges`);
});
