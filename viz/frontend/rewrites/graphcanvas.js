// The UOp graph on a 2D canvas: culling to the visible rectangle, level of detail by zoom (text only when it
// is readable; plain rectangles and no arrowheads when zoomed out), pan / zoom / fit, a minimap for large
// graphs, hit testing. It draws what it is given: the view decides what is highlighted. The overlays (minimap,
// legend) step aside when they would cover the current match: to the other corner, else folded away.
import { opColor, FONT_PX, LINE_H, PAD_X, PAD_Y } from "./graph.js";

const STATE = { same: 0, added: 1, removed: 2 };
const COLORS = {
  edge: "#56606f", edgeRemoved: "#e5534b", edgeAdded: "#57ab5a", edgeSel: "#e6edf3",
  added: "#57ab5a", removed: "#e5534b", focus: "#e0b93b", selected: "#ffffff", hit: "#f0883e", related: "#9fb3d1",
  text: "#e6edf3", textDim: "#aab4c3", bg: "#14171c",
};
const TEXT_MIN_ZOOM = 0.42, ROUND_MIN_ZOOM = 0.6, ARROW_MIN_ZOOM = 0.55;
const MINIMAP_MIN_NODES = 40;
/** The zoom of a first view: node text at 11 CSS px (FONT_PX), above the 10 px a reader needs. */
export const READ_ZOOM = 1;
/** The least zoom at which node text still reads (10 CSS px): a graph that fits at this zoom is fitted. */
export const MIN_READ_ZOOM = 10 / FONT_PX;
const MAX_FIT_ZOOM = 1.25;

export class GraphCanvas {
  constructor(canvas, minimap, { onSelect = () => {}, onHover = () => {}, onOpen = () => false, onCamera = () => {}, tip = null, legend = null } = {}) {
    Object.assign(this, { canvas, minimap, onSelect, onHover, onOpen, onCamera, tip, legend });
    this.ctx = canvas.getContext("2d", { alpha: false });
    this.mctx = minimap.getContext("2d");
    this.cam = { x: 0, y: 0, k: 1 };
    this.n = 0;
    this.marks = { selected: null, hits: new Set(), focus: new Set(), related: new Set() };
    this.dirty = false;
    this.frames = 0;
    this.hover = -1;
    this.resize();
    // a pane that changes size (the code pane opens, a splitter moves) keeps what was in its middle there
    new ResizeObserver(() => { const c = this.getCamera(); this.resize(); if (this.n) this.setCamera(c); else this.request(); }).observe(canvas.parentElement);
    this.bindInput();
  }

  resize() {
    const r = this.canvas.parentElement.getBoundingClientRect();
    this.dpr = window.devicePixelRatio || 1;
    this.cw = Math.max(1, r.width); this.ch = Math.max(1, r.height);
    this.canvas.width = Math.round(this.cw * this.dpr); this.canvas.height = Math.round(this.ch * this.dpr);
    this.canvas.style.width = `${this.cw}px`; this.canvas.style.height = `${this.ch}px`;
  }

  /**
   * Show a laid-out graph. view: {nodes: [{id, op, lines, width, height, state}]}, r: layout result.
   * camera: "keep" (same place: stepping through one rewrite), "fit", {x, y, k} (centre and zoom, as the URL
   * keeps them), or {node, focus}: center on `node` if it is drawn, else fit if that leaves text readable
   * (MIN_READ_ZOOM), else read `focus` (an id, or ids: the first drawn) at READ_ZOOM.
   */
  setGraph(view, r, camera = "fit") {
    const nodes = view.nodes, n = nodes.length;
    this.view = view; this.r = r; this.n = n;
    this.ids = nodes.map((u) => u.id);
    this.index = new Map(this.ids.map((id, i) => [id, i]));
    this.W = Float64Array.from(nodes, (u) => u.width); this.H = Float64Array.from(nodes, (u) => u.height);
    this.state = Uint8Array.from(nodes, (u) => STATE[u.state] ?? 0);
    this.fill = nodes.map((u) => opColor(u.op));
    const m = r.edgeFrom.length;
    this.edgeBox = boxes(r.points, r.pointStart, m);
    this.busBox = boxes(r.busPoints, r.busPointStart, n);
    this.edgeState = new Uint8Array(m);
    for (let e = 0; e < m; e++) {
      const a = r.edgeFrom[e], b = r.edgeTo[e];
      if (a < 0) continue;
      this.edgeState[e] = this.state[a] === 2 || this.state[b] === 2 ? 2 : this.state[b] === 1 || this.state[a] === 1 ? 1 : 0;
    }
    this.renderMinimap();
    if (camera === "fit") this.fit(false);
    else if (camera && Number.isFinite(camera.k)) this.setCamera(camera);
    else if (camera && typeof camera === "object" && !(camera.node !== undefined && this.centerOn(camera.node, READ_ZOOM, true))) {
      this.fit(false);
      const focus = [].concat(camera.focus ?? []);  // the first of these that is drawn
      if (this.cam.k < MIN_READ_ZOOM && !focus.some((id) => this.centerOn(id, READ_ZOOM, true))) this.setCamera({ ...this.getCamera(), k: READ_ZOOM });
    }
    this.request();
  }

  /** The camera as the URL keeps it: the view's centre in graph units and the zoom. */
  getCamera() { return { x: this.cam.x + this.cw / 2 / this.cam.k, y: this.cam.y + this.ch / 2 / this.cam.k, k: this.cam.k }; }

  setCamera({ x, y, k }) {
    this.cam.k = Math.min(4, Math.max(0.02, k));
    this.cam.x = x - this.cw / 2 / this.cam.k; this.cam.y = y - this.ch / 2 / this.cam.k;
    this.request();
  }

  // a move the user made: the view writes it to the URL
  moved() { this.request(); this.onCamera(this.getCamera()); }

  clear() { this.n = 0; this.view = null; this.r = null; this.minimap.hidden = true; this.request(); }

  setMarks(marks) { this.marks = { ...this.marks, ...marks }; this.request(); }

  /** The whole graph in view (at most MAX_FIT_ZOOM); `user`: a move the user asked for (the URL keeps it). */
  fit(user = true) {
    if (!this.r || !this.n) return;
    // the legend's band at the top stays clear of the graph
    const b = this.r.bounds, pad = 24, top = this.legend && !this.legend.hidden ? Math.max(pad, this.legend.offsetTop + this.legend.offsetHeight + 10) : pad;
    const k = Math.min((this.cw - 2 * pad) / Math.max(1, b.x1 - b.x0), (this.ch - top - pad) / Math.max(1, b.y1 - b.y0), MAX_FIT_ZOOM);
    this.cam.k = Math.max(k, 0.02);
    this.cam.x = (b.x0 + b.x1) / 2 - this.cw / 2 / this.cam.k;
    this.cam.y = (b.y0 + b.y1) / 2 - (top + (this.ch - top - pad) / 2) / this.cam.k;
    if (user) this.moved(); else this.request();
  }

  /**
   * Center the view on node `id` (zooming in to minZoom if needed; `exact`: at minZoom); false if it is not
   * drawn.
   */
  centerOn(id, minZoom = READ_ZOOM, exact = false) {
    if (id === null || id === undefined) return false;
    const i = this.index?.get(id);
    if (i === undefined || !(this.r.x[i] === this.r.x[i])) return false;
    this.cam.k = exact ? minZoom : Math.max(this.cam.k, minZoom);
    this.cam.x = this.r.x[i] - this.cw / 2 / this.cam.k;
    this.cam.y = this.r.y[i] - this.ch / 2 / this.cam.k;
    this.request();
    return true;
  }

  /** Node `id`'s center in canvas pixels, or null if it is not drawn. */
  screenPos(id) {
    const i = this.index?.get(id);
    if (i === undefined || !(this.r.x[i] === this.r.x[i])) return null;
    return [(this.r.x[i] - this.cam.x) * this.cam.k, (this.r.y[i] - this.cam.y) * this.cam.k];
  }

  /** Is node `id` inside the visible rectangle? */
  isVisible(id) {
    const i = this.index?.get(id);
    if (i === undefined) return false;
    const { x, y, k } = this.cam, sx = (this.r.x[i] - x) * k, sy = (this.r.y[i] - y) * k;
    return sx >= 0 && sy >= 0 && sx <= this.cw && sy <= this.ch;
  }

  request() {
    if (this.dirty) return;
    this.dirty = true;
    requestAnimationFrame(() => { this.dirty = false; this.draw(); });
  }

  toWorld(px, py) { return [this.cam.x + px / this.cam.k, this.cam.y + py / this.cam.k]; }

  /** Index of the node under screen point (px, py), or -1. */
  hitTest(px, py) {
    if (!this.n) return -1;
    const [wx, wy] = this.toWorld(px, py), { x, y } = this.r;
    for (let i = this.n - 1; i >= 0; i--) {
      if (Math.abs(wx - x[i]) <= this.W[i] / 2 && Math.abs(wy - y[i]) <= this.H[i] / 2) return i;
    }
    return -1;
  }

  draw() {
    const c = this.ctx, { k } = this.cam, dpr = this.dpr;
    this.frames++;
    c.setTransform(1, 0, 0, 1, 0, 0);
    c.fillStyle = COLORS.bg;
    c.fillRect(0, 0, this.canvas.width, this.canvas.height);
    if (!this.n) { this.minimap.hidden = true; return; }
    c.setTransform(dpr * k, 0, 0, dpr * k, -this.cam.x * dpr * k, -this.cam.y * dpr * k);
    const vx0 = this.cam.x, vy0 = this.cam.y, vx1 = vx0 + this.cw / k, vy1 = vy0 + this.ch / k;
    const inView = (bx, i) => !(bx[4 * i] > vx1 || bx[4 * i + 2] < vx0 || bx[4 * i + 1] > vy1 || bx[4 * i + 3] < vy0);
    const r = this.r, sel = this.marks.selected === null ? -1 : this.index.get(this.marks.selected) ?? -1;

    const visible = [], seen = this.seen?.length === this.n ? this.seen.fill(0) : (this.seen = new Uint8Array(this.n));
    const { x, y } = r, W = this.W, H = this.H;
    for (let i = 0; i < this.n; i++) {
      if (!(x[i] === x[i])) continue;
      if (x[i] + W[i] / 2 < vx0 || x[i] - W[i] / 2 > vx1 || y[i] + H[i] / 2 < vy0 || y[i] - H[i] / 2 > vy1) continue;
      visible.push(i);
      seen[i] = 1;
    }

    // edges: one path per style; the selected node's edges on top. Zoomed in, an edge that passes through
    // the view with neither end in it is drawn faint: in wide graphs such edges would fill whole bands.
    const paths = [new Path2D(), new Path2D(), new Path2D()], selPath = new Path2D(), faint = new Path2D();
    const fade = k >= TEXT_MIN_ZOOM;
    const arrows = [[], [], []];
    // a bus (one source's long edges) that runs through the whole view from a source out of it is faint too: it
    // would otherwise join its neighbours in ribbons; its last leg to a user in view is drawn plainly
    const lr = r.dir === "LR", bb = this.busBox;
    for (let s = 0; s < this.n; s++) {
      if (r.busPointStart[s + 1] > r.busPointStart[s] && inView(bb, s)) {
        const through = fade && s !== sel && this.state[s] === 0 && !seen[s] && (lr ? bb[4 * s] < vx0 && bb[4 * s + 2] > vx1 : bb[4 * s + 1] < vy0 && bb[4 * s + 3] > vy1);
        polyline(s === sel ? selPath : through ? faint : paths[this.state[s] === 2 ? 2 : 0], r.busPoints, r.busPointStart[s], r.busPointStart[s + 1]);
      }
    }
    const m = r.edgeFrom.length;
    for (let e = 0; e < m; e++) {
      if (r.edgeFrom[e] < 0 || !inView(this.edgeBox, e)) continue;
      const onSel = r.edgeFrom[e] === sel || r.edgeTo[e] === sel;
      const through = fade && !onSel && this.edgeState[e] === 0 && !seen[r.edgeFrom[e]] && !seen[r.edgeTo[e]];
      polyline(onSel ? selPath : through ? faint : paths[this.edgeState[e]], r.points, r.pointStart[e], r.pointStart[e + 1]);
      if (through) continue;
      if (k >= ARROW_MIN_ZOOM) { const q = r.pointStart[e + 1]; arrows[this.edgeState[e]].push(r.points[q - 2], r.points[q - 1], r.points[q - 4], r.points[q - 3]); }
    }
    c.lineWidth = (k < TEXT_MIN_ZOOM ? 0.8 : 1.2) / k;
    c.strokeStyle = COLORS.edge;
    c.globalAlpha = 0.15;
    c.stroke(faint);
    c.globalAlpha = 1;
    const edgeColors = [COLORS.edge, COLORS.edgeAdded, COLORS.edgeRemoved];
    for (let s = 0; s < 3; s++) {
      c.strokeStyle = edgeColors[s];
      c.setLineDash(s === 2 ? [5 / k, 4 / k] : []);
      c.stroke(paths[s]);
      if (arrows[s].length) {
        c.fillStyle = edgeColors[s];
        const a = new Path2D(), pts = arrows[s];
        for (let j = 0; j < pts.length; j += 4) {  // tip, then the point the edge comes from: the head points along it
          const x = pts[j], y = pts[j + 1], d = Math.hypot(x - pts[j + 2], y - pts[j + 3]) || 1, ux = (x - pts[j + 2]) / d, uy = (y - pts[j + 3]) / d;
          a.moveTo(x, y); a.lineTo(x - 7 * ux + 4 * uy, y - 7 * uy - 4 * ux); a.lineTo(x - 7 * ux - 4 * uy, y - 7 * uy + 4 * ux); a.closePath();
        }
        c.fill(a);
      }
    }
    c.setLineDash([]);
    if (sel >= 0) { c.lineWidth = 2.4 / k; c.strokeStyle = COLORS.edgeSel; c.stroke(selPath); }

    // nodes: fills batched by colour, then outlines by mark, then text
    const round = k >= ROUND_MIN_ZOOM;
    const byFill = new Map();
    for (const i of visible) {
      const key = this.fill[i] + (this.state[i] === 2 ? "r" : "");
      let p = byFill.get(key);
      if (!p) byFill.set(key, (p = new Path2D()));
      shape(p, x[i] - W[i] / 2, y[i] - H[i] / 2, W[i], H[i], round);
    }
    for (const [key, p] of byFill) {
      c.globalAlpha = key.endsWith("r") ? 0.45 : 1;
      c.fillStyle = key.replace(/r$/, "");
      c.fill(p);
    }
    c.globalAlpha = 1;
    const { hits, focus, related } = this.marks;
    const ring = (i, color, width, dash = null) => {
      const p = new Path2D();
      const g = width / 2 / k + 1 / k;
      shape(p, x[i] - W[i] / 2 - g, y[i] - H[i] / 2 - g, W[i] + 2 * g, H[i] + 2 * g, round);
      c.strokeStyle = color; c.lineWidth = width / k; c.setLineDash(dash ? dash.map((d) => d / k) : []);
      c.stroke(p);
    };
    for (const i of visible) {
      const id = this.ids[i];
      if (this.state[i] === 1) ring(i, COLORS.added, 2.5);
      else if (this.state[i] === 2) ring(i, COLORS.removed, 2.5, [5, 3]);
      if (focus.has(id)) ring(i, COLORS.focus, 2, [2, 2]);
      if (hits.has(id)) ring(i, COLORS.hit, 2.5);
      if (related.has(id)) ring(i, COLORS.related, 1.5);
      if (i === this.hover && i !== sel) ring(i, COLORS.related, 1);
    }
    c.setLineDash([]);
    if (sel >= 0 && x[sel] === x[sel]) ring(sel, COLORS.selected, 3);

    if (k >= TEXT_MIN_ZOOM) {
      c.textBaseline = "top";
      const bold = `600 ${FONT_PX}px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace`, normal = `${FONT_PX}px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace`;
      for (const i of visible) {
        const lines = this.view.nodes[i].lines, x0 = x[i] - W[i] / 2 + PAD_X, y0 = y[i] - H[i] / 2 + PAD_Y + 1;
        c.globalAlpha = this.state[i] === 2 ? 0.7 : 1;
        const parts = this.view.nodes[i].parts;  // a kernel's name, coloured by axis kind (kernelname.js)
        for (let j = 0; j < lines.length; j++) {
          c.font = j ? normal : bold;
          c.fillStyle = j ? COLORS.textDim : COLORS.text;
          if (j || !parts) { c.fillText(lines[j], x0, y0 + j * LINE_H); continue; }
          let px = x0;
          for (const p of parts) { c.fillStyle = p.color ?? COLORS.text; c.fillText(p.text, px, y0); px += c.measureText(p.text).width; }
        }
      }
      c.globalAlpha = 1;
    }
    this.drawMinimapView();
    this.placeOverlays();
  }

  // The minimap (bottom right) and the legend (top left) never cover the match or the selection: each moves to
  // its other place (bottom left; bottom), else folds away until the camera moves on.
  placeOverlays() {
    const keep = [...this.marks.focus];
    if (this.marks.selected !== null) keep.push(this.marks.selected);
    const boxes = [];
    for (const id of keep) {
      const i = this.index.get(id);
      if (i === undefined || !(this.r.x[i] === this.r.x[i])) continue;
      const [sx, sy] = [(this.r.x[i] - this.cam.x) * this.cam.k, (this.r.y[i] - this.cam.y) * this.cam.k];
      const hw = (this.W[i] / 2) * this.cam.k + 6, hh = (this.H[i] / 2) * this.cam.k + 6;
      boxes.push([sx - hw, sy - hh, sx + hw, sy + hh]);
    }
    const hit = (x0, y0, x1, y1) => boxes.some((b) => b[0] < x1 && b[2] > x0 && b[1] < y1 && b[3] > y0);
    const place = (el, spots) => {
      if (!el || el.hidden) return;
      const w = el.offsetWidth, h = el.offsetHeight;  // folded is visibility: hidden, so it keeps its size
      const at = spots.find(([name, x, y]) => !hit(x(w), y(h), x(w) + w, y(h) + h))?.[0] ?? "folded";
      if (el.dataset.place !== at) el.dataset.place = at;
    };
    const { cw, ch } = this, m = 10;
    place(this.minimap, [["", (w) => cw - m - w, (h) => ch - m - h], ["left", () => m, (h) => ch - m - h]]);
    if (this.legend) place(this.legend, [["", () => m, () => 8], ["bottom", () => m, (h) => ch - 8 - h]]);
  }

  // ---- minimap: the whole graph drawn once per graph, the visible rectangle per frame
  renderMinimap() {
    const big = this.n >= MINIMAP_MIN_NODES;
    this.minimap.hidden = !big;
    if (!big) return;
    const mw = this.minimap.clientWidth || 200, mh = this.minimap.clientHeight || 150, dpr = this.dpr;
    this.minimap.width = Math.round(mw * dpr); this.minimap.height = Math.round(mh * dpr);
    const b = this.r.bounds, s = Math.min(mw / Math.max(1, b.x1 - b.x0), mh / Math.max(1, b.y1 - b.y0));
    this.mini = { s, ox: (mw - (b.x1 - b.x0) * s) / 2 - b.x0 * s, oy: (mh - (b.y1 - b.y0) * s) / 2 - b.y0 * s, mw, mh };
    const off = this.miniImage = new OffscreenCanvas(this.minimap.width, this.minimap.height);
    const c = off.getContext("2d");
    c.setTransform(dpr * s, 0, 0, dpr * s, this.mini.ox * dpr, this.mini.oy * dpr);
    const { x, y } = this.r;
    const byColor = new Map();
    for (let i = 0; i < this.n; i++) {
      if (!(x[i] === x[i])) continue;
      const col = this.state[i] === 1 ? COLORS.added : this.state[i] === 2 ? COLORS.removed : this.fill[i];
      let p = byColor.get(col);
      if (!p) byColor.set(col, (p = new Path2D()));
      const w = Math.max(this.W[i], 2 / s), h = Math.max(this.H[i], 2 / s);
      p.rect(x[i] - w / 2, y[i] - h / 2, w, h);
    }
    for (const [col, p] of byColor) { c.fillStyle = col; c.fill(p); }
  }

  drawMinimapView() {
    if (this.minimap.hidden || !this.mini) return;
    const c = this.mctx, dpr = this.dpr, { s, ox, oy } = this.mini;
    c.setTransform(1, 0, 0, 1, 0, 0);
    c.clearRect(0, 0, this.minimap.width, this.minimap.height);
    c.drawImage(this.miniImage, 0, 0);
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.strokeStyle = "#e6edf3"; c.lineWidth = 1;
    const { x, y, k } = this.cam;
    c.strokeRect(ox + x * s, oy + y * s, (this.cw / k) * s, (this.ch / k) * s);
  }

  // ---- input
  bindInput() {
    const cv = this.canvas;
    let drag = null;
    cv.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      cv.setPointerCapture(e.pointerId);
      drag = { x: e.offsetX, y: e.offsetY, cx: this.cam.x, cy: this.cam.y, moved: false };
    });
    cv.addEventListener("pointermove", (e) => {
      if (drag) {
        const dx = e.offsetX - drag.x, dy = e.offsetY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (drag.moved) { this.cam.x = drag.cx - dx / this.cam.k; this.cam.y = drag.cy - dy / this.cam.k; this.moved(); }
        return;
      }
      const i = this.hitTest(e.offsetX, e.offsetY);
      if (i !== this.hover) {
        this.hover = i;
        cv.style.cursor = i >= 0 ? "pointer" : "grab";
        this.onHover(i >= 0 ? this.ids[i] : null);
        this.showTip(i, e.offsetX, e.offsetY);
        this.request();
      }
    });
    cv.addEventListener("pointerleave", () => { if (this.hover >= 0) { this.hover = -1; this.showTip(-1); this.request(); } });
    cv.addEventListener("pointerup", (e) => {
      if (!drag) return;
      const moved = drag.moved;
      drag = null;
      if (!moved) { const i = this.hitTest(e.offsetX, e.offsetY); this.onSelect(i >= 0 ? this.ids[i] : null); }
    });
    cv.addEventListener("wheel", (e) => {
      e.preventDefault();
      const f = Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015));
      this.zoomAt(e.offsetX, e.offsetY, f);
    }, { passive: false });
    cv.addEventListener("dblclick", (e) => {
      const i = this.hitTest(e.offsetX, e.offsetY);
      if (i < 0) this.fit();
      else if (!this.onOpen(this.ids[i])) { this.centerOn(this.ids[i], 1); this.moved(); }  // a node that opens (a call) opens, others centre
    });
    let mdrag = false;
    const miniMove = (e) => {
      if (!this.mini) return;
      const { s, ox, oy } = this.mini, wx = (e.offsetX - ox) / s, wy = (e.offsetY - oy) / s;
      this.cam.x = wx - this.cw / 2 / this.cam.k; this.cam.y = wy - this.ch / 2 / this.cam.k;
      this.moved();
    };
    this.minimap.addEventListener("pointerdown", (e) => { mdrag = true; this.minimap.setPointerCapture(e.pointerId); miniMove(e); });
    this.minimap.addEventListener("pointermove", (e) => { if (mdrag) miniMove(e); });
    this.minimap.addEventListener("pointerup", () => { mdrag = false; });
  }

  zoomAt(px, py, f) {
    const k = Math.min(4, Math.max(0.02, this.cam.k * f));
    const [wx, wy] = this.toWorld(px, py);
    this.cam.k = k;
    this.cam.x = wx - px / k; this.cam.y = wy - py / k;
    this.moved();
  }

  /** Move the camera by (dx, dy) in graph units, so that a graph moved by the same stays put on screen. */
  shiftCamera(dx, dy) { this.cam.x += dx; this.cam.y += dy; this.request(); }

  pan(dx, dy) { this.cam.x += dx / this.cam.k; this.cam.y += dy / this.cam.k; this.moved(); }

  showTip(i, px = 0, py = 0) {
    if (!this.tip) return;
    if (i < 0 || this.cam.k >= TEXT_MIN_ZOOM) { this.tip.hidden = true; return; }
    const u = this.view.nodes[i];
    this.tip.textContent = `#${u.id} ${u.lines.join("  ")}`;
    this.tip.style.left = `${px + 12}px`; this.tip.style.top = `${py + 12}px`;
    this.tip.hidden = false;
  }
}

// bounding boxes [x0, y0, x1, y1] of polylines i = 0..count-1 in pts[start[i]..start[i+1])
function boxes(pts, start, count) {
  const out = new Float32Array(4 * count);
  for (let i = 0; i < count; i++) {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let j = start[i]; j < start[i + 1]; j += 2) {
      const px = pts[j], py = pts[j + 1];
      if (px < x0) x0 = px; if (px > x1) x1 = px; if (py < y0) y0 = py; if (py > y1) y1 = py;
    }
    out[4 * i] = x0; out[4 * i + 1] = y0; out[4 * i + 2] = x1; out[4 * i + 3] = y1;
  }
  return out;
}

function polyline(path, pts, a, b) {
  if (b - a < 4) return;
  path.moveTo(pts[a], pts[a + 1]);
  for (let j = a + 2; j < b; j += 2) path.lineTo(pts[j], pts[j + 1]);
}

function shape(p, x, y, w, h, round) {
  if (round) p.roundRect(x, y, w, h, 5);
  else p.rect(x, y, w, h);
}
