import { test } from "node:test";
import assert from "node:assert/strict";
import { TimelineModel, trackGroup, LANE_H, TRACK_PAD, GROUP_H, COUNTER_H } from "../../viz/frontend/timeline/model.js";
import { decodeSpans, encodeSpans } from "../../viz/frontend/timeline/chunk.js";

const META = { start_ns: 5000, end_ns: 9000, tracks: [
  { id: 3, name: "CUDA:1/copy", kind: "device", device: "CUDA:1", n_spans: 1, max_depth: 0 },
  { id: 1, name: "HOST", kind: "host", device: "", n_spans: 2, max_depth: 1 },
  { id: 2, name: "CUDA:1", kind: "device", device: "CUDA:1", n_spans: 3, max_depth: 1 },
  { id: 4, name: "CPU", kind: "device", device: "CPU", n_spans: 0, max_depth: 0 },
  { id: 0, name: "TENSOR", kind: "tensor", device: "", n_spans: 1, max_depth: 0 }],
  counters: [{ id: 1, track: "CUDA:1", name: "memory", n: 2 }, { id: 2, track: "elsewhere", name: "power", n: 1 }],
  markers: [{ name: "epoch 1", ts_ns: 7000 }] };

test("tracks group by device and by Chrome process; host and Tensor calls stand alone", () => {
  assert.deepEqual(trackGroup({ name: "CUDA:1/copy", kind: "device", device: "CUDA:1" }), { group: "CUDA:1", label: "copy" });
  assert.deepEqual(trackGroup({ name: "CPU", kind: "device", device: "CPU" }), { group: "CPU", label: "CPU" });
  assert.deepEqual(trackGroup({ name: "python/thread 8025 (python)", kind: "thread" }), { group: "python", label: "thread 8025 (python)" });
  assert.deepEqual(trackGroup({ name: "HOST", kind: "host" }), { group: "", label: "Host" });
  assert.deepEqual(trackGroup({ name: "TENSOR", kind: "tensor" }), { group: "", label: "Tensor calls" });
});

test("rows: Tensor calls, host, then devices by name; a device with queues gets a header; counters under their device", () => {
  const m = new TimelineModel(META);
  const rows = m.layout();
  const desc = rows.map(r => `${r.kind}:${r.label}`);
  assert.deepEqual(desc, ["track:Tensor calls", "track:Host", "track:CPU", "group:CUDA:1", "track:CUDA:1", "track:copy", "counter:memory", "group:Counters", "counter:elsewhere power"]);
  // rows stack without gaps
  for (let i = 1; i < rows.length; i++) assert.equal(rows[i].y, rows[i - 1].y + rows[i - 1].h);
  assert.equal(m.height, rows.at(-1).y + rows.at(-1).h);
  const host = rows[1];
  assert.equal(host.h, 2 * LANE_H + 2 * TRACK_PAD, "two lanes before its chunk arrives (max_depth 1)");
  assert.equal(rows[3].h, GROUP_H);
  assert.equal(rows[6].h, COUNTER_H);
  assert.equal(m.markers[0].t, 2000, "markers are relative to the run's start");
});

test("a folded group hides its tracks and counters", () => {
  const m = new TimelineModel(META);
  m.collapsed.add("CUDA:1");
  const rows = m.layout();
  assert.ok(!rows.some(r => r.label === "copy" || r.label === "memory"));
  assert.ok(rows.some(r => r.kind === "group" && r.collapsed));
});

test("chunks set lanes, names are shared across tracks, and spans are picked by point", () => {
  const m = new TimelineModel(META);
  m.setChunk(2, decodeSpans(encodeSpans([{ name: "E_4", start: 0, dur: 100, depth: 0, cat: "kernel", kernel: 1 },
    { name: "r_8", start: 50, dur: 100, depth: 1, cat: "kernel" }, { name: "E_4", start: 300, dur: 10, depth: 0, cat: "kernel", kernel: 1 }])));
  m.setChunk(0, decodeSpans(encodeSpans([{ name: "E_4", start: 0, dur: 400, depth: 0, cat: "tensor" }])));
  const t = m.byId.get(2);
  assert.deepEqual(Array.from(t.chunk.depth), [0, 1, 0]);
  assert.equal(t.nLanes, 2);
  assert.equal(m.names.filter(n => n === "E_4").length, 1);
  assert.equal(m.byId.get(0).gid[0], t.gid[0], "one id for one name across tracks");
  const rows = m.layout(), row = rows.find(r => r.track === t);
  assert.equal(m.rowAt(row.y + 1), row);
  assert.equal(m.rowAt(-1), null);
  assert.equal(m.rowAt(m.height + 5), null);
  assert.equal(t.laneH > LANE_H, true, "a device track's lanes are taller than host ones");
  assert.equal(m.laneAt(row, row.y + TRACK_PAD + t.laneH + 2), 1);
  assert.equal(m.laneAt(row, row.y + TRACK_PAD + LANE_H + 2), 0);
  assert.equal(m.laneAt(row, row.y + 1), -1);
  assert.equal(m.pickSpan(t, 1, 120, 0), 1);
  assert.equal(m.pickSpan(t, 0, 120, 0), -1);
  const s = m.span(2, 1);
  assert.equal(s.name, "r_8"); assert.equal(s.end, 150); assert.equal(s.depth, 1); assert.equal(s.track, t);
  assert.equal(m.span(2, 99), null);
});

test("nextOfName walks a name's spans in time order across tracks and wraps", () => {
  const m = new TimelineModel(META);
  m.setChunk(2, decodeSpans(encodeSpans([{ name: "E_4", start: 0, dur: 10 }, { name: "E_4", start: 300, dur: 10 }])));
  m.setChunk(3, decodeSpans(encodeSpans([{ name: "E_4", start: 100, dur: 10 }])));
  const g = m.nameIndex.get("E_4");
  const a = m.nextOfName(g), b = m.nextOfName(g, a.t), c = m.nextOfName(g, b.t), d = m.nextOfName(g, c.t);
  assert.deepEqual([a, b, c, d].map(x => [x.track, x.index]), [[2, 0], [3, 0], [2, 1], [2, 0]]);
});

test("a live run: new metadata keeps loaded chunks and reports which tracks grew", () => {
  const m = new TimelineModel(META);
  m.setChunk(2, decodeSpans(encodeSpans([{ name: "E_4", start: 0, dur: 10 }])));
  const grown = structuredClone(META);
  grown.tracks.find(t => t.id === 2).n_spans = 10;
  grown.tracks.push({ id: 9, name: "CPU:1", kind: "device", device: "CPU:1", n_spans: 4 });
  grown.end_ns = 20000;
  assert.deepEqual(m.setMeta(grown).sort(), [2, 9]);
  assert.ok(m.byId.get(2).chunk, "old spans stay until the new chunk arrives");
  assert.equal(m.duration, 15000);
});

test("counters keep their peak for the chart's scale", () => {
  const m = new TimelineModel(META);
  const c = m.setCounter(1, { name: "memory", ts: [0, 10, 20], values: [100, 4096, null] });
  assert.equal(c.max, 4096);
  assert.deepEqual(Array.from(c.values), [100, 4096, 0]);
});

test("flows become arrows in time order, attached to the deepest span under each point", () => {
  const m = new TimelineModel(META);
  m.setChunk(2, decodeSpans(encodeSpans([{ name: "outer", start: 0, dur: 1000, depth: 0 }, { name: "inner", start: 100, dur: 50, depth: 1 }])));
  const arrows = m.setFlows([
    { id: "7", phase: "f", track: 2, name: "fwdbwd", cat: "fwdbwd", ts_ns: 5000 + 900 },
    { id: "7", phase: "s", track: 2, name: "fwdbwd", cat: "fwdbwd", ts_ns: 5000 + 120 },
    { id: "8", phase: "s", track: 2, name: "alone", cat: "x", ts_ns: 5000 },
    { id: "9", phase: "s", track: 99, name: "unknown track", cat: "x", ts_ns: 5000 },
  ]);
  assert.equal(arrows.length, 1);
  assert.deepEqual(arrows[0].pts.map(p => [p.phase, p.t]), [["s", 120], ["f", 900]]);
  assert.equal(arrows[0].t0, 120); assert.equal(arrows[0].t1, 900);
  const t = m.byId.get(2);
  assert.equal(m.laneOfTime(t, 120), 1);
  assert.equal(m.laneOfTime(t, 900), 0);
  assert.equal(m.laneOfTime(t, 5000), 0);
});
