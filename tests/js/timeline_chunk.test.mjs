import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeSpans, encodeSpans, ChunkError, CAT, CATS } from "../../viz/frontend/timeline/chunk.js";

const spans = [
  { name: "E_4", start: 0, dur: 1500, depth: 0, kernel: 1, cat: "kernel" },
  { name: "r_16_4", start: 100.5, dur: 20, depth: 1, kernel: 2, cat: "kernel" },
  { name: "copy 64, CPU <- PYTHON", start: 2000, dur: 7, depth: 0, cat: "copy" },
  { name: "E_4", start: 3000, dur: 1400, depth: 0, kernel: 1, cat: 0 },
];

test("a chunk round-trips through the wire format", () => {
  const c = decodeSpans(encodeSpans(spans));
  assert.equal(c.n, 4);
  assert.deepEqual(c.names, ["E_4", "r_16_4", "copy 64, CPU <- PYTHON"]);
  assert.deepEqual(Array.from(c.start), [0, 100.5, 2000, 3000]);
  assert.deepEqual(Array.from(c.dur), [1500, 20, 7, 1400]);
  assert.deepEqual(Array.from(c.name), [0, 1, 2, 0]);
  assert.deepEqual(Array.from(c.depth), [0, 1, 0, 0]);
  assert.deepEqual(Array.from(c.kernel), [1, 2, -1, 1]);
  assert.deepEqual(Array.from(c.cat), [CAT.kernel, CAT.kernel, CAT.copy, CAT.kernel]);
  assert.ok(c.start instanceof Float64Array && c.name instanceof Uint32Array && c.depth instanceof Uint16Array);
  assert.equal(CATS[c.cat[2]], "copy");
});

test("the header is padded to 8 bytes so float columns are views, not copies", () => {
  const buf = encodeSpans(spans), c = decodeSpans(buf);
  assert.equal(c.start.buffer, buf);
  assert.equal(c.dur.buffer, buf);
});

test("a chunk inside a bigger buffer (a typed-array view) decodes; misaligned columns are copied", () => {
  const buf = encodeSpans(spans), big = new Uint8Array(buf.byteLength + 3);
  big.set(new Uint8Array(buf), 3);
  const c = decodeSpans(new Uint8Array(big.buffer, 3, buf.byteLength));
  assert.deepEqual(Array.from(c.start), [0, 100.5, 2000, 3000]);
  assert.deepEqual(Array.from(c.kernel), [1, 2, -1, 1]);
});

test("an empty chunk decodes to empty columns", () => {
  const c = decodeSpans(encodeSpans([]));
  assert.equal(c.n, 0);
  assert.equal(c.start.length, 0);
});

test("missing optional columns: kernel -1, cat other; a chunk without its lanes (depth) is refused", () => {
  const cols = { names: ["a"], start: Float64Array.of(1, 2), dur: Float64Array.of(1, 1), name: Uint32Array.of(0, 0) };
  assert.throws(() => decodeSpans(encodeSpans(cols)), ChunkError);  // the lanes are the server's: none are made up here
  const c = decodeSpans(encodeSpans({ ...cols, depth: Uint16Array.of(0, 0) }));
  assert.deepEqual(Array.from(c.kernel), [-1, -1]);
  assert.deepEqual(Array.from(c.cat), [CAT.other, CAT.other]);
});

test("other wire types for a column are widened to what the view uses", () => {
  // a server that sends depth as uint8 and name as uint16
  const head = new TextEncoder().encode(JSON.stringify({ n: 2, names: ["x", "y"], columns: [
    { name: "start", type: "float64", offset: 0, length: 16 }, { name: "dur", type: "float64", offset: 16, length: 16 },
    { name: "name", type: "uint16", offset: 32, length: 4 }, { name: "depth", type: "uint8", offset: 40, length: 2 }] }));
  const base = (4 + head.length + 7) & ~7, buf = new ArrayBuffer(base + 48);
  new DataView(buf).setUint32(0, head.length, true);
  new Uint8Array(buf, 4).set(head);
  new Float64Array(buf, base, 4).set([5, 6, 1, 2]);
  new Uint16Array(buf, base + 32, 2).set([1, 0]);
  new Uint8Array(buf, base + 40, 2).set([0, 3]);
  const c = decodeSpans(buf);
  assert.ok(c.name instanceof Uint32Array && c.depth instanceof Uint16Array);
  assert.deepEqual(Array.from(c.name), [1, 0]);
  assert.deepEqual(Array.from(c.depth), [0, 3]);
});

test("damaged chunks raise ChunkError with a reason", () => {
  assert.throws(() => decodeSpans(new ArrayBuffer(2)), ChunkError);
  const buf = encodeSpans(spans);
  assert.throws(() => decodeSpans(buf.slice(0, buf.byteLength - 8)), /does not fit/);
  const bad = new Uint8Array(buf.slice(0));
  bad[4] = 0x7b + 1;  // break the JSON
  assert.throws(() => decodeSpans(bad.buffer), /not JSON/);
  const huge = new ArrayBuffer(8);
  new DataView(huge).setUint32(0, 1000, true);
  assert.throws(() => decodeSpans(huge), /overruns/);
});
