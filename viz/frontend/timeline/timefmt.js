// Time as people read it: durations with three significant digits in the unit that fits, and the ticks of a
// time ruler at 1/2/5 steps. Pure; all times are nanoseconds (floats allowed).

const UNITS = [[1e9, "s"], [1e6, "ms"], [1e3, "µs"], [1, "ns"]];

/** The largest unit not bigger than `ns` (ns for anything under 1 µs). */
export function unitFor(ns) {
  const a = Math.abs(ns);
  for (const u of UNITS) if (a >= u[0]) return u;
  return UNITS[UNITS.length - 1];
}

/** "1.23 ms", "456 ns", "12.5 µs", "2.00 s", "3m 05s": three significant digits, never scientific notation. */
export function formatDuration(ns) {
  if (!Number.isFinite(ns)) return "-";
  const a = Math.abs(ns), sign = ns < 0 ? "-" : "";
  if (a >= 60e9) {
    const s = Math.round(a / 1e9), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = String(s % 60).padStart(2, "0");
    return sign + (h ? `${h}h ${String(m).padStart(2, "0")}m ${sec}s` : `${m}m ${sec}s`);
  }
  if (a < 1) return sign + (a === 0 ? "0 ns" : `${a.toPrecision(2)} ns`);
  const digits = (v, i) => (v >= 100 || UNITS[i][0] === 1 ? 0 : v >= 10 ? 1 : 2);
  let i = UNITS.findIndex(u => a >= u[0]), v = a / UNITS[i][0];
  // 999.7 µs would print as "1000 µs": step up to "1.00 ms"
  if (i > 0 && Number(v.toFixed(digits(v, i))) >= 1000) v = a / UNITS[--i][0];
  return `${sign}${v.toFixed(digits(v, i))} ${UNITS[i][1]}`;
}

/** The nice step (1, 2 or 5 times a power of ten, in ns, at least 1 ns) that puts ticks at least `minPx` apart. */
export function niceStep(nsPerPx, minPx = 80) {
  const raw = Math.max(nsPerPx * minPx, 1);
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw * (1 - 1e-12)) return m * p;
  return 10 * p;
}

/** `t` in the unit of `magnitude` (default: t itself), with just enough decimals to tell ticks `step` apart. */
export function formatTick(t, step, magnitude = t) {
  const [scale, name] = unitFor(magnitude);
  const decimals = Math.max(0, Math.ceil(-Math.log10(step / scale) - 1e-9));
  let s = (t / scale).toFixed(decimals);
  if (/^-0(\.0*)?$/.test(s)) s = s.slice(1);
  return `${s} ${name}`;
}

const MAX_LABEL_DIGITS = 7;

/**
 * Ticks of a ruler over [t0, t1] drawn `width` pixels wide: {step, base, ticks: [{t, label}]}.
 * Labels share the unit of the larger end ("0.5 s", "1.0 s"). Deep in a long trace they would grow long
 * ("5.1234568 s"); then `base` is a round time at or before t0 ({t, label}) and tick labels are offsets
 * from it ("+56.8 µs"). Otherwise `base` is null.
 */
export function rulerTicks(t0, t1, width, minPx = 80) {
  const span = Math.max(t1 - t0, 1e-9), step = niceStep(span / Math.max(width, 1), minPx);
  const mag = Math.max(Math.abs(t0), Math.abs(t1));
  let base = null, origin = 0, tmag = mag;
  if (formatTick(mag, step, mag).replace(/[^0-9]/g, "").length > MAX_LABEL_DIGITS) {
    const bstep = step * 1000;
    origin = Math.floor(t0 / bstep) * bstep;
    base = { t: origin, label: formatTick(origin, bstep, origin || bstep) };
    tmag = t1 - origin;
  }
  const first = Math.ceil(t0 / step) * step, ticks = [];
  for (let k = 0; k < 10000; k++) {
    const t = first + k * step;
    if (t > t1 + step * 1e-9) break;
    ticks.push({ t, label: (base ? "+" : "") + formatTick(t - origin, step, tmag) });
  }
  return { step, base, ticks };
}

/** A rate from a count per nanosecond: flops/ns is GFLOP/s, bytes/ns is GB/s. "-" when unknown. */
export function formatRate(perNs) {
  if (!Number.isFinite(perNs) || perNs <= 0) return "-";
  if (perNs < 0.005) return "<0.01";
  return perNs >= 100 ? perNs.toFixed(0) : perNs >= 10 ? perNs.toFixed(1) : perNs.toFixed(2);
}

/** 1234567 -> "1,234,567"; big sizes readable in a table. */
export function formatCount(n) {
  return Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "-";
}

/** Bytes with binary units: "1.50 MiB". */
export function formatBytes(b) {
  if (!Number.isFinite(b)) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0, v = Math.abs(b);
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${b < 0 ? "-" : ""}${i ? v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2) : v} ${units[i]}`;
}
