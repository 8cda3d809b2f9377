import { test } from "node:test";
import assert from "node:assert/strict";
import { tableLines } from "../../viz/frontend/rewrites/patterntable.js";

test("the captured table: patterns of one file in line order, numbered, the matched one marked, gaps shown", () => {
  const pats = [
    { id: 9, file: "s.py", line: 20, source: "(UPat(Ops.MUL), fold_mul)," },
    { id: 3, file: "s.py", line: 12, source: "(UPat(Ops.ADD, src=(UPat.var('x'), UPat.const(0))),\n  lambda x: x)," },
    { id: 4, file: "s.py", line: 14, source: "(UPat(Ops.SUB), sub)," },
    { id: 5, file: "s.py", line: 14, source: "(UPat(Ops.SUB), sub)," },  // a second UPat object of the same entry
  ];
  const rows = tableLines(pats, 14);
  assert.deepEqual(rows.map((r) => r.n), [12, 13, 14, 20]);
  assert.equal(rows[1].text, "  lambda x: x),");
  assert.deepEqual(rows.filter((r) => r.hit).map((r) => r.n), [14]);
  assert.deepEqual(rows.filter((r) => r.gap).map((r) => r.n), [20], "lines 15-19 were not captured");
});
