import { test } from "node:test";
import assert from "node:assert/strict";
import { groupByName, kernelSummary, sortRows, filterRows, busyTime } from "../../viz/frontend/timeline/aggregate.js";
import { TimelineModel } from "../../viz/frontend/timeline/model.js";
import { decodeSpans, encodeSpans } from "../../viz/frontend/timeline/chunk.js";
import { randomSpans } from "./timeline_fixtures.mjs";

function model() {
  const m = new TimelineModel({ start_ns: 1000, end_ns: 1000 + 10000, tracks: [
    { id: 1, name: "CPU", kind: "device", device: "CPU", n_spans: 4, max_depth: 1 },
    { id: 2, name: "HOST", kind: "host", device: "", n_spans: 2, max_depth: 1 }], counters: [], markers: [] });
  m.setChunk(1, decodeSpans(encodeSpans([
    { name: "E_4", start: 0, dur: 100, kernel: 1, cat: "kernel" }, { name: "r_8", start: 50, dur: 300, kernel: 2, cat: "kernel" },
    { name: "E_4", start: 500, dur: 200, kernel: 1, cat: "kernel" }, { name: "copy 16", start: 800, dur: 10, cat: "copy" }])));
  m.setChunk(2, decodeSpans(encodeSpans([
    { name: "schedule", start: 0, dur: 1000, cat: "schedule" }, { name: "codegen E_4", start: 10, dur: 40, cat: "codegen" }])));
  m.setKernels([{ id: 1, name: "E_4", device: "CPU", ctx: 3, flops: 1000, bytes: 4000 }, { id: 2, name: "r_8", device: "CPU", ctx: 4, flops: 600, bytes: 300 }]);
  return m;
}

test("an area groups what it overlaps by name: count, total, mean, min, max", () => {
  const m = model();
  const rows = groupByName(m.loaded(), m.names, 60, 600);
  const by = Object.fromEntries(rows.map(r => [r.name, r]));
  assert.deepEqual(Object.keys(by).sort(), ["E_4", "r_8", "schedule"]);
  assert.equal(by.E_4.count, 2);
  assert.equal(by.E_4.total, 300);
  assert.equal(by.E_4.mean, 150);
  assert.equal(by.E_4.min, 100);
  assert.equal(by.E_4.max, 200);
  assert.deepEqual(by.E_4.first, { track: 1, index: 0 });
  assert.equal(rows[0].name, "schedule");  // largest total first
  // a window touching nothing
  assert.deepEqual(groupByName(m.loaded(), m.names, 5000, 6000), []);
  // only the chosen tracks
  assert.deepEqual(groupByName([m.byId.get(2)], m.names, 0, 5).map(r => r.name), ["schedule"]);
});

test("area sums match a brute-force count on random lanes", () => {
  const s = randomSpans(5000, 11, { overlap: 0.3 });
  const m = new TimelineModel({ start_ns: 0, end_ns: 1e9, tracks: [{ id: 7, name: "GPU", kind: "device", n_spans: 5000 }] });
  m.setChunk(7, decodeSpans(encodeSpans({ names: s.names, start: s.start, dur: s.dur, name: s.name, depth: s.depth })));
  const t0 = s.start[1000], t1 = s.start[3000];
  const want = new Map();
  for (let i = 0; i < s.start.length; i++) {
    if (s.start[i] > t1 || s.start[i] + s.dur[i] < t0) continue;
    const w = want.get(s.names[s.name[i]]) ?? { count: 0, total: 0 };
    w.count++; w.total += s.dur[i];
    want.set(s.names[s.name[i]], w);
  }
  const got = groupByName(m.loaded(), m.names, t0, t1);
  assert.equal(got.length, want.size);
  for (const r of got) { assert.equal(r.count, want.get(r.name).count); assert.equal(r.total, want.get(r.name).total); }
});

test("the kernel summary sums kernel spans per name and device, with GFLOPS and GB/s from the kernel records", () => {
  const m = model();
  const s = kernelSummary(m.loaded(), m.names, m.kernels);
  assert.equal(s.allSpans, false);
  assert.equal(s.total, 600);
  assert.deepEqual(s.rows.map(r => r.name), ["E_4", "r_8"], "equal totals: by name");
  const e4 = s.rows[0];
  assert.equal(e4.count, 2);
  assert.equal(e4.device, "CPU");
  assert.equal(e4.kernel, 1);
  assert.equal(e4.flops, 2000);
  assert.equal(e4.gflops, 2000 / 300);  // flops per ns = GFLOP/s
  assert.equal(e4.gbs, 8000 / 300);
  assert.deepEqual(e4.first, { track: 1, index: 0 });
  assert.deepEqual(e4.longest, { track: 1, index: 2 });
});

test("a run without kernel spans is summarised over all its spans, and says so", () => {
  const m = new TimelineModel({ start_ns: 0, end_ns: 100, tracks: [{ id: 1, name: "python/thread 1", kind: "thread", n_spans: 2 }] });
  m.setChunk(1, decodeSpans(encodeSpans([{ name: "aten::add", start: 0, dur: 5, cat: "other" }, { name: "aten::add", start: 10, dur: 7, cat: "other" }])));
  const s = kernelSummary(m.loaded(), m.names);
  assert.equal(s.allSpans, true);
  assert.equal(s.rows[0].count, 2);
  assert.equal(s.rows[0].total, 12);
  assert.ok(Number.isNaN(s.rows[0].gflops));
  assert.equal(s.rows[0].kernel, -1);
});

test("sorting: numbers, strings naturally, NaN last, either direction", () => {
  const rows = [{ name: "k10", v: 1 }, { name: "k9", v: NaN }, { name: "k2", v: 5 }];
  assert.deepEqual(sortRows(rows, "v", -1).map(r => r.name), ["k2", "k10", "k9"]);
  assert.deepEqual(sortRows(rows, "v", 1).map(r => r.name), ["k10", "k2", "k9"]);
  assert.deepEqual(sortRows(rows, "name", 1).map(r => r.name), ["k2", "k9", "k10"]);
  assert.deepEqual(rows.map(r => r.name), ["k10", "k9", "k2"], "the input is not changed");
});

test("filtering by substring (any case) or /regex/, on name or device", () => {
  const rows = [{ name: "E_4_4", device: "CPU" }, { name: "r_16_4", device: "CUDA:0" }, { name: "r_32n1", device: "CPU" }];
  assert.deepEqual(filterRows(rows, "r_").map(r => r.name), ["r_16_4", "r_32n1"]);
  assert.deepEqual(filterRows(rows, "e_4").map(r => r.name), ["E_4_4"]);
  assert.deepEqual(filterRows(rows, "/^r_\\d+$/").map(r => r.name), []);
  assert.deepEqual(filterRows(rows, "/n\\d$/").map(r => r.name), ["r_32n1"]);
  assert.deepEqual(filterRows(rows, "cuda").map(r => r.name), ["r_16_4"]);
  assert.equal(filterRows(rows, "").length, 3);
  assert.equal(filterRows(rows, "/[/").length, 0, "a broken regex is plain text");
});

test("busy time counts overlapping spans once", () => {
  assert.equal(busyTime(Float64Array.of(0, 5, 20), Float64Array.of(10, 10, 5)), 20);
  assert.equal(busyTime(new Float64Array(0), new Float64Array(0)), 0);
});

test("self time: nested spans count once; the summary's total is the sum of self times", async () => {
  const { selfTimes } = await import("../../viz/frontend/timeline/aggregate.js");
  // outer [0,100) holds inner [10,40) which holds deep [20,30); inner2 [50,60); then a separate span [100,110)
  assert.deepEqual([...selfTimes([0, 10, 20, 50, 100], [100, 30, 10, 10, 10])], [60, 20, 10, 10, 10]);
  const m = new TimelineModel({ start_ns: 0, end_ns: 200, tracks: [{ id: 1, name: "python/thread 1", kind: "thread", n_spans: 3 }] });
  m.setChunk(1, decodeSpans(encodeSpans([{ name: "aten::linear", start: 0, dur: 100, cat: "other" },
    { name: "aten::matmul", start: 10, dur: 60, cat: "other" }, { name: "aten::add", start: 80, dur: 10, cat: "other" }])));
  const s = kernelSummary(m.loaded(), m.names);
  const by = Object.fromEntries(s.rows.map(r => [r.name, r]));
  assert.equal(by["aten::linear"].total, 100);
  assert.equal(by["aten::linear"].self, 30);
  assert.equal(by["aten::matmul"].self, 60);
  assert.equal(s.total, 100, "the trace's 100 ns, not the 170 ns of all spans summed");
});
