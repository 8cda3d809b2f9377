// The timeline view: every span of a run on tracks per device/queue, host and Tensor calls, counters and markers,
// drawn on a canvas 2D; select a span for its details (a kernel links to its rewrites), drag an area for a table
// of what it holds, and read the run's kernel summary. Live runs grow while the script runs.
//
// ## Contract: mountTimeline(el, ctx) -> handle
//
// el:  an empty container element; the view fills it (and sizes itself to it: give it a height).
// ctx: {
//   runId: number                      the run to show (GET /api/runs ids)
//   api?: object                       the endpoint helpers of ../common/api.js (`api`); default: that module.
//                                      Used: tracks(run), spans(run, track), span(run, track, i), counter(run, id),
//                                      contexts(run), kernel(run, id), runs(), flows(run).
//   navigate(state): void              open another view. The timeline calls it with
//                                      {view: "rewrites", run, ctx: <kernel's codegen context id>, kernel: <kernel id>, code: 1}
//   state?: object                     the URL's timeline params: t0, t1 (viewport, ns from the run's start,
//                                      integers as strings or numbers), span ("<track id>:<index>"), tab
//                                      ("kernels" | "details"), kq (the kernel filter), tq (the span search). All optional.
//   setState?(patch): void             the timeline reports changes of those params (null deletes a key);
//                                      the shell writes them into the URL (replaceState, not a new history entry).
//   subscribe?(fn): () => void         live messages of /ws as LiveClient delivers them ({type: "events"|"runs", ...,
//                                      gap?}); returns an unsubscribe function. Without it the view shows the run as
//                                      it was when mounted.
// }
// handle: {
//   setState(params)                   the URL changed from outside (back button, a link): apply viewport/span/tab
//   resize()                           re-measure (also done by a ResizeObserver)
//   destroy()                          remove listeners, stop timers, empty el
//   ready: Promise                     resolves when every track's spans are drawn
//   debug: {model, viewport(), stats, spanPoint(track, index)}  for tests and bench: stats.draws [{ms, rects}],
//                                      stats.tracks [{id, n, bytes, arrivedMs, drawnMs}], stats.firstDrawMs, stats.dataMs,
//                                      stats.readyMs (ms since mount); spanPoint: client {x, y} of a span's visible middle
// }
// The handle is also el.timeline, and el.dataset.state is "loading" until every track is drawn, then "ready".
// Keys (while the view is visible and no text field has focus): W/S zoom at the cursor, A/D pan, F fit the
// selection (or everything), Esc clears the selection, / finds spans, N / shift+N step through the matches.
// Mouse: wheel zooms at the cursor (shift+wheel or a sideways wheel pans; over the track names it scrolls), or
// Perfetto's way when chosen (ctrl+wheel zooms, shift+wheel pans, the wheel scrolls the tracks); drag pans,
// shift+drag or a drag in the ruler selects an area, click selects a span, double-click zooms to it, a click on a
// group name folds it, on a track's pin (right of its name) pins it to the top. The overview strip moves the window.
// Settings (wheel habit, all flows) are kept in localStorage["tinyviz.timeline"].

import { api as defaultApi } from "../common/api.js";
import { decodeSpans } from "./chunk.js";
import { TimelineModel, TRACK_PAD } from "./model.js";
import { Renderer, LABEL_W, HEADER_H, PIN_W, rowScreenY, formatCounter } from "./render.js";
import { clamp, fit, zoomAt, pan, keyMotion, wheelFactor, follow, timeAt, scaleOf } from "./viewport.js";
import { groupByName, kernelSummary, counterStats, counterAt, nameMatcher, searchSpans, stepHit } from "./aggregate.js";
import { busyBins, drawOverview } from "./overview.js";
import { formatDuration } from "./timefmt.js";
import { THEME, THEME_VARS } from "./colors.js";
import { h, spanDetails, areaTable, summaryTable } from "./panels.js";

const KEYS = { w: ["zoom", 1], s: ["zoom", -1], a: ["pan", -1], d: ["pan", 1] };
const SETTINGS_KEY = "tinyviz.timeline";

function loadSettings() {
  try { return { wheel: "zoom", allFlows: false, ...JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? "{}") }; }
  catch { return { wheel: "zoom", allFlows: false }; }
}

export function mountTimeline(el, ctx) {
  const view = new TimelineView(el, ctx);
  el.timeline = view.handle;  // tests and bench find the view through its element
  return view.handle;
}

class TimelineView {
  constructor(el, ctx) {
    this.el = el; this.ctx = ctx; this.run = ctx.runId; this.api = ctx.api ?? defaultApi;
    this.model = null; this.vp = { t0: 0, t1: 1 };
    this.selected = null; this.hover = null; this.area = null; this.highlight = null;
    this.following = false; this.live = false;
    this.keys = { zoom: 0, pan: 0 }; this.held = new Set(); this.mouseX = this.mouseAt = null; this.hoverRow = null;
    this.settings = loadSettings();
    this.search = { query: "", mask: null, hits: [], cur: -1 };
    this.maskFor = null; this.mask = null;
    this.areaSort = { key: "total", dir: -1 };
    this.summaryState = { filter: String(ctx.state?.kq ?? ""), sort: { key: "total", dir: -1 } };
    this.summary = null; this.summaryDirty = true;
    this.stats = { draws: [], tracks: [], firstDrawMs: null, dataMs: null, readyMs: null, mountedAt: performance.now() };
    this.disposers = [];
    this.build();
    this.handle = {
      setState: (p) => this.applyState(p ?? {}),
      resize: () => this.resize(),
      destroy: () => this.destroy(),
      ready: null,
      debug: { model: null, viewport: () => ({ ...this.vp }), stats: this.stats, view: this, spanPoint: (t, i) => this.spanPoint(t, i) },
    };
    this.handle.ready = this.load().catch(e => { this.status(`could not load the timeline: ${e.message}`, true); throw e; });
    this.handle.ready.catch(() => {});
  }

  // *** DOM ***

  build() {
    const el = this.el;
    el.classList.add("tl");
    el.dataset.state = "loading";
    this.canvas = h("canvas", { class: "tl-canvas", tabindex: "0", "aria-label": "timeline" });
    this.spacer = h("div", { class: "tl-spacer" });
    this.tip = h("div", { class: "tl-tip", hidden: true });
    this.scroller = h("div", { class: "tl-main" }, this.canvas, this.spacer);
    this.followBox = h("input", { type: "checkbox", class: "tl-follow" });
    this.followLabel = h("label", { class: "tl-followlabel", hidden: true, title: "keep the newest events in view while the run is live" }, this.followBox, " follow newest");
    this.statusEl = h("span", { class: "tl-status" });
    this.searchBox = h("input", { class: "tl-search", type: "search", placeholder: "find spans: name or /regex/ ( / )", spellcheck: "false",
      "aria-label": "find spans" });
    this.hitsEl = h("span", { class: "tl-hits" });
    this.flowsBox = h("input", { type: "checkbox", class: "tl-allflows" });
    this.flowsBox.checked = !!this.settings.allFlows;
    this.wheelSel = h("select", { class: "tl-wheel", title: "what the mouse wheel does" },
      h("option", { value: "zoom" }, "wheel zooms"), h("option", { value: "perfetto" }, "wheel scrolls (Perfetto)"));
    this.wheelSel.value = this.settings.wheel === "perfetto" ? "perfetto" : "zoom";
    const bar = h("div", { class: "tl-bar" },
      h("button", { class: "tl-btn", title: "fit everything (F)", onclick: () => this.fitAll() }, "Fit"),
      h("button", { class: "tl-btn", title: "zoom in (W)", onclick: () => this.setViewport(zoomAt(this.vp, 2)) }, "+"),
      h("button", { class: "tl-btn", title: "zoom out (S)", onclick: () => this.setViewport(zoomAt(this.vp, 0.5)) }, "−"),
      this.searchBox,
      h("button", { class: "tl-btn tl-prev", title: "previous match (shift+N)", onclick: () => this.stepSearch(-1) }, "‹"),
      h("button", { class: "tl-btn tl-next", title: "next match (N)", onclick: () => this.stepSearch(1) }, "›"),
      this.hitsEl,
      h("label", { class: "tl-opt", title: "draw every flow arrow, not only the selected span's" }, this.flowsBox, " all flows"),
      this.wheelSel,
      this.followLabel, this.statusEl,
      h("span", { class: "tl-help" }, "W/S zoom · A/D pan · / find · N next · shift-drag select · F fit · ? keys"));
    this.overview = h("canvas", { class: "tl-overview", title: "the whole run: click or drag to move the window" });
    this.tabs = { details: h("button", { class: "tl-tab", onclick: () => this.showTab("details") }, "Selection"),
      kernels: h("button", { class: "tl-tab", onclick: () => this.showTab("kernels") }, "Kernels") };
    this.details = h("div", { class: "tl-pane tl-details" }, h("p", { class: "tl-muted" }, "Click a span for its details, or shift-drag to sum an area."));
    this.kernelsPane = h("div", { class: "tl-pane tl-kernels" });
    this.split = h("div", { class: "tl-split", title: "drag to resize" });
    this.bottom = h("div", { class: "tl-bottom" }, h("div", { class: "tl-tabs" }, this.tabs.details, this.tabs.kernels), this.details, this.kernelsPane);
    el.replaceChildren(bar, this.overview, this.scroller, this.split, this.bottom, this.tip);
    this.renderer = new Renderer(this.canvas);
    const css = getComputedStyle(el);
    for (const [key, name] of Object.entries(THEME_VARS)) { const v = css.getPropertyValue(name).trim(); if (v) THEME[key] = v; }
    this.showTab(this.ctx.state?.tab === "details" ? "details" : "kernels", false);

    const on = (target, type, fn, opts) => { target.addEventListener(type, fn, opts); this.disposers.push(() => target.removeEventListener(type, fn, opts)); };
    on(this.scroller, "scroll", () => this.requestDraw());
    on(this.canvas, "wheel", e => this.onWheel(e), { passive: false });
    on(this.canvas, "pointerdown", e => this.onDown(e));
    on(this.canvas, "pointermove", e => this.onMove(e));
    on(this.canvas, "pointerup", e => this.onUp(e));
    on(this.canvas, "pointerleave", () => { this.mouseX = this.mouseAt = null; this.hoverRow = null; this.setHover(null); this.requestDraw(); });
    // a search over a million spans takes a while: run it when typing pauses (Enter runs it at once)
    on(this.searchBox, "input", () => { clearTimeout(this.searchTimer); this.searchTimer = setTimeout(() => this.setSearch(this.searchBox.value), 150); });
    on(this.searchBox, "keydown", e => {
      if (e.key === "Enter") {
        e.preventDefault();
        if (this.searchBox.value !== this.search.query) { clearTimeout(this.searchTimer); this.setSearch(this.searchBox.value); }
        this.stepSearch(e.shiftKey ? -1 : 1);
      }
      else if (e.key === "Escape") { this.searchBox.value = ""; this.setSearch(""); this.canvas.focus({ preventScroll: true }); }
    });
    on(this.flowsBox, "change", () => { this.settings.allFlows = this.flowsBox.checked; this.saveSettings(); this.requestDraw(); });
    on(this.wheelSel, "change", () => { this.settings.wheel = this.wheelSel.value; this.saveSettings(); });
    on(this.overview, "pointerdown", e => this.onOverview(e, true));
    on(this.overview, "pointermove", e => { if (this.overviewDrag) this.onOverview(e, false); });
    on(this.overview, "pointerup", e => { this.overviewDrag = false; if (this.overview.hasPointerCapture(e.pointerId)) this.overview.releasePointerCapture(e.pointerId); });
    on(this.canvas, "dblclick", e => this.onDblClick(e));
    on(window, "keydown", e => this.onKey(e, true));
    on(window, "keyup", e => this.onKey(e, false));
    on(window, "blur", () => { this.held.clear(); this.keys = { zoom: 0, pan: 0 }; });
    on(this.followBox, "change", () => { this.following = this.followBox.checked; if (this.following) this.followNow(); });
    on(this.split, "pointerdown", e => this.onSplit(e));
    this.ro = new ResizeObserver(() => this.resize());
    this.ro.observe(this.scroller);
    this.disposers.push(() => this.ro.disconnect());
  }

  saveSettings() { try { localStorage.setItem(SETTINGS_KEY, JSON.stringify(this.settings)); } catch { /* private mode: not kept */ } }

  status(text, error = false) { this.statusEl.textContent = text; this.statusEl.classList.toggle("tl-error", error); }

  showTab(tab, report = true) {
    this.tab = tab;
    for (const [k, b] of Object.entries(this.tabs)) b.classList.toggle("active", k === tab);
    this.details.hidden = tab !== "details";
    this.kernelsPane.hidden = tab !== "kernels";
    if (tab === "kernels") this.renderSummary();
    if (report) this.report({ tab });
  }

  resize() {
    const w = this.scroller.clientWidth, hgt = this.scroller.clientHeight;
    if (!w || !hgt) return;
    this.overviewSize = { W: this.overview.clientWidth, H: this.overview.clientHeight };
    this.renderer.resize(w, hgt);
    this.updateSpacer();
    this.requestDraw();
  }

  updateSpacer() {
    const content = HEADER_H + (this.model?.height ?? 0) + 8;
    this.spacer.style.height = `${Math.max(0, content - this.scroller.clientHeight)}px`;
  }

  destroy() {
    this.dead = true;
    for (const d of this.disposers) d();
    this.unsubscribe?.();
    clearTimeout(this.refreshTimer); clearTimeout(this.reportTimer); clearTimeout(this.searchTimer); clearTimeout(this.researchTimer);
    cancelAnimationFrame(this.raf); cancelAnimationFrame(this.keyRaf);
    this.el.replaceChildren();
    this.el.classList.remove("tl");
    delete this.el.timeline;
    delete this.el.dataset.state;
  }

  // *** data ***

  async load() {
    this.status("loading tracks…");
    const meta = await this.api.tracks(this.run);
    if (this.dead) return;
    this.model = this.handle.debug.model = new TimelineModel(meta);
    this.model.layout();
    this.applyState(this.ctx.state ?? {}, true);
    this.resize();
    this.subscribeLive();
    const kernels = this.api.contexts(this.run).then(c => { this.model.setKernels(c.kernels); this.summaryDirty = true; this.renderSummaryLater(); })
      .catch(e => this.status(`kernels not loaded: ${e.message}`, true));
    this.loadFlows();
    const nspans = this.model.tracks.reduce((s, t) => s + (t.meta.n_spans ?? 0), 0);
    this.status(`loading ${nspans.toLocaleString("en-US")} spans…`);
    await Promise.all([...this.model.tracks.map(t => this.loadTrack(t.id)), ...this.model.counters.map(c => this.loadCounter(c.id))]);
    if (this.dead) return;
    this.stats.dataMs = performance.now() - this.stats.mountedAt;
    await kernels;
    this.summaryDirty = true;
    this.renderSummary();
    this.restoreSelection();
    this.drawNow();
    this.stats.firstDrawMs ??= performance.now() - this.stats.mountedAt;
    this.stats.readyMs = performance.now() - this.stats.mountedAt;
    this.el.dataset.state = "ready";
    this.status(this.describe());
  }

  describe() {
    const m = this.model, n = m.tracks.reduce((s, t) => s + (t.chunk?.n ?? 0), 0);
    return `${n.toLocaleString("en-US")} spans on ${m.tracks.length} tracks, ${formatDuration(m.duration)}`;
  }

  async loadTrack(id) {
    const buf = await this.api.spans(this.run, id);
    if (this.dead || !this.model.byId.has(id)) return;
    const arrived = performance.now();
    const chunk = decodeSpans(buf);
    this.model.setChunk(id, chunk);
    this.relayout();
    this.summaryDirty = true; this.binsDirty = true;
    if (this.search.query) this.searchLater();
    if (this.following) this.followNow();
    this.drawNow();
    const drawn = performance.now(), t0 = this.stats.mountedAt;
    this.stats.tracks.push({ id, n: chunk.n, bytes: buf.byteLength, arrivedMs: arrived - t0, drawnMs: drawn - t0 });
    if (this.stats.firstDrawMs === null) this.stats.firstDrawMs = drawn - t0;
  }

  /** Chrome flow arrows (GET /api/runs/{run}/flows); a server without the endpoint just has none. */
  async loadFlows() {
    const list = await this.api.flows(this.run).catch(() => []);
    if (this.dead || !Array.isArray(list)) return;
    this.model.setFlows(list);
    this.requestDraw();
  }

  async loadCounter(id) {
    const data = await this.api.counter(this.run, id);
    if (this.dead) return;
    this.model.setCounter(id, data);
    this.requestDraw();
  }

  relayout() {
    const before = this.model.height;
    this.model.layout();
    if (this.model.height !== before) this.updateSpacer();
  }

  // *** live ***

  subscribeLive() {
    if (this.ctx.subscribe) {
      this.unsubscribe = this.ctx.subscribe(msg => this.onLive(msg));
      this.api.runs?.().then(runs => this.setLive(runs.find(r => r.id === this.run)?.live)).catch(() => {});
    }
  }

  setLive(live) {
    live = !!live;
    if (live && !this.live && !this.liveSeen) { this.following = this.followBox.checked = true; }
    if (live) this.liveSeen = true;
    this.live = live;
    this.followLabel.hidden = !live && !this.liveSeen;
    this.requestDraw();
  }

  onLive(msg) {
    if (msg.type === "runs") {
      const r = msg.runs?.find(r => r.id === this.run);
      if (r) { const was = this.live; this.setLive(r.live); if (was && !r.live) this.scheduleRefresh(0); }
    } else if (msg.type === "events" && msg.run === this.run) {
      if (msg.kernels?.length) { this.model?.setKernels(msg.kernels); this.summaryDirty = true; }
      if (msg.gap) this.api.contexts(this.run).then(c => this.model.setKernels(c.kernels)).catch(() => {});
      this.scheduleRefresh();
    }
  }

  /** Refetch /tracks and every track that grew, at most every `delay` ms (longer for bigger runs). */
  scheduleRefresh(delay = null) {
    if (!this.model) return;
    if (this.refreshing) { this.refreshAgain = true; return; }
    if (this.refreshTimer) return;
    const wait = delay ?? Math.max(300, (this.lastRefreshMs ?? 0) * 3);
    this.refreshTimer = setTimeout(() => { this.refreshTimer = null; this.refresh(); }, wait);
  }

  async refresh() {
    this.refreshing = true;
    const t0 = performance.now();
    try {
      const meta = await this.api.tracks(this.run);
      if (this.dead) return;
      const counts = new Map(this.model.counters.map(c => [c.id, c.n]));
      const changed = this.model.setMeta(meta);
      this.relayout();
      await Promise.all([...changed.map(id => this.loadTrack(id)),
        ...this.model.counters.filter(c => counts.get(c.id) !== c.n || !c.ts).map(c => this.loadCounter(c.id))]);
      if (this.model.flows.length || changed.length) this.loadFlows();
      if (this.following) this.followNow();
      this.renderSummaryLater();
      this.status(this.describe());
      this.requestDraw();
    } catch (e) {
      this.status(`live update failed: ${e.message}`, true);
    } finally {
      this.lastRefreshMs = performance.now() - t0;
      this.refreshing = false;
      if (this.refreshAgain) { this.refreshAgain = false; this.scheduleRefresh(); }
    }
  }

  followNow() {
    const d = this.model.duration;
    this.vp = this.fitted ? fit(0, d) : clamp(follow(this.vp, d), 0, d);
    this.requestDraw();
  }

  // *** view state ***

  applyState(p, initial = false) {
    if (!this.model) return;
    const t0 = Number(p.t0), t1 = Number(p.t1);
    if (Number.isFinite(t0) && Number.isFinite(t1) && t1 > t0) this.vp = clamp({ t0, t1 }, 0, this.model.duration);
    else if (initial) { this.vp = fit(0, this.model.duration); this.fitted = true; }
    if (typeof p.span === "string" && /^-?\d+:\d+$/.test(p.span)) {
      const [track, index] = p.span.split(":").map(Number);
      this.pendingSpan = { track, index };
      if (!initial) this.restoreSelection();
    } else if (!initial && !p.span && this.selected) this.select(null, false);
    if (p.tab === "details" || p.tab === "kernels") { if (p.tab !== this.tab) this.showTab(p.tab, false); }
    if (p.kq !== undefined && String(p.kq) !== this.summaryState.filter) { this.summaryState.filter = String(p.kq); this.renderSummary(); }
    const tq = p.tq === undefined || p.tq === null ? "" : String(p.tq);
    if (tq !== this.search.query && (p.tq !== undefined || !initial)) { this.searchBox.value = tq; this.setSearch(tq, false, false); }
    this.requestDraw();
  }

  restoreSelection() {
    const s = this.pendingSpan;
    if (s && this.model.span(s.track, s.index)) { this.pendingSpan = null; this.select(s, false); }
  }

  /** Tell the shell what to put in the URL; viewport changes are batched. */
  report(patch) {
    if (!this.ctx.setState) return;
    this.pendingReport = { ...(this.pendingReport ?? {}), ...patch };
    clearTimeout(this.reportTimer);
    this.reportTimer = setTimeout(() => { const p = this.pendingReport; this.pendingReport = null; this.ctx.setState(p); }, 250);
  }

  setViewport(vp, { manualPan = false, fitted = false } = {}) {
    if (!this.model) return;
    this.fitted = fitted;  // a window fitted to the whole run keeps fitting it while a live run grows
    this.vp = clamp(vp, 0, this.model.duration);
    if (manualPan && this.following) { this.following = this.followBox.checked = false; }
    if (this.following && !fitted) this.vp = clamp(follow(this.vp, this.model.duration), 0, this.model.duration);
    this.report({ t0: Math.round(this.vp.t0), t1: Math.round(this.vp.t1) });
    this.requestDraw();
    // the view moved under a still mouse (wheel, keys, buttons): the tooltip names what is under it now
    if (this.mouseAt && this.mouseAt.offsetX >= LABEL_W && !this.drag) this.setHover(this.spanAt(this.mouseAt), null);
  }

  fitAll() { this.setViewport(fit(0, this.model.duration), { fitted: true }); }

  /** F: the selected span, else the area selection, else everything. */
  fitSelection() {
    const s = this.selected && this.model.span(this.selected.track, this.selected.index);
    if (s) this.setViewport(fit(s.start, s.end, 0.15));
    else if (this.area) this.setViewport(fit(this.area.t0, this.area.t1, 0.02));
    else this.fitAll();
  }

  // *** drawing ***

  requestDraw() {
    if (this.raf || this.dead) return;
    this.raf = requestAnimationFrame(() => { this.raf = 0; this.drawNow(); });
  }

  drawNow() {
    if (!this.model || !this.renderer.width || this.dead) return;
    const sel = this.selected && this.model.span(this.selected.track, this.selected.index);
    const flows = this.settings.allFlows ? this.model.flows : sel ? this.flowsOfSelected(sel) : [];
    const cursorT = this.drag?.moved ? null : this.cursorTime();
    const r = this.renderer.draw({ model: this.model, vp: this.vp, scrollTop: this.scroller.scrollTop, selected: this.selected,
      hover: this.hover, area: this.area, mask: this.currentMask(), live: this.live, flows, cursorT, hoverRow: this.hoverRow });
    this.drawOverviewNow();
    const d = this.stats.draws;
    d.push(r);
    if (d.length > 2000) d.splice(0, d.length - 1000);
  }

  /** The time under the mouse (ns from the run's start), or null when it is not over the tracks. */
  cursorTime() { return this.mouseX === null ? null : timeAt(this.vp, this.mouseX, this.plotW()); }

  /** What a counter's readout shows at the cursor (tests): its value there, formatted as drawn. */
  counterReadout(id) {
    const c = this.model.counters.find(c => c.id === id), t = this.cursorTime();
    return c?.ts && t !== null ? formatCounter(c, counterAt(c.ts, c.values, t)) : null;
  }

  formatCounterValue(id, v) { return formatCounter(this.model.counters.find(c => c.id === id), v); }

  /** The selected span's arrows, kept until the selection or the flows change. */
  flowsOfSelected(sp) {
    const key = `${sp.track.id}:${sp.index}`;
    if (this.selFlows?.key !== key || this.selFlows.flows !== this.model.flows) this.selFlows = { key, flows: this.model.flows, list: this.model.flowsOf(sp) };
    return this.selFlows.list;
  }

  /** Which names draw bright: the highlighted name, else the search's matches, else all (null). */
  currentMask() {
    const n = this.model.names.length;
    const key = this.highlight !== null && this.highlight !== undefined ? `h${this.highlight}:${n}` : this.search.mask ? `s${this.search.query}:${this.search.mask.length}` : null;
    if (key === this.maskFor) return this.mask;
    this.maskFor = key;
    if (key === null) this.mask = null;
    else if (key[0] === "h") { this.mask = new Uint8Array(n); this.mask[this.highlight] = 1; }
    else this.mask = this.search.mask;
    return this.mask;
  }

  drawOverviewNow() {
    if (this.binsDirty || !this.bins) {
      this.bins = busyBins(this.model.loaded(), this.model.duration, Math.max(64, Math.min(2048, Math.round(this.plotW() / 2))));
      this.binsDirty = false;
    }
    drawOverview(this.overview, this.bins, this.vp, this.model.duration, LABEL_W, this.overviewCache ??= {}, this.overviewSize);
  }

  onOverview(e, down) {
    if (!this.model) return;
    const w = Math.max(this.overview.clientWidth - LABEL_W, 1), x = e.offsetX - LABEL_W;
    if (down) {
      if (e.button !== 0) return;
      this.overviewDrag = true;
      this.overview.setPointerCapture(e.pointerId);
    }
    const t = (x / w) * this.model.duration, len = this.vp.t1 - this.vp.t0;
    this.setViewport({ t0: t - len / 2, t1: t + len / 2 }, { manualPan: true });
  }

  // *** search ***

  /** New spans arrived: search again (the typed query, whether or not its own search has run yet). */
  searchLater() { clearTimeout(this.researchTimer); this.researchTimer = setTimeout(() => this.setSearch(this.searchBox.value, true), 300); }

  /** Find spans by name (text or /regex/): matches draw bright, the rest dimmed; N steps through them. */
  setSearch(query, keepCur = false, report = true) {
    const test = nameMatcher(query);
    const cur = keepCur ? this.search.hits[this.search.cur] : null;
    if (!test || !this.model) this.search = { query: query ?? "", mask: null, hits: [], cur: -1 };
    else {
      const { mask, hits } = searchSpans(this.model.loaded(), this.model.names, test);
      const at = cur ? hits.findIndex(h => h.track === cur.track && h.index === cur.index) : -1;
      this.search = { query, mask, hits, cur: at };
    }
    this.highlight = null;
    this.showHits();
    if (report) this.report({ tq: query?.trim() ? query : null });
    this.requestDraw();
  }

  showHits() {
    const { query, hits, cur } = this.search;
    this.hitsEl.textContent = !query.trim() ? "" : hits.length ? `${cur >= 0 ? cur + 1 : "–"} / ${hits.length.toLocaleString("en-US")}` : "no match";
    this.searchBox.classList.toggle("tl-nomatch", !!query.trim() && !hits.length);
  }

  /** Select the next (dir 1) or previous (-1) match: after the selected one, else after the window's start. */
  stepSearch(dir) {
    const { hits } = this.search;
    if (!hits.length) return;
    let i = this.search.cur;
    const sel = this.selected;
    if (i >= 0 && sel && hits[i].track === sel.track && hits[i].index === sel.index) i = (i + dir + hits.length) % hits.length;
    else i = stepHit(hits, sel ? (this.model.span(sel.track, sel.index)?.start ?? this.vp.t0) : this.vp.t0 - 1, dir);
    this.search.cur = i;
    this.showHits();
    this.select({ track: hits[i].track, index: hits[i].index }, true);
  }

  // *** selection ***

  select(s, reveal = false) {
    this.selected = s;
    this.report({ span: s ? `${s.track}:${s.index}` : null });
    if (!s) { this.requestDraw(); return; }
    const sp = this.model.span(s.track, s.index);
    if (!sp) return;
    if (reveal) this.reveal(sp);
    this.area = null;
    this.showTab("details");
    this.renderDetails(sp);
    this.requestDraw();
  }

  /** Bring a span into view: zoom when it is off screen or too thin to see, and scroll to its track. */
  reveal(sp) {
    const k = scaleOf(this.vp, this.plotW()), len = this.vp.t1 - this.vp.t0, mid = (sp.start + sp.end) / 2;
    if ((sp.end - sp.start) * k < 2) {
      const want = Math.max((sp.end - sp.start) * 10, 1000);
      this.setViewport({ t0: mid - want / 2, t1: mid + want / 2 }, { manualPan: true });
    } else if (sp.end < this.vp.t0 || sp.start > this.vp.t1) this.setViewport({ t0: mid - len / 2, t1: mid + len / 2 }, { manualPan: true });
    const row = this.model.rows.find(r => r.track === sp.track);
    if (row && !row.pinned) {
      const LH = sp.track.laneH, P = this.model.pinnedH, y = row.y + TRACK_PAD + sp.depth * LH, top = this.scroller.scrollTop + P, vis = this.scroller.clientHeight - HEADER_H - P;
      if (y < top || y > top + vis - 2 * LH) this.scroller.scrollTop = Math.max(0, y - P - vis / 3);
    }
  }

  async renderDetails(sp) {
    const token = this.detailsToken = {};
    const kernelId = sp.kernel;
    let kernel = kernelId >= 0 ? this.model.kernels.get(kernelId) ?? null : null;
    const extra = { args: null, kernel, device: kernel?.device ?? (sp.track.kind === "device" ? sp.track.device : sp.track.meta.device ?? null) };
    const on = {
      rewrites: (k) => this.openRewrites(k),
      zoom: () => this.setViewport(fit(sp.start, sp.end, 0.15)),
      next: () => { const n = this.model.nextOfName(sp.gid, sp.start); if (n) this.select({ track: n.track, index: n.index }, true); },
    };
    spanDetails(this.details, sp, extra, on);
    try {
      const [args, full] = await Promise.all([
        this.api.span(this.run, sp.track.id, sp.serverIndex).catch(() => null),
        kernelId >= 0 && !kernel?.uops && this.api.kernel ? this.api.kernel(this.run, kernelId).catch(() => null) : null,
      ]);
      if (token !== this.detailsToken || this.dead) return;
      if (full) { kernel = { ...(kernel ?? {}), ...full }; this.model.kernels.set(kernelId, kernel); }
      spanDetails(this.details, sp, { args: args?.args ?? null, kernel, device: kernel?.device ?? extra.device, cat: args?.cat ?? null }, on);
    } catch { /* the first rendering stands */ }
  }

  openRewrites(k) {
    this.ctx.navigate?.({ view: "rewrites", run: this.run, ctx: k.ctx, kernel: k.id, code: 1 });
  }

  selectArea(area) {
    this.area = area;
    this.selected = null;
    this.report({ span: null });
    if (!area) { this.requestDraw(); return; }
    this.renderArea();
    this.showTab("details");
    this.requestDraw();
  }

  renderArea() {
    const a = this.area, tracks = this.model.tracks.filter(t => a.tracks.has(t.id) && t.chunk);
    const rows = groupByName(tracks, this.model.names, a.t0, a.t1);
    const counters = this.model.counters.filter(c => c.ts && a.counters?.has(c.id)).map(c => ({ name: c.name, fmt: v => formatCounter(c, v),
      ...counterStats(c.ts, c.values, a.t0, a.t1, this.model.duration) })).filter(c => Number.isFinite(c.min));
    areaTable(this.details, a, rows, this.areaSort, {
      sort: (s) => { this.areaSort = s; this.renderArea(); },
      row: (r) => { this.highlight = this.highlight === r.gid ? null : r.gid; this.renderArea(); this.requestDraw(); },
      isActive: (r) => r.gid === this.highlight,
      kernelOf: (r) => this.kernelNamed(r.name),
      zoom: () => this.setViewport(fit(a.t0, a.t1, 0.02)),
      clear: () => { this.highlight = null; this.selectArea(null); this.details.replaceChildren(); },
    }, counters);
  }

  /** The kernel record of a name (its axis kinds colour the name as everywhere else), or null. */
  kernelNamed(name) {
    if (this.kernelsByNameOf !== this.model.kernels.size) {
      this.kernelsByName = new Map([...this.model.kernels.values()].map(k => [k.name, k]));
      this.kernelsByNameOf = this.model.kernels.size;
    }
    return this.kernelsByName.get(name) ?? null;
  }

  renderSummaryLater() {
    clearTimeout(this.summaryTimer);
    this.summaryTimer = setTimeout(() => this.renderSummary(), 200);
  }

  renderSummary() {
    if (!this.model || this.tab !== "kernels") return;
    if (this.summaryDirty || !this.summary) {
      this.summary = kernelSummary(this.model.loaded(), this.model.names, this.model.kernels);
      this.summaryDirty = false;
    }
    summaryTable(this.kernelsPane, this.summary, this.summaryState, {
      filter: (q) => { this.summaryState.filter = q; this.report({ kq: q || null }); this.renderSummary(); },
      sort: (s) => { this.summaryState.sort = s; this.renderSummary(); },
      row: (r) => this.cycleSpans(r),
      isActive: (r) => r.gid === this.highlight,
      kernelOf: (r) => this.model.kernels.get(r.kernel) ?? this.kernelNamed(r.name),
      hasRewrites: (r) => (this.model.kernels.get(r.kernel)?.ctx ?? -1) >= 0,
      rewrites: (r) => { const k = this.model.kernels.get(r.kernel); if (k) this.openRewrites(k); },
    });
  }

  /** A summary row's spans: highlight the name and select its first span, then the next one on each click. */
  cycleSpans(r) {
    const cur = this.selected && this.model.span(this.selected.track, this.selected.index);
    const after = cur && cur.gid === r.gid ? cur.start : -Infinity;
    this.highlight = r.gid;
    const n = this.model.nextOfName(r.gid, after);
    if (n) {
      this.select({ track: n.track, index: n.index }, true);
      this.showTab("kernels", false);
      this.renderSummary();
    }
  }

  /** Client coordinates of the middle of a span's visible part (null when it is off screen). */
  spanPoint(track, index) {
    const sp = this.model?.span(track, index), row = sp && this.model.rows.find(r => r.track === sp.track);
    if (!row) return null;
    const a = Math.max(sp.start, this.vp.t0), b = Math.min(sp.end, this.vp.t1);
    if (a > b) return null;
    const box = this.canvas.getBoundingClientRect(), k = scaleOf(this.vp, this.plotW());
    const y = rowScreenY(row, this.scroller.scrollTop) + TRACK_PAD + sp.depth * sp.track.laneH + sp.track.laneH / 2;
    if (y < HEADER_H || y > this.renderer.height) return null;
    return { x: box.left + LABEL_W + ((a + b) / 2 - this.vp.t0) * k, y: box.top + y };
  }

  // *** input ***

  plotX(e) { return e.offsetX - LABEL_W; }
  plotW() { return Math.max(this.renderer.width - LABEL_W, 1); }
  contentY(e) { return this.contentYAt(e.offsetY, this.scroller.scrollTop); }
  contentYAt(offsetY, scroll) {
    const y = offsetY - HEADER_H;
    return y < (this.model?.pinnedH ?? 0) ? y : y + scroll;  // pinned rows do not scroll
  }

  /** The span under a pointer event, as {track, index}, or null. */
  spanAt(e) {
    if (!this.model || e.offsetX < LABEL_W || e.offsetY < HEADER_H) return null;
    const row = this.model.rowAt(this.contentY(e));
    if (!row || row.kind !== "track") return null;
    const lane = this.model.laneAt(row, this.contentY(e));
    const t = timeAt(this.vp, this.plotX(e), this.plotW()), tol = 2 / scaleOf(this.vp, this.plotW());
    const i = this.model.pickSpan(row.track, lane, t, tol);
    return i < 0 ? null : { track: row.track.id, index: i };
  }

  onWheel(e) {
    if (!this.model) return;
    const overPlot = e.offsetX >= LABEL_W, perfetto = this.settings.wheel === "perfetto";
    if (!overPlot && !e.ctrlKey) return;  // over the names: scroll the tracks natively
    if (perfetto && !e.ctrlKey && !e.shiftKey && Math.abs(e.deltaY) >= Math.abs(e.deltaX)) return;  // Perfetto: the wheel scrolls the tracks
    e.preventDefault();
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? this.renderer.height : 1;
    const dx = e.deltaX * unit, dy = e.deltaY * unit;
    if (e.shiftKey || Math.abs(dx) > Math.abs(dy)) {
      const d = Math.abs(dx) > Math.abs(dy) ? dx : dy;
      this.setViewport(pan(this.vp, d / scaleOf(this.vp, this.plotW())), { manualPan: true });
    } else {
      const at = timeAt(this.vp, Math.max(this.plotX(e), 0), this.plotW());
      this.setViewport(zoomAt(this.vp, wheelFactor(dy), at));
    }
  }

  onDown(e) {
    if (!this.model || e.button !== 0) return;
    this.canvas.focus({ preventScroll: true });
    if (e.offsetX < LABEL_W) {
      const row = e.offsetY >= HEADER_H ? this.model.rowAt(this.contentY(e)) : null;
      if (row?.kind === "group") {
        if (this.model.collapsed.has(row.group)) this.model.collapsed.delete(row.group); else this.model.collapsed.add(row.group);
        this.relayout(); this.updateSpacer(); this.requestDraw();
      } else if (row?.kind === "track" && e.offsetX >= LABEL_W - PIN_W - 4) this.togglePin(row.track.id);
      return;
    }
    const inRuler = e.offsetY < HEADER_H;
    this.drag = { x: e.offsetX, y: e.offsetY, vp: this.vp, scroll: this.scroller.scrollTop, moved: false,
      mode: inRuler || e.shiftKey ? "area" : "pan", allTracks: inRuler };
    this.canvas.setPointerCapture(e.pointerId);
  }

  togglePin(id) {
    this.model.togglePin(id);
    this.relayout(); this.updateSpacer(); this.requestDraw();
  }

  onMove(e) {
    if (!this.model) return;
    this.mouseX = e.offsetX >= LABEL_W ? this.plotX(e) : null;
    this.mouseAt = { offsetX: e.offsetX, offsetY: e.offsetY };
    const d = this.drag;
    const row = !d && e.offsetX < LABEL_W && e.offsetY >= HEADER_H ? this.model.rowAt(this.contentY(e)) : null;
    if (row !== this.hoverRow) { this.hoverRow = row; this.requestDraw(); }
    if (row) { this.setHover(null); this.labelTip(row, e); return; }
    this.requestDraw();  // the cursor line and the counters' readout follow the mouse
    if (!d) { this.setHover(this.spanAt(e), e); return; }
    const dx = e.offsetX - d.x, dy = e.offsetY - d.y;
    if (!d.moved && Math.hypot(dx, dy) < 4) return;
    d.moved = true;
    this.setHover(null);
    if (d.mode === "pan") {
      this.setViewport(pan(d.vp, -dx / scaleOf(d.vp, this.plotW())), { manualPan: dx !== 0 });
      this.scroller.scrollTop = d.scroll - dy;
    } else {
      const ta = timeAt(this.vp, d.x - LABEL_W, this.plotW()), tb = timeAt(this.vp, Math.max(e.offsetX, LABEL_W) - LABEL_W, this.plotW());
      const ya = this.contentYAt(d.y, d.scroll), yb = this.contentY(e);
      const crossed = this.model.rows.filter(r => d.allTracks || (r.y + r.h > Math.min(ya, yb) && r.y < Math.max(ya, yb)));
      const tracks = new Set(crossed.filter(r => r.kind === "track").map(r => r.track.id));
      const counters = new Set(crossed.filter(r => r.kind === "counter").map(r => r.counter.id));
      this.area = { t0: Math.min(ta, tb), t1: Math.max(ta, tb), tracks, counters };
      this.requestDraw();
    }
  }

  onUp(e) {
    const d = this.drag;
    this.drag = null;
    if (!d) return;
    if (this.canvas.hasPointerCapture(e.pointerId)) this.canvas.releasePointerCapture(e.pointerId);
    if (!d.moved) {
      const s = d.mode === "pan" ? this.spanAt(e) : null;
      if (s) this.select(s);
      else { this.highlight = null; this.area = null; this.select(null); }
      return;
    }
    if (d.mode === "area" && this.area) {
      if (this.area.t1 - this.area.t0 <= 0 || (!this.area.tracks.size && !this.area.counters.size)) this.selectArea(null);
      else this.selectArea(this.area);
    }
  }

  onDblClick(e) {
    const s = this.spanAt(e);
    if (!s) return;
    const sp = this.model.span(s.track, s.index);
    this.select(s);
    this.setViewport(fit(sp.start, sp.end, 0.15));
  }

  /** A track name in full (the canvas cuts long ones), and what a click there does. */
  labelTip(row, e) {
    const what = row.kind === "group" ? `${row.label}  (click: fold)` : row.kind === "track" ? `${row.track.name}  (${row.pinned ? "click ◆: unpin" : "click ◇: pin to the top"})` : row.label;
    this.canvas.style.cursor = row.kind === "group" || (row.kind === "track" && e.offsetX >= LABEL_W - PIN_W - 4) ? "pointer" : "default";
    this.tip.textContent = what;
    this.placeTip(e);
  }

  placeTip(e) {
    const box = this.el.getBoundingClientRect(), cb = this.canvas.getBoundingClientRect();
    this.tip.hidden = false;
    const x = cb.left - box.left + e.offsetX + 14, y = cb.top - box.top + e.offsetY + 16;
    this.tip.style.left = `${Math.max(0, Math.min(x, box.width - this.tip.offsetWidth - 4))}px`;
    this.tip.style.top = `${y}px`;
  }

  setHover(s, e) {
    const same = (a, b) => a === b || (a && b && a.track === b.track && a.index === b.index);
    this.canvas.style.cursor = s ? "pointer" : this.drag?.mode === "pan" ? "grabbing" : "default";
    if (!s) { if (this.hover) this.requestDraw(); this.tip.hidden = true; this.hover = null; return; }
    if (!same(s, this.hover)) {
      this.hover = s;
      const sp = this.model.span(s.track, s.index);
      this.tip.textContent = `${sp.name}  ${formatDuration(sp.dur)}` + (sp.self < sp.dur ? `  (self ${formatDuration(sp.self)})` : "");
      this.requestDraw();
    }
    if (e) {
      const box = this.el.getBoundingClientRect(), cb = this.canvas.getBoundingClientRect();
      this.tip.hidden = false;
      const x = cb.left - box.left + e.offsetX + 14, y = cb.top - box.top + e.offsetY + 16;
      this.tip.style.left = `${Math.min(x, box.width - this.tip.offsetWidth - 4)}px`;
      this.tip.style.top = `${y}px`;
    }
  }

  active() {
    if (this.dead || !this.el.isConnected || !this.model) return false;
    return this.el.offsetParent !== null || this.el.getClientRects().length > 0;
  }

  onKey(e, down) {
    const t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) && t !== this.followBox) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key.toLowerCase();
    if (down && !this.active()) return;
    if (KEYS[key]) {
      e.preventDefault();
      if (down) {
        if (this.held.has(key)) return;
        this.held.add(key);
        this.stepKeys(60);  // a tap moves at once; holding keeps moving each frame
        this.keyLoop();
      } else this.held.delete(key);
      this.keys = { zoom: 0, pan: 0 };
      for (const k of this.held) this.keys[KEYS[k][0]] += KEYS[k][1];
      return;
    }
    if (!down) return;
    if (key === "f") { e.preventDefault(); this.fitSelection(); }
    else if (key === "n") { e.preventDefault(); this.stepSearch(e.shiftKey ? -1 : 1); }
    else if (e.key === "/") { e.preventDefault(); this.searchBox.focus(); this.searchBox.select(); }
    else if (key === "escape") { this.highlight = null; this.area = null; this.select(null); }
  }

  stepKeys(dtMs) {
    if (!this.keys.zoom && !this.keys.pan) {
      this.keys = { zoom: 0, pan: 0 };
      for (const k of this.held) this.keys[KEYS[k][0]] += KEYS[k][1];
    }
    const at = this.mouseX === null ? undefined : timeAt(this.vp, this.mouseX, this.plotW());
    this.setViewport(keyMotion(this.vp, this.keys, dtMs, at), { manualPan: this.keys.pan !== 0 });
  }

  keyLoop() {
    if (this.keyRaf) return;
    let last = performance.now();
    const frame = (now) => {
      this.keyRaf = 0;
      if (!this.held.size || this.dead) return;
      this.stepKeys(Math.min(now - last, 50));
      last = now;
      this.drawNow();
      this.keyRaf = requestAnimationFrame(frame);
    };
    this.keyRaf = requestAnimationFrame(frame);
  }

  onSplit(e) {
    const start = e.clientY, h0 = this.bottom.offsetHeight;
    this.split.setPointerCapture(e.pointerId);
    const move = (ev) => { this.bottom.style.height = `${Math.max(60, Math.min(this.el.clientHeight - 120, h0 - (ev.clientY - start)))}px`; };
    const up = () => { this.split.removeEventListener("pointermove", move); this.split.removeEventListener("pointerup", up); };
    this.split.addEventListener("pointermove", move);
    this.split.addEventListener("pointerup", up);
  }
}
