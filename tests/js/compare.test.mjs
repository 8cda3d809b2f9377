import { test } from "node:test";
import assert from "node:assert/strict";
import { lineDiff, diffStats } from "../../viz/frontend/compare/diff.js";
import { compareRows, sortRows, passPairs, patternPairs } from "../../viz/frontend/compare/rows.js";

test("line diff: same, changed, removed and added lines with their numbers", () => {
  const a = "void k(float* a) {\n  int i = 0;\n  a[i] = 1;\n  a[i+1] = 2;\n}";
  const b = "void k(float* a) {\n  int i = 4;\n  a[i] = 1;\n}\n// end";
  const rows = lineDiff(a, b);
  assert.deepEqual(rows.map((r) => r.kind), ["same", "change", "same", "del", "same", "add"]);
  assert.deepEqual(rows[1], { kind: "change", a: "  int i = 0;", b: "  int i = 4;", na: 2, nb: 2 });
  assert.deepEqual(rows[3], { kind: "del", a: "  a[i+1] = 2;", b: null, na: 4, nb: null });
  assert.deepEqual(rows.at(-1), { kind: "add", a: null, b: "// end", na: null, nb: 5 });
  assert.deepEqual(diffStats(rows), { same: 3, del: 1, add: 1, change: 1 });
  assert.deepEqual(lineDiff("x\ny", "x\ny").map((r) => r.kind), ["same", "same"]);
  assert.deepEqual(lineDiff("", "a").map((r) => r.kind), ["change"]);
});

test("line diff keeps every line of both sides, in order", () => {
  const a = Array.from({ length: 300 }, (_, i) => `l${i % 37}`).join("\n"), b = Array.from({ length: 280 }, (_, i) => `l${(i * 7) % 41}`).join("\n");
  const rows = lineDiff(a, b);
  assert.deepEqual(rows.filter((r) => r.a !== null).map((r) => r.a), a.split("\n"));
  assert.deepEqual(rows.filter((r) => r.b !== null).map((r) => r.b), b.split("\n"));
  assert.deepEqual(rows.filter((r) => r.na !== null).map((r) => r.na), a.split("\n").map((_, i) => i + 1));
});

const CMP = {
  kernels: [{ name: "r_8", renamed: null, a: { count: 2, total_ns: 100, mean_ns: 50, self_ns: 100, kernel: 3 }, b: { count: 2, total_ns: 60, mean_ns: 30, self_ns: 60, kernel: 5 }, delta_ns: -40, ratio: 0.6 },
            { name: "E_4", renamed: "E_4n1", a: { count: 1, total_ns: 10, mean_ns: 10, self_ns: 10, kernel: 1 }, b: { count: 1, total_ns: 90, mean_ns: 90, self_ns: 90, kernel: 2 }, delta_ns: 80, ratio: 9 }],
  only_a: [{ name: "gone", a: { count: 1, total_ns: 5, mean_ns: 5, self_ns: 5, kernel: 7 }, b: null, delta_ns: -5, ratio: null }],
  only_b: [{ name: "new", a: null, b: { count: 3, total_ns: 30, mean_ns: 10, self_ns: 30, kernel: 9 }, delta_ns: 30, ratio: null }],
};

test("rows: both, then only in A, only in B; sorted by |delta| by default, nulls last", () => {
  const rows = compareRows(CMP);
  assert.deepEqual(rows.map((r) => [r.id, r.ka, r.kb]), [["both:r_8", 3, 5], ["both:E_4", 1, 2], ["a:gone", 7, null], ["b:new", null, 9]]);
  assert.deepEqual(sortRows(rows).map((r) => r.name), ["E_4", "r_8", "new", "gone"]);
  assert.deepEqual(sortRows(rows, "delta", false).map((r) => r.name), ["gone", "new", "r_8", "E_4"]);
  assert.deepEqual(sortRows(rows, "ratio").map((r) => r.name), ["E_4", "r_8", "gone", "new"]);
  assert.deepEqual(sortRows(rows, "name", false).map((r) => r.name), ["E_4", "gone", "new", "r_8"]);
  assert.deepEqual(sortRows(rows, "ta").map((r) => r.name), ["r_8", "E_4", "gone", "new"]);
});

test("passes and patterns side by side", () => {
  const pa = [{ name: "lower", n_matches: 3, patterns: [{ id: 1, count: 2 }, { id: 2, count: 1 }] }, { name: "opt", n_matches: 0, patterns: [] }];
  const pb = [{ name: "lower", n_matches: 4, patterns: [{ id: 8, count: 4 }] }, { name: "render", n_matches: 1, patterns: [{ id: 9, count: 1 }] }];
  assert.deepEqual(passPairs(pa, pb), [{ name: "lower", a: 3, b: 4 }, { name: "opt", a: 0, b: null }, { name: "render", a: null, b: 1 }]);
  const patsA = { 1: { file: "/x/lower.py", line: 10, source: "UPat(Ops.ADD)" }, 2: { file: "/x/lower.py", line: 20, source: "p2" } };
  const patsB = { 8: { file: "/x/lower.py", line: 10, source: "UPat(Ops.ADD)" }, 9: { file: "/x/render.py", line: 5, source: "p9" } };
  assert.deepEqual(patternPairs(pa, patsA, pb, patsB).map((p) => [p.key, p.a, p.b]),
                   [["/x/lower.py:10", 2, 4], ["/x/lower.py:20", 1, 0], ["/x/render.py:5", 0, 1]]);
});
