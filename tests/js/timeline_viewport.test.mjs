import { test } from "node:test";
import assert from "node:assert/strict";
import { zoomAt, pan, fit, clamp, keyMotion, wheelFactor, follow, timeAt, xAt, scaleOf, MIN_SPAN_NS } from "../../viz/frontend/timeline/viewport.js";

const close = (a, b, eps = 1e-6) => assert.ok(Math.abs(a - b) <= eps * Math.max(1, Math.abs(b)), `${a} != ${b}`);

test("zooming keeps the time under the cursor where it is on screen", () => {
  const vp = { t0: 1000, t1: 3000 }, width = 800, x = 200;
  const at = timeAt(vp, x, width);
  for (const f of [2, 0.5, 7.3]) {
    const z = zoomAt(vp, f, at);
    close(z.t1 - z.t0, 2000 / f);
    close(xAt(z, at, width), x);
  }
  const mid = zoomAt(vp, 4);
  close((mid.t0 + mid.t1) / 2, 2000);
});

test("pan, fit and the pixel scale", () => {
  assert.deepEqual(pan({ t0: 0, t1: 10 }, 5), { t0: 5, t1: 15 });
  const f = fit(100, 200, 0.1);
  close(f.t0, 90); close(f.t1, 210);
  assert.ok(fit(5, 5).t1 - fit(5, 5).t0 >= MIN_SPAN_NS);
  close(scaleOf({ t0: 0, t1: 1000 }, 500), 0.5);
});

test("clamp keeps the window on the trace and no narrower than the deepest zoom", () => {
  assert.deepEqual(clamp({ t0: -1e9, t1: 1e9 }, 0, 1000), { t0: -50, t1: 1050 });
  const far = clamp({ t0: 5000, t1: 5100 }, 0, 1000);
  close(far.t1, 1050); close(far.t1 - far.t0, 100);
  const early = clamp({ t0: -500, t1: -400 }, 0, 1000);
  close(early.t0, -50); close(early.t1 - early.t0, 100);
  const thin = clamp({ t0: 500, t1: 501 }, 0, 1000);
  assert.ok(thin.t1 - thin.t0 >= MIN_SPAN_NS - 1e-9);
  assert.deepEqual(clamp({ t0: 100, t1: 200 }, 0, 1000), { t0: 100, t1: 200 });
});

test("held keys zoom and pan at a rate independent of the zoom level", () => {
  const vp = { t0: 0, t1: 1000 };
  const z = keyMotion(vp, { zoom: 1, pan: 0 }, 250);
  close(z.t1 - z.t0, 500);
  const o = keyMotion(vp, { zoom: -1, pan: 0 }, 250);
  close(o.t1 - o.t0, 2000);
  const p = keyMotion(vp, { zoom: 0, pan: 1 }, 700);
  close(p.t0, 1000);
  const small = keyMotion({ t0: 0, t1: 10 }, { zoom: 0, pan: -1 }, 70);
  close(small.t0, -1);
  // zoom about a point
  const at = keyMotion(vp, { zoom: 1, pan: 0 }, 250, 1000);
  close(at.t1, 1000); close(at.t0, 500);
});

test("wheel: scrolling down zooms out, up zooms in, a notch about 1.3x, huge deltas are capped", () => {
  assert.ok(wheelFactor(100) < 1 && wheelFactor(-100) > 1);
  close(wheelFactor(100) * wheelFactor(-100), 1);
  assert.ok(wheelFactor(-100) > 1.2 && wheelFactor(-100) < 1.4);
  close(wheelFactor(-1e6), wheelFactor(-500));
});

test("follow pins the right edge to the newest time, keeping the width", () => {
  const f = follow({ t0: 0, t1: 100 }, 5000);
  close(f.t1 - f.t0, 100);
  assert.ok(f.t1 >= 5000 && f.t0 < 5000);
});
