import { test } from "node:test";
import assert from "node:assert/strict";
import { highlight, tokensHTML } from "../../viz/frontend/code/highlight.js";
import { parseUopLine, mapNodesToUops, mapUopsToSource } from "../../viz/frontend/code/linemap.js";

const types = (line) => line.filter((t) => t.type !== "space").map((t) => [t.type, t.text]);

test("C tokens: types, keywords, numbers with suffixes, functions, operators", () => {
  const [l] = highlight("for (int i = 0; i < 8; i++) acc0 = fmaxf(acc0, 1.5e-3f) + 0x1Fu;");
  assert.deepEqual(types(l), [["keyword", "for"], ["punct", "("], ["type", "int"], ["ident", "i"], ["op", "="], ["number", "0"],
    ["punct", ";"], ["ident", "i"], ["op", "<"], ["number", "8"], ["punct", ";"], ["ident", "i"], ["op", "++"], ["punct", ")"],
    ["ident", "acc0"], ["op", "="], ["func", "fmaxf"], ["punct", "("], ["ident", "acc0"], ["punct", ","], ["number", "1.5e-3f"],
    ["punct", ")"], ["op", "+"], ["number", "0x1Fu"], ["punct", ";"]]);
});

test("CUDA words, preprocessor lines, strings, comments over lines", () => {
  const lines = highlight('#include <math.h>\nextern "C" __global__ void k(float4* x) { /* a\nb */ int g = blockIdx.x; // end\n}');
  assert.deepEqual(lines[0], [{ type: "preproc", text: "#include <math.h>" }]);
  const t1 = types(lines[1]);
  assert.deepEqual(t1.slice(0, 5), [["keyword", "extern"], ["string", '"C"'], ["keyword", "__global__"], ["type", "void"], ["func", "k"]]);
  assert.ok(t1.some(([t, s]) => t === "type" && s === "float4"));
  assert.deepEqual(t1[t1.length - 1], ["comment", "/* a"]);
  assert.deepEqual(types(lines[2]).slice(0, 4), [["comment", "b */"], ["type", "int"], ["ident", "g"], ["op", "="]]);
  assert.ok(types(lines[2]).some(([t, s]) => t === "builtin" && s === "blockIdx"));
  assert.deepEqual(types(lines[2]).at(-1), ["comment", "// end"]);
});

test("tokens concatenate back to the source, odd characters included", () => {
  const src = "void f(){ a->b = c ? d : e; @ $ `x` 'q' \"s\\\"t\" }\n\n  x /* open\n  still */ y";
  assert.equal(highlight(src).map((l) => l.map((t) => t.text).join("")).join("\n"), src);
  assert.equal(tokensHTML(highlight("a < b && c")[0]), 'a <span class="tk-op">&lt;</span> b <span class="tk-op">&amp;&amp;</span> c');
});

// a kernel as the engine records it (from a VIZ=-1 run of a 8x8 row sum)
const kernel = {
  src: "void r_8_8(float* restrict data0, const int* restrict data1) {\n  for (int gidx0 = 0; gidx0 < 8; gidx0++) {\n    float acc0 = 0.0f;\n    #pragma omp simd reduction(+:acc0)\n    for (int ridx0 = 0; ridx0 < 8; ridx0++) {\n      int val0 = data1[((gidx0*8)+ridx0)];\n      float alu0 = ((((float)(val0))*2.0f)+1.0f);\n      acc0 = acc0 + alu0;\n    }\n    data0[gidx0] = acc0;\n  }\n}",
  uops: ["DEFINE_GLOBAL float  (0, 8)", "DEFINE_GLOBAL int    (1, 64)", "RANGE        int    (0, 'global')", "CONST        int    8", "MUL          int    ",
    "CONST        float  2.0", "CONST        float  1.0", "DEFINE_ACC   float  0", "RANGE        int    (1, 'reduce')", "ADD          int    ",
    "LOAD         int    ", "CAST         float  ", "MUL          float  ", "ADD          float  ", "ACC_UPDATE   float  Ops.ADD", "ENDRANGE     void   ",
    "REDUCE       float  Ops.ADD", "STORE        void   ", "SINK         void   ", "ENDRANGE     void   "],
};

test("program lines map to the source lines they render to", () => {
  assert.deepEqual(parseUopLine("RANGE        int    (0, 'global')"), { op: "RANGE", dtype: "int", arg: "(0, 'global')" });
  assert.deepEqual(parseUopLine("SINK         void   "), { op: "SINK", dtype: "void", arg: "" });
  const m = mapUopsToSource(kernel.uops, kernel.src), src = kernel.src.split("\n");
  const at = (i) => src[m.get(i)].trim();
  assert.match(at(0), /^void r_8_8/);
  assert.match(at(2), /for \(int gidx0/);
  assert.match(at(7), /float acc0 = 0.0f/);
  assert.match(at(8), /for \(int ridx0/);
  assert.match(at(10), /int val0 =/);
  assert.match(at(12), /float alu0 =/);
  assert.match(at(14), /acc0 = acc0 \+ alu0/);
  assert.equal(at(15), "}");
  assert.match(at(17), /data0\[gidx0\] = acc0/);
  assert.equal(m.has(3), false, "a CONST renders inline: no line of its own");
});

test("graph nodes map to program lines by op, dtype and arg, in topological order", () => {
  const nodes = [
    { id: 10, op: "DEFINE_GLOBAL", dtype: "dtypes.float", arg: "(0, 8)", src: [] },
    { id: 11, op: "RANGE", dtype: "dtypes.int", arg: "(1, 'reduce')", src: [] },
    { id: 12, op: "LOAD", dtype: "dtypes.int", arg: "None", src: [11] },
    { id: 13, op: "ADD", dtype: "dtypes.float", arg: "None", src: [12] },
    { id: 14, op: "ADD", dtype: "dtypes.int", arg: "None", src: [11] },
    { id: 15, op: "EXP2", dtype: "dtypes.float", arg: "None", src: [] },
  ];
  const m = mapNodesToUops(nodes, kernel.uops);
  assert.equal(m.get(10), 0);
  assert.equal(m.get(11), 8);
  assert.equal(m.get(12), 10);
  assert.equal(m.get(13), 13);
  assert.equal(m.get(14), 9);
  assert.equal(m.has(15), false);
});

// a vectorized kernel as the CPU renderer writes it: vector loads and stores are memcpys (a small matmul row)
const vkernel = {
  src: ["typedef float floatx16 __attribute__((vector_size(64)));",
    "void r_1_16_4(float* restrict data0, const float* restrict data1, const float* restrict data2) {",
    "  floatx16 acc0 = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};",
    "  for (int ridx0 = 0; ridx0 < 4; ridx0++) {", "    float val0 = data1[ridx0];", "    floatx16 val1 = {0};",
    "    __builtin_memcpy(&val1, data2+(ridx0*16), sizeof(val1));", "    floatx16 alu0 = (val0*val1);", "    acc0 = acc0 + alu0;",
    "  }", "  __builtin_memcpy(data0+0, &acc0, sizeof(acc0));", "}"].join("\n"),
  uops: ["DEFINE_GLOBAL float  (0, 16)", "DEFINE_GLOBAL float  (1, 4)", "DEFINE_GLOBAL float  (2, 64)", "CONST        int    0",
    "DEFINE_ACC   floatx16 0", "RANGE        int    (2, 'reduce')", "LOAD         float  ", "MUL          int    ", "LOAD         floatx16 ",
    "MUL          floatx16 ", "ACC_UPDATE   floatx16 Ops.ADD", "ENDRANGE     void   ", "REDUCE       floatx16 Ops.ADD", "STORE        void   ",
    "SINK         void   "],
};

test("vector loads and stores map to their lines too", () => {
  const m = mapUopsToSource(vkernel.uops, vkernel.src), src = vkernel.src.split("\n");
  const at = (i) => src[m.get(i)].trim();
  assert.match(at(0), /^void r_1_16_4/);
  assert.match(at(4), /floatx16 acc0 =/);
  assert.match(at(6), /float val0 = data1/);
  assert.match(at(8), /floatx16 val1 =/);
  assert.match(at(9), /floatx16 alu0 =/);
  assert.match(at(13), /__builtin_memcpy\(data0\+0, &acc0/, "the vector store is the memcpy into data0");
});

test("exact line maps from line_uops: a node's lines, a line's nodes", async () => {
  const { exactLineMaps } = await import("../../viz/frontend/code/linemap.js");
  const { nodeLines, lineNodes } = exactLineMaps([[], [1, 2], [], [3, 7, 1], [7]]);
  assert.deepEqual(nodeLines.get(1), [1, 3]);
  assert.deepEqual(nodeLines.get(7), [3, 4]);
  assert.deepEqual(lineNodes.get(3), [3, 7, 1]);
  assert.equal(lineNodes.has(0), false);
  assert.equal(nodeLines.has(9), false);
});
