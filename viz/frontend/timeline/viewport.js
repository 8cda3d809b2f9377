// The visible window of time, {t0, t1} in ns from the run's start, and the moves that change it: zoom about a
// point, pan, fit, clamp to the trace. Pure; every function returns a new window.

export const MIN_SPAN_NS = 10;  // deepest zoom: 10 ns across the whole width

/** Pixels per ns for a window drawn `width` px wide. */
export const scaleOf = (vp, width) => width / Math.max(vp.t1 - vp.t0, 1e-9);
export const timeAt = (vp, x, width) => vp.t0 + (x / Math.max(width, 1)) * (vp.t1 - vp.t0);
export const xAt = (vp, t, width) => ((t - vp.t0) / Math.max(vp.t1 - vp.t0, 1e-9)) * width;

/** Zoom by `factor` (>1 zooms in) keeping time `at` (default: the middle) where it is on screen. */
export function zoomAt(vp, factor, at = (vp.t0 + vp.t1) / 2) {
  const f = Math.max(factor, 1e-9);
  return { t0: at - (at - vp.t0) / f, t1: at + (vp.t1 - at) / f };
}

/** Move the window by dt ns (positive: later). */
export const pan = (vp, dt) => ({ t0: vp.t0 + dt, t1: vp.t1 + dt });

/** A window showing [a, b] with `pad` (a fraction of its length) of room either side. */
export function fit(a, b, pad = 0.02) {
  const len = Math.max(b - a, MIN_SPAN_NS), m = len * pad, mid = (a + b) / 2;
  return { t0: mid - len / 2 - m, t1: mid + len / 2 + m };
}

/**
 * Keep a window inside the trace [min, max] (plus 5% of room either side) and no narrower than MIN_SPAN_NS.
 * A window wider than the room shows all of it.
 */
export function clamp(vp, min, max) {
  const room = Math.max(max - min, MIN_SPAN_NS) * 0.05, lo = min - room, hi = max + room;
  let span = Math.max(vp.t1 - vp.t0, MIN_SPAN_NS);
  if (!(span < hi - lo)) return { t0: lo, t1: hi };
  let t0 = (vp.t0 + vp.t1) / 2 - span / 2;
  if (vp.t1 - vp.t0 >= MIN_SPAN_NS) t0 = vp.t0;
  if (t0 < lo) t0 = lo;
  if (t0 + span > hi) t0 = hi - span;
  return { t0, t1: t0 + span };
}

/**
 * Keyboard motion over `dtMs` ms while keys are held: {zoom: +1 (W) / -1 (S) / 0, pan: +1 (D) / -1 (A) / 0}.
 * Zoom doubles about every 250 ms; panning crosses the window in about 700 ms, so both feel the same at any zoom.
 */
export function keyMotion(vp, keys, dtMs, at) {
  let out = vp;
  if (keys.zoom) out = zoomAt(out, Math.pow(2, (keys.zoom * dtMs) / 250), at);
  if (keys.pan) out = pan(out, keys.pan * (out.t1 - out.t0) * (dtMs / 700));
  return out;
}

/** The wheel's zoom factor for a deltaY in pixels (a mouse notch of 100 px zooms by about 1.3x). */
export const wheelFactor = (deltaY) => Math.pow(2, -Math.max(-500, Math.min(500, deltaY)) / 260);

/** Keep a live window on the newest events: same width, right edge at `end` (plus a little room). */
export function follow(vp, end) {
  const span = vp.t1 - vp.t0, t1 = end + span * 0.02;
  return { t0: t1 - span, t1 };
}
