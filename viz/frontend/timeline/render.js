// Drawing the timeline on a canvas 2D: ruler, markers, track labels, lanes of spans (culled to the window and
// merged below a pixel by lod.js), counters as area charts, the selection and the area selection. Never WebGL:
// in headless and VM browsers it is software-emulated and slower than canvas 2D.

import { Rects, mergeLane, counterSteps } from "./lod.js";
import { LANE_H, TRACK_PAD } from "./model.js";
import { rulerTicks, formatDuration, formatBytes } from "./timefmt.js";
import { THEME, COLORS, DIM_COLORS, N_SLOTS } from "./colors.js";

export const LABEL_W = 200, HEADER_H = 40;
const FONT = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";
const BOLD = "600 11px system-ui, -apple-system, 'Segoe UI', sans-serif";
const MIN_LABEL_PX = 26, MAX_FLOWS = 2000;

export class Renderer {
  constructor(canvas) {
    this.canvas = canvas;
    this.g = canvas.getContext("2d", { alpha: false });
    this.rects = new Rects(4096);
    this.textW = new Map();  // gid -> measured label width (px)
    this.charW = 6.2;
  }

  /** Match the canvas's backing store to its CSS size and the device pixel ratio. */
  resize(width, height, dpr = globalThis.devicePixelRatio || 1) {
    const c = this.canvas, w = Math.max(1, Math.round(width * dpr)), h = Math.max(1, Math.round(height * dpr));
    if (c.width !== w || c.height !== h) { c.width = w; c.height = h; }
    c.style.width = `${width}px`; c.style.height = `${height}px`;
    this.width = width; this.height = height; this.dpr = dpr;
  }

  /**
   * Draw one frame. v: {model, vp: {t0, t1}, scrollTop, selected: {track, index}|null, hover: same|null,
   * area: {t0, t1, tracks: Set of track ids}|null, highlight: gid|null, live: bool}. Returns {ms, rects}.
   */
  draw(v) {
    const t0ms = performance.now(), g = this.g, { width, height } = this, m = v.model;
    g.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    g.fillStyle = THEME.bg; g.fillRect(0, 0, width, height);
    const plotW = Math.max(width - LABEL_W, 1), k = plotW / Math.max(v.vp.t1 - v.vp.t0, 1e-9);
    const ruler = rulerTicks(v.vp.t0, v.vp.t1, plotW, 90);
    let nrects = 0;

    // tracks area, clipped below the header
    g.save();
    g.beginPath(); g.rect(0, HEADER_H, width, height - HEADER_H); g.clip();
    const top = v.scrollTop - HEADER_H, bottom = v.scrollTop + height - HEADER_H;
    const rows = m.rows ?? [];
    // grid lines first, spans over them
    g.fillStyle = THEME.grid;
    for (const tk of ruler.ticks) g.fillRect(LABEL_W + Math.round((tk.t - v.vp.t0) * k), HEADER_H, 1, height - HEADER_H);
    g.save();
    g.beginPath(); g.rect(LABEL_W, HEADER_H, plotW, height - HEADER_H); g.clip();
    g.font = FONT; g.textBaseline = "middle";
    for (const r of rows) {
      if (r.y + r.h < top || r.y > bottom) continue;
      const y = r.y - top;
      if (r.kind === "track") nrects += this.drawTrack(r, y, v, k);
      else if (r.kind === "counter") this.drawCounter(r, y, v, k, plotW);
      else { g.fillStyle = THEME.panel; g.fillRect(LABEL_W, y, plotW, r.h); }
      g.fillStyle = THEME.grid; g.fillRect(LABEL_W, y + r.h - 1, plotW, 1);
    }
    this.drawMarkers(v, k, plotW);
    const nflows = this.drawFlows(v, k, top, plotW);
    this.drawArea(v, k, top);
    this.drawSelected(v, k, top);
    g.restore();
    this.drawLabels(rows, top, bottom, v);
    g.restore();
    this.drawRuler(ruler, v, k, plotW);
    return { ms: performance.now() - t0ms, rects: nrects, flows: nflows };
  }

  drawTrack(r, y, v, k) {
    const g = this.g, t = r.track, m = v.model, { t0, t1 } = v.vp;
    if (!t.chunk) {
      g.fillStyle = THEME.muted; g.fillText("loading…", LABEL_W + 8, y + r.h / 2);
      return 0;
    }
    const gid = t.gid, name = t.chunk.name, hl = v.highlight ?? -1;
    let n = 0;
    for (let l = 0; l < t.lanes.length; l++) {
      const ly = y + TRACK_PAD + l * LANE_H;
      if (ly + LANE_H < HEADER_H || ly > this.height) continue;
      const rects = mergeLane(t.lanes[l], t0, t1, k, this.rects.clear());
      n += rects.n;
      // bucket the rectangles by colour slot (dimmed slots after the bright ones): one fillStyle per colour
      const order = this.sortBySlot(rects, gid, name, m.slots, hl);
      const starts = this.slotStarts;
      for (let c = 0; c < 2 * N_SLOTS; c++) {
        if (starts[c] === starts[c + 1]) continue;
        g.fillStyle = c < N_SLOTS ? COLORS[c] : DIM_COLORS[c - N_SLOTS];
        for (let q = starts[c]; q < starts[c + 1]; q++) {
          // whole pixels: no anti-aliased edges to rasterize
          const r = order[q], a = Math.round(rects.x0[r]);
          g.fillRect(LABEL_W + a, ly, Math.max(Math.round(rects.x1[r]) - a, 1), LANE_H - 1);
        }
      }
      // labels in a second pass: one fillStyle, fewer state changes
      g.fillStyle = THEME.spanText;
      for (let q = 0; q < rects.n; q++) {
        const w = rects.x1[q] - rects.x0[q];
        if (w < MIN_LABEL_PX || rects.count[q] !== 1) continue;
        const id = gid[name[rects.idx[q]]], x0 = Math.max(LABEL_W + rects.x0[q], LABEL_W) + 3, avail = LABEL_W + rects.x1[q] - 3 - x0;
        if (avail < 12) continue;
        this.label(m.names[id], id, x0, ly + LANE_H / 2, avail);
      }
    }
    return n;
  }

  /** A name that fits `avail` px: whole when it does, else cut with an ellipsis (widths cached per name). */
  label(s, id, x, y, avail) {
    const g = this.g;
    let w = this.textW.get(id);
    if (w === undefined) { w = g.measureText(s).width; this.textW.set(id, w); if (s.length) this.charW = 0.9 * this.charW + 0.1 * (w / s.length); }
    if (w <= avail) { g.fillText(s, x, y); return; }
    const fit = Math.floor((avail - 8) / (w / s.length));
    if (fit >= 2) g.fillText(s.slice(0, fit) + "…", x, y);
  }

  /** Rectangle indices ordered by colour slot (counting sort); this.slotStarts[c] is where slot c begins. */
  sortBySlot(rects, gid, name, slots, hl) {
    const n = rects.n;
    if (!this.order || this.order.length < n) { this.order = new Uint32Array(Math.max(n, 1024) * 2); this.slotOf = new Uint16Array(this.order.length); }
    const starts = this.slotStarts ??= new Uint32Array(2 * N_SLOTS + 1), slotOf = this.slotOf, order = this.order;
    starts.fill(0);
    for (let q = 0; q < n; q++) {
      const id = gid[name[rects.idx[q]]], c = slots[id] + (hl >= 0 && id !== hl ? N_SLOTS : 0);
      slotOf[q] = c; starts[c + 1]++;
    }
    for (let c = 0; c < 2 * N_SLOTS; c++) starts[c + 1] += starts[c];
    const fill = this.slotFill ??= new Uint32Array(2 * N_SLOTS);
    fill.set(starts.subarray(0, 2 * N_SLOTS));
    for (let q = 0; q < n; q++) order[fill[slotOf[q]]++] = q;
    return order;
  }

  drawCounter(r, y, v, k, plotW) {
    const g = this.g, c = r.counter;
    if (!c.ts) { g.fillStyle = THEME.muted; g.fillText("loading…", LABEL_W + 8, y + r.h / 2); return; }
    const pts = counterSteps(c.ts, c.values, v.vp.t0, v.vp.t1, k);
    const top = y + 4, h = r.h - 8, lo = Math.min(c.min, 0), span = (c.max - lo) || 1;
    const yOf = val => top + h - ((val - lo) / span) * h;
    if (pts.n) {
      g.beginPath(); g.moveTo(LABEL_W + Math.max(pts.x[0], 0), top + h);
      let prev = null;
      for (let i = 0; i < pts.n; i++) {
        const x = LABEL_W + Math.max(pts.x[i], 0);
        if (prev !== null) g.lineTo(x, prev);
        prev = yOf(pts.v[i]); g.lineTo(x, prev);
      }
      g.lineTo(LABEL_W + plotW, prev); g.lineTo(LABEL_W + plotW, top + h); g.closePath();
      g.fillStyle = THEME.counterFill; g.fill();
      g.strokeStyle = THEME.counter; g.lineWidth = 1; g.stroke();
    }
    g.fillStyle = THEME.muted; g.textBaseline = "top";
    g.fillText(`max ${/mem|byte|alloc/i.test(c.name) ? formatBytes(c.max) : c.max.toLocaleString("en-US")}`, LABEL_W + 4, y + 2);
    g.textBaseline = "middle";
  }

  drawMarkers(v, k, plotW) {
    const g = this.g;
    g.fillStyle = THEME.marker;
    for (const mk of v.model.markers) {
      const x = (mk.t - v.vp.t0) * k;
      if (x < -1 || x > plotW + 1) continue;
      g.fillRect(LABEL_W + Math.round(x), HEADER_H, 1, this.height - HEADER_H);
    }
  }

  /** Flow arrows (Chrome's s/t/f events) between the spans they attach to; at most MAX_FLOWS per frame. Returns
   * how many arrow segments it drew (both ends on a shown track). */
  drawFlows(v, k, top, plotW) {
    const m = v.model;
    if (!m.flows.length) return 0;
    const g = this.g, rowOf = new Map();
    for (const r of m.rows ?? []) if (r.kind === "track") rowOf.set(r.track.id, r);
    const yOf = (p) => {
      const r = rowOf.get(p.track);
      return r && r.track.chunk ? r.y - top + TRACK_PAD + m.laneOfTime(r.track, p.t) * LANE_H + LANE_H / 2 : null;
    };
    g.strokeStyle = THEME.flow; g.fillStyle = THEME.flow; g.lineWidth = 1.2;
    let drawn = 0, segs = 0;
    for (const a of m.flows) {
      if (a.t1 < v.vp.t0 || a.t0 > v.vp.t1) continue;
      if (++drawn > MAX_FLOWS) break;
      for (let i = 1; i < a.pts.length; i++) {
        const p = a.pts[i - 1], q = a.pts[i], y0 = yOf(p), y1 = yOf(q);
        if (y0 === null || y1 === null) continue;
        const x0 = LABEL_W + (p.t - v.vp.t0) * k, x1 = LABEL_W + (q.t - v.vp.t0) * k, bend = Math.max(Math.min((x1 - x0) / 2, 60), 12);
        g.beginPath(); g.moveTo(x0, y0); g.bezierCurveTo(x0 + bend, y0, x1 - bend, y1, x1, y1); g.stroke();
        g.beginPath(); g.moveTo(x1, y1); g.lineTo(x1 - 6, y1 - 3.5); g.lineTo(x1 - 6, y1 + 3.5); g.closePath(); g.fill();
        segs++;
      }
    }
    return segs;
  }

  drawArea(v, k, top) {
    const a = v.area;
    if (!a) return;
    const g = this.g, x0 = LABEL_W + (a.t0 - v.vp.t0) * k, x1 = LABEL_W + (a.t1 - v.vp.t0) * k;
    for (const r of v.model.rows ?? []) {
      if ((r.kind !== "track" && r.kind !== "counter") || (r.kind === "track" && !a.tracks.has(r.track.id))) continue;
      if (r.kind === "counter") continue;
      g.fillStyle = THEME.area; g.fillRect(x0, r.y - top, Math.max(x1 - x0, 1), r.h);
    }
    g.fillStyle = THEME.areaEdge;
    g.fillRect(Math.round(x0), HEADER_H, 1, this.height); g.fillRect(Math.round(x1), HEADER_H, 1, this.height);
  }

  drawSelected(v, k, top) {
    const s = v.selected && v.model.span(v.selected.track, v.selected.index);
    if (!s) return;
    const row = (v.model.rows ?? []).find(r => r.kind === "track" && r.track === s.track);
    if (!row) return;
    const g = this.g, y = row.y - top + TRACK_PAD + s.depth * LANE_H;
    const x0 = LABEL_W + (s.start - v.vp.t0) * k, x1 = LABEL_W + (s.end - v.vp.t0) * k;
    g.strokeStyle = THEME.select; g.lineWidth = 2;
    g.strokeRect(Math.max(x0, LABEL_W - 2) - 1, y - 1, Math.max(Math.min(x1, this.width + 2) - Math.max(x0, LABEL_W - 2), 1) + 2, LANE_H + 1);
  }

  drawLabels(rows, top, bottom, v) {
    const g = this.g;
    g.fillStyle = THEME.panel; g.fillRect(0, HEADER_H, LABEL_W, this.height - HEADER_H);
    g.textBaseline = "middle";
    for (const r of rows) {
      if (r.y + r.h < top || r.y > bottom) continue;
      const y = r.y - top, x = 10 + r.indent * 14;
      if (r.kind === "group") {
        g.font = BOLD; g.fillStyle = THEME.text;
        g.fillText(`${r.collapsed ? "▸" : "▾"} ${r.label}`, 6, y + r.h / 2, LABEL_W - 12);
      } else {
        g.font = FONT; g.fillStyle = r.kind === "counter" ? THEME.muted : THEME.text;
        const ly = r.kind === "track" ? y + TRACK_PAD + LANE_H / 2 : y + r.h / 2;
        g.fillText(r.label, x, ly, LABEL_W - x - 8);
        if (r.kind === "track" && r.track.nLanes > 1 && r.h > 2 * LANE_H) {
          g.fillStyle = THEME.muted;
          g.fillText(`${r.track.nLanes} lanes`, x, ly + LANE_H, LABEL_W - x - 8);
        }
      }
      g.fillStyle = THEME.grid; g.fillRect(0, y + r.h - 1, LABEL_W, 1);
    }
    g.fillStyle = THEME.border; g.fillRect(LABEL_W - 1, HEADER_H, 1, this.height - HEADER_H);
  }

  drawRuler(ruler, v, k, plotW) {
    const g = this.g;
    g.fillStyle = THEME.panel; g.fillRect(0, 0, this.width, HEADER_H);
    g.fillStyle = THEME.border; g.fillRect(0, HEADER_H - 1, this.width, 1);
    g.font = FONT; g.textBaseline = "middle"; g.fillStyle = THEME.muted;
    g.fillText(ruler.base ? `${ruler.base.label} +` : `window ${formatDuration(v.vp.t1 - v.vp.t0)}`, 10, 12, LABEL_W - 16);
    if (v.live) { g.fillStyle = THEME.marker; g.fillText("● live", 10, 28); }
    g.save();
    g.beginPath(); g.rect(LABEL_W, 0, plotW, HEADER_H); g.clip();
    for (const tk of ruler.ticks) {
      const x = LABEL_W + Math.round((tk.t - v.vp.t0) * k);
      g.fillStyle = THEME.border; g.fillRect(x, 0, 1, 20);
      g.fillStyle = THEME.text; g.fillText(tk.label, x + 4, 11);
    }
    // markers: a flag and a label under the ticks
    for (const mk of v.model.markers) {
      const x = LABEL_W + Math.round((mk.t - v.vp.t0) * k);
      if (x < LABEL_W - 200 || x > this.width) continue;
      g.fillStyle = THEME.marker;
      g.beginPath(); g.moveTo(x, HEADER_H - 2); g.lineTo(x - 4, 22); g.lineTo(x + 4, 22); g.closePath(); g.fill();
      g.fillText(mk.name, x + 6, 30);
    }
    // the area selection's length, centred over it
    if (v.area) {
      const x0 = LABEL_W + (v.area.t0 - v.vp.t0) * k, x1 = LABEL_W + (v.area.t1 - v.vp.t0) * k, s = formatDuration(v.area.t1 - v.area.t0);
      const w = g.measureText(s).width + 10, cx = Math.max(LABEL_W + w / 2, Math.min((x0 + x1) / 2, this.width - w / 2));
      g.fillStyle = THEME.areaEdge; g.fillRect(x0, HEADER_H - 4, Math.max(x1 - x0, 1), 3);
      g.fillStyle = THEME.accent; g.fillRect(cx - w / 2, 22, w, 15);
      g.fillStyle = THEME.spanText; g.fillText(s, cx - w / 2 + 5, 30);
    }
    g.restore();
  }
}
