// The timeline's pure parts added for Perfetto users (issue 19): counter values and area statistics, self time in
// area sums, span search and stepping, flows of one span, Chrome processes whatever their names hold, pinned
// tracks, the overview's busy bins.
import { test } from "node:test";
import assert from "node:assert/strict";
import { counterAt, counterStats, nameMatcher, searchSpans, stepHit, groupByName, selfTimes } from "../../viz/frontend/timeline/aggregate.js";
import { TimelineModel, trackGroup } from "../../viz/frontend/timeline/model.js";
import { decodeSpans, encodeSpans } from "../../viz/frontend/timeline/chunk.js";
import { busyBins } from "../../viz/frontend/timeline/overview.js";

test("a counter's value at a time is the last one set at or before it; none before the first", () => {
  const ts = Float64Array.from([10, 20, 40]), v = Float64Array.from([1, 5, 2]);
  assert.equal(counterAt(ts, v, 5), null);
  assert.equal(counterAt(ts, v, 10), 1);
  assert.equal(counterAt(ts, v, 39.9), 5);
  assert.equal(counterAt(ts, v, 1e9), 2);
});

test("counter stats over a window: min and max of the values in effect, the mean weighted by time", () => {
  const ts = Float64Array.from([0, 10, 30]), v = Float64Array.from([4, 8, 0]);
  // [5, 35]: 4 for 5 ns, 8 for 20 ns, 0 for 5 ns -> mean (20 + 160) / 30
  assert.deepEqual(counterStats(ts, v, 5, 35, 100), { min: 0, max: 8, mean: 6 });
  // inside one step: that value
  assert.deepEqual(counterStats(ts, v, 12, 20, 100), { min: 8, max: 8, mean: 8 });
  // the last value holds only until the trace's end
  assert.equal(counterStats(ts, v, 0, 1000, 40).mean, (4 * 10 + 8 * 20 + 0 * 10) / 40);
  assert.equal(counterStats(Float64Array.from([50]), Float64Array.from([1]), 0, 10, 100), null, "no value yet in the window");
});

test("search: substring in any case or /regex/; an invalid regex is text; matches step in time order and wrap", () => {
  assert.equal(nameMatcher(""), null);
  assert.ok(nameMatcher("MATMUL")("aten::matmul"));
  assert.ok(nameMatcher("/^r_\\d+$/")("r_16") && !nameMatcher("/^r_\\d+$/")("r_16_4"));
  assert.ok(nameMatcher("/(/")("a/(/b"), "an invalid regex matches as text");
  const m = new TimelineModel({ start_ns: 0, end_ns: 1000, tracks: [
    { id: 0, name: "CPU", kind: "device", n_spans: 3, max_depth: 0 }, { id: 1, name: "HOST", kind: "host", n_spans: 2, max_depth: 0 }] });
  m.setChunk(0, decodeSpans(encodeSpans([{ name: "r_8", start: 0, dur: 10 }, { name: "E_4", start: 20, dur: 10 }, { name: "r_8", start: 300, dur: 10 }])));
  m.setChunk(1, decodeSpans(encodeSpans([{ name: "codegen r_8", start: 100, dur: 50 }, { name: "x", start: 200, dur: 5 }])));
  const { mask, hits } = searchSpans(m.loaded(), m.names, nameMatcher("r_8"));
  assert.deepEqual(hits.map(h => h.start), [0, 100, 300]);
  assert.deepEqual(m.names.filter((_, g) => mask[g]).sort(), ["codegen r_8", "r_8"]);
  assert.equal(stepHit(hits, 50, 1), 1);
  assert.equal(stepHit(hits, 300, 1), 0, "past the last: wraps to the first");
  assert.equal(stepHit(hits, 0, -1), 2, "before the first: wraps to the last");
  assert.equal(stepHit([], 0, 1), -1);
});

test("an area sums self times beside totals: nested time counts once", () => {
  const m = new TimelineModel({ start_ns: 0, end_ns: 1000, tracks: [{ id: 0, name: "python/t", kind: "thread", n_spans: 3, max_depth: 2 }] });
  m.setChunk(0, decodeSpans(encodeSpans([{ name: "step", start: 0, dur: 100, depth: 0 }, { name: "mm", start: 10, dur: 60, depth: 1 }, { name: "add", start: 20, dur: 10, depth: 2 }])));
  const by = Object.fromEntries(groupByName(m.loaded(), m.names, 0, 1000).map(r => [r.name, r]));
  assert.deepEqual([by.step.total, by.step.self, by.mm.total, by.mm.self, by.add.self], [100, 40, 60, 50, 10]);
  assert.equal(by.step.self + by.mm.self + by.add.self, 100, "self times add up to the time the thread was busy");
  assert.deepEqual(Array.from(selfTimes([0, 10, 20], [100, 60, 10])), [40, 50, 10]);
  assert.equal(m.span(0, 0).self, 40);
});

test("a Chrome thread groups under the process the server names, '/' in it or not; without one, the first '/' splits", () => {
  assert.deepEqual(trackGroup({ name: "/host:CPU/python3", kind: "thread", process: "/host:CPU" }), { group: "/host:CPU", label: "python3" });
  assert.deepEqual(trackGroup({ name: "/host:CPU/pool/XlaCompile", kind: "thread", process: "/host:CPU" }), { group: "/host:CPU", label: "pool/XlaCompile" });
  assert.deepEqual(trackGroup({ name: "python/thread 1", kind: "thread" }), { group: "python", label: "thread 1" });
  const m = new TimelineModel({ start_ns: 0, end_ns: 10, tracks: [
    { id: 0, name: "/host:CPU/python3", kind: "thread", device: "/host:CPU", process: "/host:CPU", n_spans: 0, max_depth: 0 },
    { id: 1, name: "/host:CPU/io", kind: "thread", device: "/host:CPU", process: "/host:CPU", n_spans: 0, max_depth: 0 }] });
  const rows = m.layout();
  assert.deepEqual(rows.map(r => `${r.kind}:${r.label}`), ["group:/host:CPU", "track:python3", "track:io"]);
  assert.equal(m.byId.get(0).device, "/host:CPU");
});

test("a pinned track leads the rows and does not scroll; unpinning puts it back", () => {
  const m = new TimelineModel({ start_ns: 0, end_ns: 10, tracks: [
    { id: 0, name: "HOST", kind: "host", n_spans: 0, max_depth: 0 }, { id: 1, name: "CPU", kind: "device", n_spans: 0, max_depth: 0 }] });
  const before = m.layout().map(r => r.label);
  m.togglePin(1); m.layout();
  assert.equal(m.rows[0].track.id, 1);
  assert.ok(m.rows[0].pinned && m.pinnedH === m.rows[0].h);
  assert.equal(m.rowAt(1), m.rows[0]);
  m.togglePin(1);
  assert.deepEqual(m.layout().map(r => r.label), before);
  assert.equal(m.pinnedH, 0);
});

test("flows of a span: the arrows with a point on it, on its own lane", () => {
  const m = new TimelineModel({ start_ns: 0, end_ns: 1000, tracks: [
    { id: 0, name: "p/host", kind: "thread", n_spans: 2, max_depth: 1 }, { id: 1, name: "p/dev", kind: "thread", n_spans: 2, max_depth: 0 }] });
  m.setChunk(0, decodeSpans(encodeSpans([{ name: "step", start: 0, dur: 500, depth: 0 }, { name: "launch", start: 100, dur: 50, depth: 1 }])));
  m.setChunk(1, decodeSpans(encodeSpans([{ name: "k1", start: 200, dur: 20 }, { name: "k2", start: 300, dur: 20 }])));
  m.setFlows([{ id: "a", phase: "s", track: 0, name: "f", ts_ns: 120 }, { id: "a", phase: "f", track: 1, ts_ns: 201 },
    { id: "b", phase: "s", track: 0, name: "f", ts_ns: 250 }, { id: "b", phase: "f", track: 1, ts_ns: 301 }]);
  const ids = (track, index) => m.flowsOf(m.span(track, index)).map(a => a.pts[0].t);
  assert.deepEqual(ids(0, 1), [120], "the launch: its own arrow");
  assert.deepEqual(ids(0, 0), [250], "the step: only the arrow leaving it, not its child's");
  assert.deepEqual(ids(1, 0), [120]);
  assert.deepEqual(ids(1, 1), [250]);
});

test("overview bins: busy fraction per bin over the outermost lane of each track", () => {
  const m = new TimelineModel({ start_ns: 0, end_ns: 100, tracks: [
    { id: 0, name: "A", kind: "host", n_spans: 2, max_depth: 1 }, { id: 1, name: "B", kind: "host", n_spans: 1, max_depth: 0 }] });
  m.setChunk(0, decodeSpans(encodeSpans([{ name: "a", start: 0, dur: 50, depth: 0 }, { name: "inner", start: 10, dur: 10, depth: 1 }])));
  m.setChunk(1, decodeSpans(encodeSpans([{ name: "b", start: 25, dur: 50 }])));
  const bins = busyBins(m.loaded(), 100, 4);  // bins of 25 ns, two tracks
  assert.deepEqual(Array.from(bins), [0.5, 1, 0.5, 0]);
});
