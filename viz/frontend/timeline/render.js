// Drawing the timeline on a canvas 2D: ruler, markers, track labels, lanes of spans (culled to the window and
// merged below a pixel by lod.js), counters as area charts, the selection and the area selection. Never WebGL:
// in headless and VM browsers it is software-emulated and slower than canvas 2D.

import { counterSteps } from "./lod.js";
import { LaneCache, shift } from "./lodcache.js";
import { TRACK_PAD } from "./model.js";
import { rulerTicks, formatDuration, formatBytes, formatTick } from "./timefmt.js";
import { THEME, COLORS, DIM_COLORS, PIXELS, N_SLOTS, darken } from "./colors.js";
import { counterAt } from "./aggregate.js";
import { CAT } from "./chunk.js";
import { parseKernelName, kernelHints, AXIS_KINDS } from "../kernelname.js";

export const LABEL_W = 200, HEADER_H = 40;
const FONT = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";
const BOLD = "600 11px system-ui, -apple-system, 'Segoe UI', sans-serif";
const MIN_LABEL_PX = 26, MAX_FLOWS = 2000, FEW_RECTS = 48;
export const PIN_W = 18;  // the pin's column at the right of the track names
// axis colours of kernelname.js, darkened to read on the light span fills
const AXIS_ON_SPAN = Object.fromEntries(Object.entries(AXIS_KINDS).map(([k, v]) => [k, darken(v.color, 0.5)]));

/** Screen y of a row's top: pinned rows stay under the ruler, the others scroll. */
export function rowScreenY(row, scrollTop) { return HEADER_H + row.y - (row.pinned ? 0 : scrollTop); }

/** A counter's value as its name suggests: bytes for memory, else a plain number. */
export function formatCounter(c, v) {
  if (v === null || v === undefined) return "-";
  return /mem|byte|alloc/i.test(c.name) ? formatBytes(v) : Number(v).toLocaleString("en-US", { maximumFractionDigits: 3 });
}

export class Renderer {
  constructor(canvas) {
    this.canvas = canvas;
    this.g = canvas.getContext("2d", { alpha: false });
    this.laneCache = new LaneCache();  // merged lanes, kept from frame to frame (lodcache.js)
    this.bitmaps = new WeakMap();  // track -> its lanes' pixel rows (laneBitmap)
    this.counterPaths = new WeakMap();  // counter -> its step path for the last view (drawCounter)
    this.ents = []; this.laneRow = [];  // drawTrack's per-lane scratch: merged lane, bitmap row (-1: filled directly)
    this.textW = new Map();  // gid -> measured label width (px)
    this.kparts = new Map();  // gid -> a kernel name's coloured parts [{text, color, w}] (null: not a kernel name)
    this.images = new Map();  // label key -> {img, dpr, W, H}: whole labels drawn once (textImage)
    this.rowW = new Map();  // "avail|font|label" -> the label as it fits (cut with an ellipsis)
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
    // clearRect of the whole canvas lets Chromium drop a frame it has not rasterized yet (a fillRect does not)
    g.clearRect(0, 0, width, height);
    g.fillStyle = THEME.bg; g.fillRect(0, 0, width, height);
    const plotW = Math.max(width - LABEL_W, 1), k = plotW / Math.max(v.vp.t1 - v.vp.t0, 1e-9);
    const ruler = rulerTicks(v.vp.t0, v.vp.t1, plotW, 90);
    const rows = m.rows ?? [], P = m.pinnedH ?? 0;
    let nrects = 0;
    // grid lines first, spans over them
    g.fillStyle = THEME.grid;
    for (const tk of ruler.ticks) g.fillRect(LABEL_W + Math.round((tk.t - v.vp.t0) * k), HEADER_H, 1, height - HEADER_H);
    // the scrolled rows under the pinned ones, then the pinned ones
    for (const pinned of [false, true]) {
      const lo = pinned ? HEADER_H : HEADER_H + P, hi = pinned ? HEADER_H + P : height;
      if (hi <= lo) continue;
      g.save();
      g.beginPath(); g.rect(LABEL_W, lo, plotW, hi - lo); g.clip();
      if (pinned) { g.fillStyle = THEME.bg; g.fillRect(LABEL_W, lo, plotW, hi - lo); }
      g.font = FONT; g.textBaseline = "middle";
      for (const r of rows) {
        if (!!r.pinned !== pinned) continue;
        const y = rowScreenY(r, v.scrollTop);
        if (y + r.h < lo || y > hi) continue;
        if (r.kind === "track") nrects += this.drawTrack(r, y, v, k);
        else if (r.kind === "counter") this.drawCounter(r, y, v, k, plotW);
        else { g.fillStyle = THEME.panel; g.fillRect(LABEL_W, y, plotW, r.h); }
        g.fillStyle = THEME.grid; g.fillRect(LABEL_W, y + r.h - 1, plotW, 1);
      }
      g.restore();
    }
    g.save();
    g.beginPath(); g.rect(LABEL_W, HEADER_H, plotW, height - HEADER_H); g.clip();
    if (P) { g.fillStyle = THEME.border; g.fillRect(LABEL_W, HEADER_H + P - 1, plotW, 2); }
    this.drawMarkers(v, k, plotW);
    const nflows = this.drawFlows(v, k, plotW);
    this.drawArea(v, k);
    this.drawOutline(v, v.hover, k, THEME.hover, 1);
    this.drawOutline(v, v.selected, k, THEME.select, 2);
    this.drawCursor(v, k);
    g.restore();
    this.drawLabels(rows, v);
    this.drawRuler(ruler, v, k, plotW);
    return { ms: performance.now() - t0ms, rects: nrects, flows: nflows };
  }

  drawTrack(r, y, v, k) {
    const g = this.g, t = r.track, m = v.model, { t0, t1 } = v.vp;
    if (!t.chunk) {
      g.fillStyle = THEME.muted; g.fillText("loading…", LABEL_W + 8, y + r.h / 2);
      return 0;
    }
    const gid = t.gid, name = t.chunk.name, cat = t.chunk.cat, mask = v.mask ?? null, LH = t.laneH, slots = m.slots;
    // the lanes' rectangles as pixel rows of one small bitmap, each row stretched over its lane by one drawImage:
    // a canvas call (and its rasterizing) per rectangle was most of a zoomed-out frame. A lane of a few rectangles
    // (zoomed in) is filled directly: cheaper than its row, the same pixels
    const W = Math.max(1, Math.ceil(this.width - LABEL_W)), nl = t.lanes.length;
    // a row for each lane on screen, not for each lane (a flame can be thousands deep)
    const bm = this.laneBitmap(t, W, Math.min(nl, Math.ceil(this.height / LH) + 2)), px = bm.px;
    let rows = 0;
    const ents = this.ents;  // this frame's merged lanes of the track (null: lane not on screen)
    let n = 0, bitmap = false, fill = -1;  // fill: the colour slot fillStyle holds (setting it parses the string)
    for (let l = 0; l < nl; l++) {
      const ly = y + TRACK_PAD + l * LH;
      ents[l] = null;
      if (ly + LH < HEADER_H || ly > this.height) continue;
      const e = ents[l] = this.laneCache.get(t.lanes, l, t.lanes[l], t0, t1, k), rects = e.rects, off = shift(e, t0);
      const few = rects.n <= FEW_RECTS, row = few ? -1 : rows++, base = row * W;
      if (!few) px.fill(0, base, base + W);
      // matches of a search (or the highlighted name) painted last: where rectangles share a pixel, they show
      for (let pass = mask ? 0 : 1; pass < 2; pass++) {
        for (let q = 0; q < rects.n; q++) {
          const x0 = rects.x0[q] + off, x1 = rects.x1[q] + off;
          if (x1 < -1 || x0 > W + 1) continue;
          const id = gid[name[rects.idx[q]]], dim = mask !== null && !mask[id];
          if (pass === 0 ? !dim : mask !== null && dim) continue;
          // whole pixels, at least one wide (as fillRect at rounded x did)
          const a = Math.round(x0), b = Math.max(Math.round(x1), a + 1);
          if (b <= 0 || a >= W) continue;
          const c = slots[id] + (dim ? N_SLOTS : 0);
          if (few) { if (c !== fill) { g.fillStyle = c < N_SLOTS ? COLORS[c] : DIM_COLORS[c - N_SLOTS]; fill = c; } g.fillRect(LABEL_W + Math.max(a, 0), ly, Math.min(b, W) - Math.max(a, 0), LH - 1); }
          else px.fill(PIXELS[c], base + Math.max(a, 0), base + Math.min(b, W));
          n++;
        }
      }
      bitmap ||= !few;
      this.laneRow[l] = row;
    }
    if (bitmap) bm.g.putImageData(bm.img, 0, 0);
    for (let l = 0; l < nl; l++) {
      const e = ents[l], ly = y + TRACK_PAD + l * LH;
      if (!e) continue;
      if (this.laneRow[l] >= 0) {
        g.imageSmoothingEnabled = false;  // stretched as whole pixels; label bitmaps are drawn smoothed as before
        g.drawImage(bm.canvas, 0, this.laneRow[l], W, 1, LABEL_W, ly, W, LH - 1);
        g.imageSmoothingEnabled = true;
      }
      // labels over the rectangles: one fillStyle, fewer state changes
      const rects = e.rects, off = LABEL_W + shift(e, t0);
      g.fillStyle = THEME.spanText;
      for (let q = 0; q < rects.n; q++) {
        if (rects.count[q] !== 1) continue;
        const rx0 = rects.x0[q] + off, rx1 = rects.x1[q] + off;
        if (rx1 - rx0 < MIN_LABEL_PX || rx1 < LABEL_W || rx0 > this.width) continue;
        const i = rects.idx[q], id = gid[name[i]], x0 = Math.max(rx0, LABEL_W) + 3, avail = rx1 - 3 - x0;
        if (avail < 12) continue;
        if (cat[i] === CAT.kernel && this.kernelLabel(m.names[id], id, t.chunk.kernel[i], m, x0, ly + LH / 2, avail)) { g.fillStyle = THEME.spanText; continue; }
        this.label(m.names[id], id, x0, ly + LH / 2, avail);
      }
    }
    return n;
  }

  /** A track's bitmap of `nl` lane rows (one pixel row each, W px wide), kept with the track and resized as needed. */
  laneBitmap(t, W, nl) {
    let bm = this.bitmaps.get(t);
    if (!bm || bm.W !== W || bm.nl !== nl) {
      const canvas = bm?.canvas ?? (typeof OffscreenCanvas === "function" ? new OffscreenCanvas(W, nl) : document.createElement("canvas"));
      canvas.width = W; canvas.height = Math.max(nl, 1);
      const img = new ImageData(W, Math.max(nl, 1));
      bm = { canvas, g: canvas.getContext("2d"), img, px: new Uint32Array(img.data.buffer), W, nl };
      this.bitmaps.set(t, bm);
    }
    return bm;
  }

  /** A name that fits `avail` px: whole when it does, else cut with an ellipsis (widths cached per name). */
  label(s, id, x, y, avail) {
    const g = this.g;
    let w = this.textW.get(id);
    if (w === undefined) { w = g.measureText(s).width; this.textW.set(id, w); if (s.length) this.charW = 0.9 * this.charW + 0.1 * (w / s.length); }
    if (w <= avail) { g.drawImage(...this.textImage(id, [{ text: s, color: THEME.spanText, w }], w, x, y)); return; }
    const fit = Math.floor((avail - 8) / (w / s.length));
    if (fit >= 2) g.fillText(s.slice(0, fit) + "…", x, y);
  }

  /** A kernel name with its axes coloured by kind (kernelname.js), when it fits whole; false when it does not. */
  kernelLabel(s, id, kid, m, x, y, avail) {
    const g = this.g;
    if (this.kpartsFor !== m.kernels.size) {  // records arrived: exact kinds
      this.kparts.clear(); this.kpartsFor = m.kernels.size;
      for (const key of this.images.keys()) if (key < 0) this.images.delete(key);
    }
    let parts = this.kparts.get(id);
    if (parts === undefined) {
      const p = parseKernelName(s, kernelHints(m.kernels.get(kid)));
      parts = p.letter ? p.parts.map(q => ({ text: q.text, color: q.role === "axis" ? AXIS_ON_SPAN[q.kind] : THEME.spanText, w: g.measureText(q.text).width })) : null;
      if (parts) parts.total = parts.reduce((a, q) => a + q.w, 0);
      this.kparts.set(id, parts);
    }
    if (!parts || parts.total > avail) return false;
    g.drawImage(...this.textImage(~id, parts, parts.total, x, y));  // ~id: kernel labels apart from plain ones
    return true;
  }

  /**
   * drawImage's arguments for a whole label at (x, middle y): its parts drawn once into a small bitmap, then copied.
   * Text is most of a zoomed-in frame's time (a kernel name of n axes is 2n+1 fillText calls); a copy is cheap.
   * Bitmaps are kept per name id (at most 4,000; then they are drawn again as needed).
   */
  textImage(key, parts, width, x, y) {
    let e = this.images.get(key);
    if (!e || e.dpr !== this.dpr) {
      if (this.images.size >= 4000) this.images.clear();
      const W = Math.ceil(width) + 2, H = 16, img = typeof OffscreenCanvas === "function" ? new OffscreenCanvas(1, 1) : document.createElement("canvas");
      img.width = Math.ceil(W * this.dpr); img.height = Math.ceil(H * this.dpr);
      const c = img.getContext("2d");
      c.scale(this.dpr, this.dpr); c.font = FONT; c.textBaseline = "middle";
      let px = 0;
      for (const q of parts) { c.fillStyle = q.color; c.fillText(q.text, px, H / 2); px += q.w; }
      this.images.set(key, e = { img, dpr: this.dpr, W, H });
    }
    return [e.img, x, y - e.H / 2, e.W, e.H];
  }

  drawCounter(r, y, v, k, plotW) {
    const g = this.g, c = r.counter;
    if (!c.ts) { g.fillStyle = THEME.muted; g.fillText("loading…", LABEL_W + 8, y + r.h / 2); return; }
    const top = y + 4, h = r.h - 8, lo = Math.min(c.min, 0), span = (c.max - lo) || 1;
    const yOf = val => top + h - ((val - lo) / span) * h;
    // the step path is kept while the view, the row and the data stay (a redraw for the cursor, hover or selection)
    let cp = this.counterPaths.get(c);
    const { t0, t1 } = v.vp;
    if (!cp || cp.ts !== c.ts || cp.max !== c.max || cp.min !== c.min || cp.t0 !== t0 || cp.t1 !== t1 || cp.k !== k || cp.y !== y || cp.h !== r.h || cp.plotW !== plotW) {
      const pts = counterSteps(c.ts, c.values, t0, t1, k);
      let path = null;
      if (pts.n) {
        path = new Path2D(); path.moveTo(LABEL_W + Math.max(pts.x[0], 0), top + h);
        let prev = null;
        for (let i = 0; i < pts.n; i++) {
          const x = LABEL_W + Math.max(pts.x[i], 0);
          if (prev !== null) path.lineTo(x, prev);
          prev = yOf(pts.v[i]); path.lineTo(x, prev);
        }
        path.lineTo(LABEL_W + plotW, prev); path.lineTo(LABEL_W + plotW, top + h); path.closePath();
      }
      this.counterPaths.set(c, cp = { ts: c.ts, max: c.max, min: c.min, t0, t1, k, y, h: r.h, plotW, path });
    }
    if (cp.path) {
      g.fillStyle = THEME.counterFill; g.fill(cp.path);
      g.strokeStyle = THEME.counter; g.lineWidth = 1; g.stroke(cp.path);
    }
    g.fillStyle = THEME.muted; g.textBaseline = "top";
    g.fillText(`max ${formatCounter(c, c.max)}`, LABEL_W + 4, y + 2);
    // the value under the cursor: a dot on the step and the number beside it
    if (v.cursorT !== null && v.cursorT !== undefined) {
      const val = counterAt(c.ts, c.values, v.cursorT), x = LABEL_W + (v.cursorT - v.vp.t0) * k;
      if (val !== null) {
        const s = formatCounter(c, val), w = g.measureText(s).width + 8, cy = yOf(val);
        g.fillStyle = THEME.counter; g.beginPath(); g.arc(x, cy, 3, 0, 2 * Math.PI); g.fill();
        const bx = x + 6 + w > LABEL_W + plotW ? x - 6 - w : x + 6;
        g.fillStyle = THEME.tipBg; g.fillRect(bx, y + 2, w, 14);
        g.fillStyle = THEME.text; g.fillText(s, bx + 4, y + 3);
      }
    }
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

  /** Flow arrows (Chrome's s/t/f events) between the spans they attach to: those of v.flows (the selected span's,
   * or all on the toggle), at most MAX_FLOWS per frame. Returns how many arrow segments it drew. */
  drawFlows(v, k, plotW) {
    const m = v.model, flows = v.flows ?? [];
    if (!flows.length) return 0;
    const g = this.g, rowOf = new Map();
    for (const r of m.rows ?? []) if (r.kind === "track") rowOf.set(r.track.id, r);
    const yOf = (p) => {
      const r = rowOf.get(p.track);
      return r && r.track.chunk ? rowScreenY(r, v.scrollTop) + TRACK_PAD + m.laneOfTime(r.track, p.t) * r.track.laneH + r.track.laneH / 2 : null;
    };
    g.strokeStyle = THEME.flow; g.fillStyle = THEME.flow; g.lineWidth = 1.5;
    let drawn = 0, segs = 0;
    for (const a of flows) {
      if (a.t1 < v.vp.t0 || a.t0 > v.vp.t1) continue;
      if (++drawn > MAX_FLOWS) break;
      for (let i = 1; i < a.pts.length; i++) {
        const p = a.pts[i - 1], q = a.pts[i], y0 = yOf(p), y1 = yOf(q);
        if (y0 === null || y1 === null) continue;
        const x0 = LABEL_W + (p.t - v.vp.t0) * k, x1 = LABEL_W + (q.t - v.vp.t0) * k, bend = Math.max(Math.min((x1 - x0) / 2, 60), 12);
        g.beginPath(); g.moveTo(x0, y0); g.bezierCurveTo(x0 + bend, y0, x1 - bend, y1, x1, y1); g.stroke();
        g.beginPath(); g.moveTo(x1, y1); g.lineTo(x1 - 7, y1 - 4); g.lineTo(x1 - 7, y1 + 4); g.closePath(); g.fill();
        segs++;
      }
    }
    return segs;
  }

  drawArea(v, k) {
    const a = v.area;
    if (!a) return;
    const g = this.g, x0 = LABEL_W + (a.t0 - v.vp.t0) * k, x1 = LABEL_W + (a.t1 - v.vp.t0) * k;
    for (const r of v.model.rows ?? []) {
      if (r.kind !== "track" || !a.tracks.has(r.track.id)) continue;
      g.fillStyle = THEME.area; g.fillRect(x0, rowScreenY(r, v.scrollTop), Math.max(x1 - x0, 1), r.h);
    }
    g.fillStyle = THEME.areaEdge;
    g.fillRect(Math.round(x0), HEADER_H, 1, this.height); g.fillRect(Math.round(x1), HEADER_H, 1, this.height);
  }

  /** A box around one span ({track, index}): the selection (white, 2 px) or the span under the mouse. */
  drawOutline(v, which, k, color, lw) {
    const s = which && v.model.span(which.track, which.index);
    if (!s) return;
    const row = (v.model.rows ?? []).find(r => r.kind === "track" && r.track === s.track);
    if (!row) return;
    const g = this.g, LH = s.track.laneH, y = rowScreenY(row, v.scrollTop) + TRACK_PAD + s.depth * LH;
    const x0 = LABEL_W + (s.start - v.vp.t0) * k, x1 = LABEL_W + (s.end - v.vp.t0) * k;
    g.strokeStyle = color; g.lineWidth = lw;
    g.strokeRect(Math.max(x0, LABEL_W - 2) - 1, y - 1, Math.max(Math.min(x1, this.width + 2) - Math.max(x0, LABEL_W - 2), 1) + 2, LH + 1);
  }

  /** The cursor's time: a thin line over the tracks (its readout sits in the ruler). */
  drawCursor(v, k) {
    if (v.cursorT === null || v.cursorT === undefined) return;
    this.g.fillStyle = THEME.cursor;
    this.g.fillRect(Math.round(LABEL_W + (v.cursorT - v.vp.t0) * k), HEADER_H, 1, this.height - HEADER_H);
  }

  /** `s` cut with an ellipsis to fit `avail` px (widths measured once per string). */
  fitText(s, avail) {
    const key = `${Math.round(avail)}|${this.g.font}|${s}`;
    let out = this.rowW.get(key);
    if (out !== undefined) return out;
    const g = this.g, w = g.measureText(s).width;
    if (w <= avail) out = s;
    else {
      let n = Math.max(0, Math.floor(s.length * avail / w) - 1);
      while (n > 0 && g.measureText(s.slice(0, n) + "…").width > avail) n--;
      out = n > 0 ? s.slice(0, n) + "…" : "…";
    }
    if (this.rowW.size > 5000) this.rowW.clear();
    this.rowW.set(key, out);
    return out;
  }

  drawLabels(rows, v) {
    const g = this.g, P = v.model.pinnedH ?? 0;
    g.fillStyle = THEME.panel; g.fillRect(0, HEADER_H, LABEL_W, this.height - HEADER_H);
    g.textBaseline = "middle";
    for (const pinned of [false, true]) {
      const lo = pinned ? HEADER_H : HEADER_H + P, hi = pinned ? HEADER_H + P : this.height;
      if (hi <= lo) continue;
      g.save();
      g.beginPath(); g.rect(0, lo, LABEL_W, hi - lo); g.clip();
      if (pinned) { g.fillStyle = THEME.panel; g.fillRect(0, lo, LABEL_W, hi - lo); }
      for (const r of rows) {
        if (!!r.pinned !== pinned) continue;
        const y = rowScreenY(r, v.scrollTop);
        if (y + r.h < lo || y > hi) continue;
        const x = 10 + r.indent * 14, hovered = v.hoverRow === r;
        if (r.kind === "group") {
          g.font = BOLD; g.fillStyle = THEME.text;
          g.fillText(this.fitText(`${r.collapsed ? "▸" : "▾"} ${r.label}`, LABEL_W - 12), 6, y + r.h / 2);
        } else {
          g.font = FONT; g.fillStyle = r.kind === "counter" ? THEME.muted : THEME.text;
          const LH = r.kind === "track" ? r.track.laneH : 0, ly = r.kind === "track" ? y + TRACK_PAD + LH / 2 : y + r.h / 2;
          const room = LABEL_W - x - 6 - (r.kind === "track" ? PIN_W : 0);
          g.fillText(this.fitText(r.label, room), x, ly);
          if (r.kind === "track" && r.track.nLanes > 1 && r.h > 2 * LH) {
            g.fillStyle = THEME.muted;
            g.fillText(`${r.track.nLanes} lanes`, x, ly + LH);
          }
          // the pin: shown on pinned tracks and on the one under the mouse; a click on it pins or unpins
          if (r.kind === "track" && (r.pinned || hovered)) {
            g.fillStyle = r.pinned ? THEME.accent : THEME.muted;
            g.fillText(r.pinned ? "◆" : "◇", LABEL_W - PIN_W, ly);
          }
        }
        if (hovered) { g.fillStyle = THEME.rowHover; g.fillRect(0, y, LABEL_W, r.h); }
        g.fillStyle = THEME.grid; g.fillRect(0, y + r.h - 1, LABEL_W, 1);
      }
      g.restore();
    }
    if (P) { g.fillStyle = THEME.border; g.fillRect(0, HEADER_H + P - 1, LABEL_W, 2); }
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
    // markers: a flag and a label under the ticks; a label that would run off the right edge goes left of its flag
    for (const mk of v.model.markers) {
      const x = LABEL_W + Math.round((mk.t - v.vp.t0) * k);
      if (x < LABEL_W - 4 || x > this.width + 4) continue;
      g.fillStyle = THEME.marker;
      g.beginPath(); g.moveTo(x, HEADER_H - 2); g.lineTo(x - 4, 22); g.lineTo(x + 4, 22); g.closePath(); g.fill();
      const w = g.measureText(mk.name).width;
      g.fillText(mk.name, x + 6 + w > this.width - 2 ? Math.max(LABEL_W + 2, x - 6 - w) : x + 6, 30);
    }
    // the area selection's length, centred over it
    if (v.area) {
      const x0 = LABEL_W + (v.area.t0 - v.vp.t0) * k, x1 = LABEL_W + (v.area.t1 - v.vp.t0) * k, s = formatDuration(v.area.t1 - v.area.t0);
      const w = g.measureText(s).width + 10, cx = Math.max(LABEL_W + w / 2, Math.min((x0 + x1) / 2, this.width - w / 2));
      g.fillStyle = THEME.areaEdge; g.fillRect(x0, HEADER_H - 4, Math.max(x1 - x0, 1), 3);
      g.fillStyle = THEME.accent; g.fillRect(cx - w / 2, 22, w, 15);
      g.fillStyle = THEME.spanText; g.fillText(s, cx - w / 2 + 5, 30);
    }
    // the time at the cursor, over the tick labels, exact to the zoom (a pixel's worth of ns)
    if (v.cursorT !== null && v.cursorT !== undefined) {
      const x = LABEL_W + (v.cursorT - v.vp.t0) * k, s = formatTick(v.cursorT, 1 / k, Math.max(Math.abs(v.vp.t1), 1));
      const w = g.measureText(s).width + 10, bx = Math.max(LABEL_W, Math.min(x - w / 2, this.width - w));
      g.fillStyle = THEME.cursorBg; g.fillRect(bx, 3, w, 16);
      g.fillStyle = THEME.text; g.fillText(s, bx + 5, 11);
      g.fillStyle = THEME.cursor; g.fillRect(Math.round(x), 19, 1, HEADER_H - 19);
    }
    g.restore();
  }
}
