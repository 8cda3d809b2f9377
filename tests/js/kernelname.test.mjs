import { test } from "node:test";
import assert from "node:assert/strict";
import { parseKernelName, kernelHints, kernelNameHTML, legendText, stripAnsi, AXIS_KINDS } from "../../viz/frontend/kernelname.js";

const kinds = (p) => p.axes.map((a) => a.kind);
const text = (p) => p.parts.map((x) => x.text).join("");

test("elementwise: every axis is global", () => {
  const p = parseKernelName("E_4_4");
  assert.equal(p.letter, "E");
  assert.equal(p.letterInfo.label, "elementwise");
  assert.deepEqual(p.axes.map((a) => a.size), [4, 4]);
  assert.deepEqual(kinds(p), ["global", "global"]);
  assert.equal(text(p), "E_4_4");
});

test("reduce: the last axis reduces unless a hint says how many", () => {
  assert.deepEqual(kinds(parseKernelName("r_4_8_16")), ["global", "global", "reduce"]);
  assert.deepEqual(kinds(parseKernelName("r_4_8_16", { reduceAxes: 2 })), ["global", "reduce", "reduce"]);
  assert.deepEqual(kinds(parseKernelName("r_4_8_16", { kinds: ["global", "local", "upcast"] })), ["global", "local", "upcast"]);
});

test("suffix for a second kernel of the same shape", () => {
  const p = parseKernelName("r_32_16n1");
  assert.equal(p.suffix, "n1");
  assert.deepEqual(p.axes.map((a) => a.text), ["32", "16"]);
  assert.equal(text(p), "r_32_16n1");
});

test("tinygrad's ANSI colours give each axis its kind", () => {
  const c = (code, s) => `\x1b[${code}m${s}\x1b[0m`;
  const name = `r_${c(34, "4")}_${c(36, "8")}_${c(32, "2")}_${c(31, "16")}_${c(33, "4")}_${c(35, "4")}`;
  const p = parseKernelName(name);
  assert.equal(p.name, "r_4_8_2_16_4_4");
  assert.deepEqual(kinds(p), ["global", "local", "group", "reduce", "upcast", "unroll"]);
  assert.equal(stripAnsi("\x1b[1;34mab\x1b[0mc").plain, "abc");
  assert.deepEqual(stripAnsi("\x1b[1;34mab\x1b[0mc").colors, ["blue", "blue", null]);
});

test("a name of another shape is one text part", () => {
  for (const n of ["copy 4096, CPU <- PYTHON", "matmul", "", "E_", "r_a_b"]) {
    const p = parseKernelName(n);
    assert.equal(p.letter, null);
    assert.deepEqual(p.parts, [{ text: n, kind: null, role: "text" }]);
  }
});

test("hints from a kernel's uops count its reduce loops", () => {
  const k = { uops: ["DEFINE_GLOBAL float  (0, 8)", "RANGE        int    (0, 'global')", "RANGE        int    (1, 'reduce')", "RANGE        int    (2, 'reduce')"] };
  assert.deepEqual(kernelHints(k), { reduceAxes: 2 });
  assert.deepEqual(kernelHints(null), {});
});

test("the engine's axis kinds win: r_32_3_3 of a 3x3 convolution reduces over both 3s, wherever it is shown", () => {
  const rec = { name: "r_32_3_3", axis_kinds: ["global", "reduce", "reduce"], uops: ["RANGE        int    (1, 'reduce')"] };
  assert.deepEqual(kinds(parseKernelName(rec.name, kernelHints(rec))), ["global", "reduce", "reduce"]);
  // a record without them (an older trace) falls back to counting reduce loops; unknown kinds are ignored
  assert.deepEqual(kernelHints({ axis_kinds: ["global", "bogus"], uops: [] }), { reduceAxes: 0 });
  const h = kernelNameHTML(rec.name, kernelHints(rec));
  assert.equal((h.match(/data-kind="reduce"/g) ?? []).length, 2);
});

test("HTML colours each axis and carries a legend of letters and colours; text is escaped", () => {
  const h = kernelNameHTML("r_16_4");
  assert.match(h, new RegExp(`data-kind="global" style="color:${AXIS_KINDS.global.color}">16<`));
  assert.match(h, new RegExp(`data-kind="reduce" style="color:${AXIS_KINDS.reduce.color}">4<`));
  assert.match(h, /class="kn-legend"/);
  assert.match(h, /<b>r<\/b> reduce kernel/);
  assert.match(legendText(parseKernelName("r_16_4")), /4: reduce axis of size 4/);
  assert.doesNotMatch(kernelNameHTML("<b>x</b>"), /<b>x/);
  assert.doesNotMatch(kernelNameHTML("E_4", {}, { legend: false }), /kn-legend/);
});
