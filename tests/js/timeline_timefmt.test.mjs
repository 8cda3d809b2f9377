import { test } from "node:test";
import assert from "node:assert/strict";
import { formatDuration, niceStep, formatTick, rulerTicks, formatRate, formatBytes, unitFor } from "../../viz/frontend/timeline/timefmt.js";

test("durations read with three significant digits in the unit that fits", () => {
  const cases = [[0, "0 ns"], [1, "1 ns"], [999, "999 ns"], [1000, "1.00 µs"], [1234, "1.23 µs"], [12345, "12.3 µs"],
    [123456, "123 µs"], [1e6, "1.00 ms"], [25.5e6, "25.5 ms"], [1.5e9, "1.50 s"], [61e9, "1m 01s"], [3723e9, "1h 02m 03s"], [-2000, "-2.00 µs"]];
  for (const [ns, want] of cases) assert.equal(formatDuration(ns), want, `${ns}`);
});

test("a value that rounds up to 1000 of a unit moves to the next unit", () => {
  assert.equal(formatDuration(999.6), "1.00 µs");
  assert.equal(formatDuration(999999), "1.00 ms");
  assert.equal(formatDuration(999.4e3), "999 µs");
});

test("non-finite durations print a dash", () => {
  assert.equal(formatDuration(NaN), "-");
  assert.equal(formatDuration(Infinity), "-");
});

test("nice steps are 1, 2 or 5 times a power of ten and keep ticks apart", () => {
  for (const nsPerPx of [0.001, 0.37, 1, 13, 999, 1.2e4, 7.7e7]) {
    const s = niceStep(nsPerPx, 80);
    assert.ok(s >= 1, `${s}`);
    assert.ok(s / nsPerPx >= 80 * (1 - 1e-9) || s === 1, `${nsPerPx}: step ${s} gives ${s / nsPerPx}px`);
    const mant = s / 10 ** Math.floor(Math.log10(s) + 1e-9);
    assert.ok([1, 2, 5].some(m => Math.abs(mant - m) < 1e-9), `${s}`);
  }
});

test("tick labels share the unit of the window and have just enough decimals", () => {
  assert.equal(formatTick(100000, 100000, 1e6), "0.1 ms");
  assert.equal(formatTick(0, 5e8, 3e9), "0.0 s");
  assert.equal(formatTick(1240, 5, 1290), "1.240 µs");
  assert.equal(formatTick(30, 10), "30 ns");
  assert.equal(unitFor(5e5)[1], "µs");
});

test("ruler ticks cover the window at nice steps", () => {
  const r = rulerTicks(0, 1e6, 1000, 80);
  assert.equal(r.step, 1e5);
  assert.equal(r.base, null);
  assert.deepEqual(r.ticks.map(t => t.label), ["0.0 ms", "0.1 ms", "0.2 ms", "0.3 ms", "0.4 ms", "0.5 ms", "0.6 ms", "0.7 ms", "0.8 ms", "0.9 ms", "1.0 ms"]);
  for (const t of r.ticks) assert.ok(t.t >= 0 && t.t <= 1e6);
});

test("deep in a long trace ticks are offsets from a base, so labels stay short", () => {
  const t0 = 5.123456789e9, r = rulerTicks(t0, t0 + 2000, 1000, 80);
  assert.ok(r.base, "a base label");
  assert.equal(r.base.label, "5.1234 s");
  assert.ok(r.base.t <= t0);
  for (const t of r.ticks) {
    assert.match(t.label, /^\+\d+(\.\d+)? (ns|µs)$/);
    assert.ok(t.label.replace(/[^0-9]/g, "").length <= 7, t.label);
  }
  // consecutive labels differ
  const labels = r.ticks.map(t => t.label);
  assert.equal(new Set(labels).size, labels.length);
});

test("rates and sizes", () => {
  assert.equal(formatRate(123.456), "123");
  assert.equal(formatRate(12.345), "12.3");
  assert.equal(formatRate(1.2345), "1.23");
  assert.equal(formatRate(0), "-");
  assert.equal(formatRate(0.0003), "<0.01");
  assert.equal(formatRate(NaN), "-");
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(1536), "1.50 KiB");
  assert.equal(formatBytes(3 * 1024 ** 3), "3.00 GiB");
});
