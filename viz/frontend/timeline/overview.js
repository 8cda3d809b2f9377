// The overview strip above the tracks: how busy the whole run is over time, with the window now shown drawn on it.
// A click or a drag there moves the window. `busyBins` is pure (tested by node); `drawOverview` paints a canvas.

import { THEME } from "./colors.js";

/**
 * How busy the run is in each of `n` equal bins of [0, duration]: the time spans cover in a bin, summed over
 * tracks (outermost lane only: nested spans would count their parent's time again), divided by the bin's length
 * and the number of tracks. Returns a Float32Array of n values in [0, 1].
 */
export function busyBins(tracks, duration, n) {
  const bins = new Float32Array(n), w = Math.max(duration, 1) / n;
  let ntracks = 0;
  for (const t of tracks) {
    const lane = t.lanes?.[0];
    if (!lane || !lane.start.length) continue;
    ntracks++;
    const { start, end } = lane;
    for (let i = 0; i < start.length; i++) {
      let a = start[i], b = end[i];
      if (b <= a) continue;
      let k = Math.max(0, Math.floor(a / w));
      while (k < n && a < b) {
        const edge = (k + 1) * w, c = b < edge ? b : edge;
        bins[k] += c - a;
        a = c; k++;
      }
    }
  }
  if (ntracks) for (let k = 0; k < n; k++) bins[k] = Math.min(1, bins[k] / (w * ntracks));
  return bins;
}

/**
 * Paint the strip: bars of `bins` (scaled so the busiest shows full height) and the window [vp.t0, vp.t1]. The bars
 * are drawn once into `cache` (an object the caller keeps) and copied each frame: only the window box moves.
 */
export function drawOverview(canvas, bins, vp, duration, labelW, cache = {}, size = null) {
  // size: {W, H} measured by the caller on resize; reading clientWidth here would force a layout every frame
  const dpr = globalThis.devicePixelRatio || 1, W = size?.W ?? canvas.clientWidth, H = size?.H ?? canvas.clientHeight;
  if (!W || !H) return;
  if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(H * dpr)) { canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr); }
  const g = canvas.getContext("2d");
  if (cache.bins !== bins || cache.W !== W || cache.H !== H || cache.dpr !== dpr) {
    const off = cache.canvas ??= document.createElement("canvas");
    off.width = canvas.width; off.height = canvas.height;
    paintBars(off.getContext("2d"), bins, W, H, dpr, labelW);
    Object.assign(cache, { bins, W, H, dpr });
  }
  g.setTransform(1, 0, 0, 1, 0, 0);
  g.drawImage(cache.canvas, 0, 0);
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  const plotW = Math.max(W - labelW, 1);
  const x0 = labelW + (vp.t0 / Math.max(duration, 1)) * plotW, x1 = labelW + (vp.t1 / Math.max(duration, 1)) * plotW;
  g.fillStyle = "rgba(0, 0, 0, 0.45)";
  g.fillRect(labelW, 0, Math.max(0, Math.min(x0, W) - labelW), H); g.fillRect(Math.max(x1, labelW), 0, Math.max(0, W - Math.max(x1, labelW)), H);
  g.strokeStyle = THEME.text; g.lineWidth = 1;
  g.strokeRect(Math.max(x0, labelW) + 0.5, 0.5, Math.max(Math.min(x1, W - 1) - Math.max(x0, labelW), 1), H - 1);
}

function paintBars(g, bins, W, H, dpr, labelW) {
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = THEME.panel; g.fillRect(0, 0, W, H);
  g.fillStyle = THEME.muted; g.font = "10px system-ui, sans-serif"; g.textBaseline = "middle";
  g.fillText("overview", 10, H / 2);
  const plotW = Math.max(W - labelW, 1);
  if (bins?.length) {
    let top = 0;
    for (const b of bins) if (b > top) top = b;
    g.fillStyle = THEME.accent;
    const bw = plotW / bins.length;
    for (let i = 0; i < bins.length; i++) {
      if (!bins[i]) continue;
      const hgt = Math.max(1, (bins[i] / (top || 1)) * (H - 4));
      g.fillRect(labelW + i * bw, H - 2 - hgt, Math.max(bw, 1), hgt);
    }
  }
  g.fillStyle = THEME.border; g.fillRect(0, H - 1, W, 1); g.fillRect(labelW - 1, 0, 1, H);
}
