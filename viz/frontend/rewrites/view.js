// The Rewrites view: the graph of one rewrite at one step, stepping through its matches, the matched
// pattern, node search and details, and the kernel's code. Its state lives in the URL (run, ctx, rw, step,
// node, hubs, code, q); `update(state)` brings the page to a state, user actions go through `nav`.
import { api, PromiseCache } from "../common/api.js";
import { positionsOf } from "../graph/layout.js";
import { buildView, unionGraph, correspond, indexGraph, exprTree, shortDtype, opColor, FAMILY_COLORS, FAMILY_NAMES } from "./graph.js";
import { searchNodes } from "./search.js";
import { defaultRewrite, locText } from "./tree.js";
import { formatDuration } from "../timeline/timefmt.js";
import { GraphCanvas } from "./graphcanvas.js";
import { parseCamera, formatCamera } from "../common/urlstate.js";
import { pickDirection, LAYOUT_OPTIONS } from "../graph/direction.js";
import { initPanes } from "../panes.js";
import { LayoutClient } from "./layoutclient.js";
import { ContextList } from "./sidebar.js";
import { ScheduleView } from "./scheduleview.js";
import { showPatternTable } from "./patterntable.js";
import { CodeView } from "../code/codeview.js";
import { kernelNameHTML, kernelHints } from "../kernelname.js";
import { esc } from "../common/esc.js";

const HUB_MODES = ["inline", "hidden", "shown"];

// median displacement [dx, dy] of the nodes two layouts share
function medianShift(a, b) {
  const dx = [], dy = [];
  if (a) for (const [id, p] of a) { const q = b.get(id); if (q) { dx.push(q.x - p.x); dy.push(q.y - p.y); } }
  const med = (v) => (v.length ? v.sort((x, y) => x - y)[v.length >> 1] : 0);
  return [med(dx), med(dy)];
}
const $ = (id) => document.getElementById(id);

export class RewritesView {
  /**
   * app: {nav(patch, {push}), model(run) -> RunModel | null, modelMessage(run) -> string}
   */
  constructor(root, app) {
    this.root = root;
    this.app = app;
    this.steps = new PromiseCache(256);
    this.kernels = new PromiseCache(32);
    this.layout = new LayoutClient();
    this.state = { view: "rewrites", params: {} };
    this.shown = null;        // {run, rw, k, hubs}: what the canvas shows
    this.positions = null;    // id -> {x, y, depth, bus} of the last layout (stability across steps)
    this.graphKey = null;     // run/rw of the positions
    this.data = null;         // {cur, prev, union, index, view}
    this.hits = [];
    this.hitAt = -1;
    this.loadSeq = 0;
    this.lastLayoutMs = 0;

    this.el = {
      title: $("rw-title"), slider: $("step-slider"), label: $("step-label"), hub: $("hub-mode"), search: $("node-search"),
      searchCount: $("search-count"), fit: $("fit-btn"), codeBtn: $("code-btn"), msg: $("graph-msg"), legend: $("graph-legend"),
      match: $("match-panel"), node: $("node-panel"), code: $("code-pane"), stepper: $("stepper"),
    };
    const tip = document.createElement("div");
    tip.className = "graph-tip";
    tip.hidden = true;
    $("graph-wrap").appendChild(tip);
    this.canvas = new GraphCanvas($("graph-canvas"), $("minimap"), { onSelect: (id) => this.select(id), onOpen: (id) => this.openCall(id), tip,
      legend: this.el.legend, onCamera: (cam) => this.keepCamera(cam) });
    this.dirs = new Map();    // run/rw/hubs -> "TB" | "LR": the direction picked for a graph when the URL names none
    this.code = new CodeView(this.el.code, { onSelect: (id) => this.select(id, true), onOpenContext: (ctx) => this.pick(ctx) });
    this.list = new ContextList($("ctx-list"), {
      filter: $("ctx-filter"), hideEmpty: $("hide-empty"), count: $("ctx-count"),
      onPick: ({ ctx, rw }) => this.pick(ctx, rw),
    });
    this.sched = new ScheduleView(this);  // a schedule context's kernels
    this.el.legend.innerHTML = FAMILY_NAMES.filter((f) => f !== "other").map((f) => `<span><i style="background:${FAMILY_COLORS[f]}"></i>${f}</span>`).join("")
      + `<span><i class="ring added"></i>added</span><span><i class="ring removed"></i>removed</span><span><i class="ring focus"></i>match</span>`;
    this.bindControls();
    initPanes();
  }

  // ---- the state in the URL
  get p() { return this.state.params; }
  model() { return this.p.run === undefined ? null : this.app.model(this.p.run); }

  /** Bring the view to `state` (called on every URL change and when the run's contexts change). */
  update(state) {
    this.state = state;
    const p = state.params, model = this.model();
    const message = p.run === undefined ? "" : this.app.modelMessage(p.run);
    this.list.set(model, { ctx: p.ctx, rw: p.rw }, message);
    if (!model) { this.empty(p.run === undefined ? "No run selected." : this.app.modelMessage(p.run) || "Loading…"); return; }
    // fill in what the URL leaves open: the context of a rewrite, the default rewrite of a context
    if (p.rw !== undefined && p.ctx === undefined) {
      const ctx = model.contextOfRewrite(p.rw);
      if (ctx !== null) return this.app.nav({ ctx, rw: p.rw, step: p.step, node: p.node }, { replaceOnly: true });
    }
    // nothing named: open on the newest schedule (its kernels), else the newest context with matches
    if (p.ctx === undefined && p.rw === undefined && p.kernel === undefined && model.contexts.size) {
      const cs = [...model.contexts.values()];
      const c = cs.findLast((x) => x.kind === "schedule" && x.n_items) ?? cs.findLast((x) => x.rewrites.some((r) => r.n_matches));
      if (c) return this.pick(c.id, undefined, true);
    }
    if (this.sched.wants(model, p)) { this.sched.show(model, model.contexts.get(p.ctx)); this.renderCode(); return; }
    this.sched.forget();
    if (p.ctx !== undefined && p.rw === undefined) {
      const c = model.contexts.get(p.ctx), r = c && defaultRewrite(c);
      if (r) return this.app.nav({ rw: r.id, step: 0 }, { replaceOnly: true });
    }
    const rw = p.rw !== undefined ? model.rewrites.get(p.rw) : null;
    if (!rw) {
      this.empty(p.rw !== undefined ? `Rewrite ${p.rw} is not in this run (yet).` : p.ctx !== undefined ? "This context has no rewrites."
        : model.contexts.size ? "Pick a context on the left: a kernel (K), a schedule (S), a @function call (C) or a user rewrite (U)." : message);
      this.renderCode();
      return;
    }
    const n = rw.n_matches, k = Math.max(0, Math.min(n, p.step ?? 0));
    if (k !== p.step) return this.app.nav({ step: k }, { replaceOnly: true });
    this.renderToolbar(model, rw, k);
    const hubs = HUB_MODES.includes(p.hubs) ? p.hubs : "inline";
    this.el.hub.value = hubs;
    if (this.el.search.value !== (p.q ?? "") && document.activeElement !== this.el.search) this.el.search.value = p.q ?? "";
    const want = JSON.stringify({ run: p.run, rw: rw.id, k, hubs, dir: p.layout === "lr" ? "LR" : p.layout === "tb" ? "TB" : null });
    if (want !== this.shown && want !== this.wanted) { this.wanted = want; this.loadStep(JSON.parse(want), rw); }
    else if (want === this.shown) this.renderSelection();
    this.renderCode();
  }

  empty(message) {
    this.loadSeq++;
    this.shown = this.wanted = null;
    this.data = null;
    this.canvas.clear();
    this.el.msg.textContent = message;
    this.el.msg.hidden = false;
    this.el.title.innerHTML = "";
    this.el.stepper.classList.add("disabled");
    this.el.label.textContent = "";
    this.el.match.innerHTML = "";
    this.el.node.innerHTML = "";
  }

  renderToolbar(model, rw, k) {
    const ctx = model.contexts.get(rw.ctx), kernel = model.kernelOf(rw.ctx);
    const ctxName = ctx ? (ctx.kind === "kernel" || kernel ? kernelNameHTML(ctx.name, kernelHints(kernel)) : esc(ctx.name)) : "";
    this.el.title.innerHTML = `<span class="t-ctx">${ctxName}</span><span class="sep">›</span><b class="t-rw">${esc(rw.name)}</b>`
      + `<span class="t-loc muted mono" title="${esc(rw.loc?.[0])}:${rw.loc?.[1]}">${esc(locText(rw.loc))}</span>`;
    this.el.title.title = `${ctx?.name ?? ""} › ${rw.name}  ${locText(rw.loc)} · ${formatDuration(rw.dur_ns)}`;
    this.el.stepper.classList.toggle("disabled", rw.n_matches === 0);
    this.el.slider.max = String(rw.n_matches);
    this.el.slider.value = String(k);
    this.el.label.textContent = `step ${k} / ${rw.n_matches}`;
    this.el.codeBtn.disabled = !kernel;
    this.el.codeBtn.title = kernel ? "the kernel's code (c)" : "no kernel: this context is not a kernel's codegen";
  }

  // ---- loading a step
  fetchStep(run, rw, k) { return this.steps.get(`${run}/${rw}/${k}`, () => api.step(run, rw, k)); }

  async loadStep(want, rw) {
    const seq = ++this.loadSeq;
    const slow = setTimeout(() => { if (seq === this.loadSeq) { this.el.msg.textContent = `loading step ${want.k}…`; this.el.msg.hidden = false; } }, 150);
    try {
      const [cur, prev] = await Promise.all([this.fetchStep(want.run, want.rw, want.k), want.k > 0 ? this.fetchStep(want.run, want.rw, want.k - 1) : null]);
      if (seq !== this.loadSeq) return;
      const corr = prev ? correspond(prev.nodes, cur.nodes, cur.match) : new Map();
      const union = unionGraph(cur.nodes, prev?.nodes ?? null, prev ? cur.removed : null, prev ? cur.added : null, corr);
      const keep = new Set([cur.root]);
      for (const u of union) if (u.state !== "same") keep.add(u.id);
      if (cur.match) { keep.add(cur.match.before); keep.add(cur.match.after); }
      if (this.p.node !== undefined) keep.add(this.p.node);
      const view = buildView(union, { hubs: want.hubs, keep });
      // the direction: the URL's, else the one picked for this graph (by its first step's shape against the pane)
      const dirKey = `${want.run}/${want.rw}/${want.hubs}`;
      // a first view reads the rewrite's first match (at step 0: the node the first match rewrites), else the root
      const next = want.k === 0 && rw.n_matches ? await this.fetchStep(want.run, want.rw, 1).catch(() => null) : null;
      if (seq !== this.loadSeq) return;
      const focus = [cur.match?.after, next?.match?.before, cur.root].filter((id) => id !== undefined);
      let dir = want.dir ?? this.dirs.get(dirKey), picked = null;
      if (!dir) {
        picked = await pickDirection(view, (options) => this.layout.layout(view.nodes, view.edges, null, options), this.canvas.cw, this.canvas.ch, focus[0]);
        if (seq !== this.loadSeq) return;
        dir = picked.dir;
        this.dirs.set(dirKey, dir);
      }
      const key = `${want.run}/${want.rw}/${dir}`, sameGraph = this.graphKey === key;
      // a rebuilt node starts where the node it replaces was, the match's result where the matched node was
      let prevPos = sameGraph ? this.positions : null;
      if (prevPos) {
        prevPos = new Map(prevPos);
        for (const [now, was] of corr) if (prevPos.has(was) && !prevPos.has(now)) prevPos.set(now, prevPos.get(was));
        const m = cur.match;
        if (m && prevPos.has(m.before) && !prevPos.has(m.after)) prevPos.set(m.after, prevPos.get(m.before));
      }
      // the matched node, removed by this step, is drawn beside the node that replaced it
      const m = cur.match, beside = m && union.some((u) => u.id === m.before && u.state === "removed") ? new Map([[m.before, m.after]]) : null;
      const result = !prevPos && picked?.[dir] ? picked[dir] : await this.layout.layout(view.nodes, view.edges, prevPos, { ...LAYOUT_OPTIONS[dir], beside });
      if (seq !== this.loadSeq) return;
      this.lastLayoutMs = result.ms;
      const positions = positionsOf(view.nodes, result);
      // the layout may shift everything by a few pixels (a layer grew): move the camera with it
      if (sameGraph) this.canvas.shiftCamera(...medianShift(prevPos, positions));
      this.positions = positions;
      this.graphKey = key;
      this.data = { cur, prev, union, corr, index: indexGraph(union), view, prevIndex: prev ? indexGraph(prev.nodes) : null };
      this.shown = JSON.stringify(want);
      const node = this.p.node, cam = parseCamera(this.p.cam);
      this.canvas.setGraph(view, result, sameGraph ? "keep" : cam ?? { node, focus });
      if (sameGraph && cur.match && !this.canvas.isVisible(focus[0])) {
        this.canvas.centerOn(focus[0], 0);
        if (this.p.cam !== undefined) this.keepCamera(this.canvas.getCamera());
      }
      this.root.dataset.dir = dir;
      const dirBtn = $("dir-btn");
      if (dirBtn) { dirBtn.textContent = dir === "LR" ? "→" : "↓"; dirBtn.title = `laid out ${dir === "LR" ? "left to right" : "top to bottom"}: switch (l)`; }
      this.el.msg.hidden = !!view.nodes.length;
      this.el.msg.textContent = view.nodes.length ? "" : "Empty graph.";
      this.root.dataset.step = `${want.rw}:${want.k}`;  // for tests and tools: what is drawn
      this.renderMatch(cur, rw);
      this.renderPatternTable();  // kept open while stepping
      this.runSearch(false);
      this.renderSelection();
      this.code.setGraphNodes(union);
      this.renderCode(true);
      // the next step is likely to be asked for: have it ready
      if (want.k < rw.n_matches) this.fetchStep(want.run, want.rw, want.k + 1).catch(() => {});
    } catch (err) {
      if (err.superseded || seq !== this.loadSeq) return;
      this.wanted = null;
      this.el.msg.textContent = `Could not load step ${want.k}: ${err.message}`;
      this.el.msg.hidden = false;
    } finally {
      clearTimeout(slow);
    }
  }

  renderMatch(cur, rw) {
    const d = this.data, k = cur.k;
    const n = (s) => d.union.reduce((c, u) => c + (u.state === s), 0);
    const counts = `<span class="pill added">${n("added")} added</span><span class="pill removed">${n("removed")} removed</span>`
      + (d.corr.size ? `<span class="pill" title="users of the rewritten node, rebuilt with new sources (same place, new id)">${d.corr.size} rebuilt</span>` : "");
    if (!cur.match) {
      this.el.match.innerHTML = `<h3>${k === 0 ? "Input graph" : `Step ${k}`}</h3>
        <p class="muted">${rw.n_matches ? `${rw.n_matches} matches in this rewrite: step through them with ← → or the slider.` : "No pattern matched in this rewrite: the graph went through unchanged."}</p>
        <p class="muted mono">${d.view.nodes.length} nodes drawn, ${d.union.length} in the graph</p>`;
      return;
    }
    const pat = cur.match.pattern;
    const where = pat ? `<a class="loc mono" href="#" data-pattern-file="${esc(pat.file)}" data-pattern-line="${pat.line}" title="${esc(pat.file)}:${pat.line}" aria-label="${esc(pat.file)}:${pat.line}: open the captured pattern table around it">${esc(locText([pat.file, pat.line]))}</a>` : `<span class="muted">no pattern (a direct replacement)</span>`;
    const tree = (byId, id) => exprTree(byId, id).map((l) => esc(l).replace(/#(-?\d+)/g, '<a data-node="$1">#$1</a>')).join("\n");
    const before = tree((d.prevIndex ?? d.index).byId, cur.match.before), after = tree(d.index.byId, cur.match.after);
    // how long the match's rewrite took (trying the node's patterns and running the winner's), as tinygrad's VIZ shows it
    const took = cur.match.ns != null ? ` <span class="match-time muted mono" title="time this match's rewrite took: trying the patterns on the node and running the one that matched">${formatDuration(cur.match.ns)}</span>` : "";
    this.el.match.innerHTML = `<h3>Match ${k} of ${rw.n_matches} ${where}${took}</h3>
      ${pat ? `<pre class="pattern-src mono">${esc(pat.source || "(source not recorded)")}</pre><div class="pattern-table mono" hidden></div>` : ""}
      <div class="rewrite-pair">
        <div><span class="tag removed">before</span><pre class="mono">${before}</pre></div>
        <div><span class="tag added">after</span><pre class="mono">${after}</pre></div>
      </div>
      <div class="counts">${counts}</div>`;
  }

  // ---- the match's pattern among the others the trace captured from its file (toggled by its file:line)
  renderPatternTable() {
    const el = this.el.match.querySelector(".pattern-table"), pat = this.data?.cur.match?.pattern;
    if (!el || !pat) return;
    if (!this.patternOpen) { el.hidden = true; return; }
    showPatternTable(el, this.p.run, pat.file, pat.line);
  }

  // ---- the camera in the URL: written once a move settles (a drag would otherwise write every frame)
  keepCamera(cam) {
    clearTimeout(this.camTimer);
    const key = this.graphKey;  // a move on one graph is not written onto the next one's URL
    this.camTimer = setTimeout(() => { if (this.data && this.graphKey === key) this.app.nav({ cam: formatCamera(cam) }, {}); }, 250);
  }

  toggleDirection() {
    const now = this.root.dataset.dir ?? "TB";
    this.app.nav({ layout: now === "LR" ? "tb" : "lr", cam: null }, {});
  }

  // ---- selection, search, details
  select(id, center = false) {
    this.app.nav({ node: id ?? null }, {});
    if (center && id !== null && id !== undefined) this.canvas.centerOn(id);
  }

  renderSelection() {
    const d = this.data;
    if (!d) return;
    const id = this.p.node ?? null;
    const related = new Set();
    if (id !== null) {
      for (const s of d.index.byId.get(id)?.src ?? []) related.add(s);
      for (const u of d.index.users.get(id) ?? []) related.add(u);
    }
    const focus = new Set(d.cur.match ? [d.cur.match.before, d.cur.match.after] : []);
    this.canvas.setMarks({ selected: id, related, focus, hits: new Set(this.hits) });
    this.renderNode(id);
    if (!this.el.code.hidden) this.code.highlightNode(id, id !== this.lastSelected);
    this.lastSelected = id;
  }

  renderNode(id) {
    const d = this.data, u = id === null ? null : d.index.byId.get(id);
    const own = u && d.schedule ? this.sched.nodePanel(u) : null;  // a kernel box or a buffer of a schedule
    if (own) { this.el.node.innerHTML = own; return; }
    if (!u) {
      this.el.node.innerHTML = id === null ? `<p class="muted">Click a node for its fields, sources and users.</p>` : `<p class="muted">Node #${id} is not in this step's graph.</p>`;
      return;
    }
    const link = (s) => { const v = d.index.byId.get(s); return `<a data-node="${s}">#${s}</a> ${v ? `<span style="color:${opColor(v.op)}" class="opname">${esc(v.op)}</span> ${esc(v.arg !== "None" ? v.arg : "")}` : ""}`; };
    const users = [...new Set(d.index.users.get(id) ?? [])];
    const drawn = d.view.hubs.has(id) ? `<span class="muted">(drawn inside its users' labels)</span>` : "";
    this.el.node.innerHTML = `<h3>#${u.id} <span style="color:${opColor(u.op)}" class="opname">${esc(u.op)}</span> <span class="tag ${u.state}">${u.state}</span> ${drawn}</h3>
      <table class="fields mono">
        <tr><td>dtype</td><td>${esc(shortDtype(u.dtype))}</td></tr>
        <tr><td>arg</td><td class="wrap">${esc(u.arg)}</td></tr>
        <tr><td>src</td><td>${(u.src ?? []).map((s, i) => `<div>${i}: ${link(s)}</div>`).join("") || "—"}</td></tr>
        <tr><td>users</td><td>${users.map((s) => `<div>${link(s)}</div>`).join("") || "—"}</td></tr>
      </table>
      ${u.op === "CALL" ? this.callButton(u) : ""}
      <button class="small" data-trace-users="${u.id}">users in the whole trace</button><div class="trace-users mono"></div>`;
  }

  // ---- @function calls: a CALL node opens into the context its body was traced in
  callButton(u) {
    const to = this.model()?.callBody(u.src?.[0]);
    return to ? `<button class="small" data-open-call="${u.id}">open the call's body</button> `
      : `<span class="muted">its body was traced before this trace began</span> `;
  }

  /** Opens a CALL node's body; false (nothing done) for other nodes. */
  openCall(id) {
    if (this.data?.schedule && this.sched.toggle(id)) return true;  // a schedule's kernel box opens in place
    const u = this.data?.index.byId.get(id), to = u?.op === "CALL" ? this.model()?.callBody(u.src?.[0]) : null;
    if (!to) return false;
    this.app.nav({ ctx: to.ctx, rw: to.rw, step: 0, node: null }, { push: true });
    return true;
  }

  async traceUsers(id, out) {
    out.textContent = "…";
    try {
      const r = await api.uop(this.p.run, id);
      out.innerHTML = r.users.length ? r.users.map((s) => `<a data-node="${s}">#${s}</a>`).join(" ") + (r.users.length >= 100 ? " (first 100)" : "") : "none";
    } catch (err) { out.textContent = err.status === 404 ? "not an interned uop (built during the rewrite)" : err.message; }
  }

  runSearch(jump) {
    const q = this.el.search.value;
    const d = this.data;
    const drawn = d ? new Set(d.view.nodes.map((u) => u.id)) : new Set();
    const labels = d ? new Map(d.view.nodes.map((u) => [u.id, u.lines])) : null;  // what is drawn inline is found too
    this.hits = d && q.trim() ? searchNodes(d.union, q, 500, labels).filter((id) => drawn.has(id) || d.view.hubs.has(id)) : [];
    if (jump && this.hits.length) {
      this.hitAt = (this.hitAt + 1) % this.hits.length;
      const id = this.hits[this.hitAt];
      this.select(id);
      if (!this.canvas.centerOn(id)) this.canvas.request();
    } else if (!jump) this.hitAt = -1;
    this.el.searchCount.textContent = q.trim() ? (this.hits.length ? `${this.hitAt >= 0 ? this.hitAt + 1 + "/" : ""}${this.hits.length}` : "none") : "";
    this.canvas.setMarks({ hits: new Set(this.hits) });
  }

  // ---- code pane
  renderCode(scroll = false) {
    const open = this.p.code === "1";
    this.el.code.hidden = !open;
    this.el.codeBtn.setAttribute("aria-pressed", String(open));
    this.root.classList.toggle("with-code", open);
    if (!open) return;
    const model = this.model(), ctx = this.p.ctx ?? (this.p.rw !== undefined ? model?.contextOfRewrite(this.p.rw) : undefined);
    const kernel = model && ctx !== undefined ? model.kernelOf(ctx) : null;
    if (!kernel) { this.codeKernel = null; this.code.show(null, "This context is not a kernel's codegen: no generated code."); return; }
    const key = `${this.p.run}/${kernel.id}`;
    if (this.codeKernel === key) { if (this.data) this.code.highlightNode(this.p.node ?? null, scroll); return; }
    this.codeKernel = key;
    this.code.show(null, "loading the kernel…");
    this.kernels.get(key, () => api.kernel(this.p.run, kernel.id)).then((k) => {
      if (this.codeKernel !== key) return;
      this.code.show(k);
      if (this.data) { this.code.setGraphNodes(this.data.union); this.code.highlightNode(this.p.node ?? null); }
    }).catch((err) => { if (this.codeKernel === key) this.code.show(null, `Could not load kernel ${kernel.id}: ${err.message}`); });
  }

  // ---- user actions
  pick(ctx, rw, replaceOnly = false) {
    if (rw === undefined) {
      // a schedule opens on its kernels; another context on its first rewrite with matches
      const c = this.model()?.contexts.get(ctx), r = c && !c.n_items ? defaultRewrite(c) : null;
      this.app.nav({ ctx, rw: r?.id ?? null, step: r ? 0 : null, node: null }, { push: !replaceOnly, replaceOnly });
    } else this.app.nav({ ctx, rw, step: 0, node: null }, { push: true });
  }

  step(k) {
    const rw = this.model()?.rewrites.get(this.p.rw);
    if (!rw) return;
    this.app.nav({ step: Math.max(0, Math.min(rw.n_matches, k)) }, {});
  }

  nextRewrite(dir) {
    const order = this.list.rewriteOrder(), i = order.findIndex((x) => x.rw === this.p.rw);
    // from a schedule's kernels (no rewrite picked): ↓ goes to its first rewrite, ↑ to the rewrite before it
    const at = i < 0 && this.p.ctx !== undefined ? order.findIndex((x) => x.ctx === this.p.ctx) : -1;
    const j = i >= 0 ? i + dir : at >= 0 ? (dir > 0 ? at : at - 1) : 0;
    if (j >= 0 && j < order.length) this.pick(order[j].ctx, order[j].rw);
  }

  /** Keys while this view is shown; true when handled. */
  onKey(e) {
    const k = this.p.step ?? 0, big = e.shiftKey ? 10 : 1;
    switch (e.key) {
      case "ArrowRight": this.step(k + big); return true;
      case "ArrowLeft": this.step(k - big); return true;
      case "Home": this.step(0); return true;
      case "End": this.step(Infinity); return true;
      case "ArrowDown": this.nextRewrite(1); return true;
      case "ArrowUp": this.nextRewrite(-1); return true;
      case "/": this.el.search.focus(); this.el.search.select(); return true;
      case "f": this.canvas.fit(); return true;
      case "l": this.toggleDirection(); return true;
      case "c": if (!this.el.codeBtn.disabled) this.app.nav({ code: this.p.code === "1" ? null : "1" }, {}); return true;
      case "h": { const m = HUB_MODES[(HUB_MODES.indexOf(this.el.hub.value) + 1) % 3]; this.app.nav({ hubs: m === "inline" ? null : m }, {}); return true; }
      case "Escape": if (this.p.node !== undefined) this.select(null); return true;
      case "+": case "=": this.canvas.zoomAt(this.canvas.cw / 2, this.canvas.ch / 2, 1.25); return true;
      case "-": this.canvas.zoomAt(this.canvas.cw / 2, this.canvas.ch / 2, 0.8); return true;
    }
    return false;
  }

  bindControls() {
    const el = this.el;
    el.slider.addEventListener("input", () => this.step(Number(el.slider.value)));
    $("step-first").onclick = () => this.step(0);
    $("step-prev").onclick = () => this.step((this.p.step ?? 0) - 1);
    $("step-next").onclick = () => this.step((this.p.step ?? 0) + 1);
    $("step-last").onclick = () => this.step(Infinity);
    el.hub.addEventListener("change", () => this.app.nav({ hubs: el.hub.value === "inline" ? null : el.hub.value }, {}));
    el.fit.onclick = () => this.canvas.fit();
    $("dir-btn")?.addEventListener("click", () => this.toggleDirection());
    el.codeBtn.onclick = () => this.app.nav({ code: this.p.code === "1" ? null : "1" }, {});
    el.search.addEventListener("input", () => { this.runSearch(false); this.app.nav({ q: el.search.value || null }, {}); });
    el.search.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); this.runSearch(true); }
      if (e.key === "Escape") { el.search.blur(); }
    });
    // links to nodes anywhere in the panels
    this.root.addEventListener("click", (e) => {
      const a = e.target.closest("[data-node]");
      if (a) { e.preventDefault(); this.select(Number(a.dataset.node), true); return; }
      const oc = e.target.closest("[data-open-call]");
      if (oc) { this.openCall(Number(oc.dataset.openCall)); return; }
      if (this.sched.onClick(e)) return;
      const pl = e.target.closest("[data-pattern-file]");
      if (pl) { e.preventDefault(); this.patternOpen = !this.patternOpen; this.renderPatternTable(); return; }
      const b = e.target.closest("[data-trace-users]");
      if (b) this.traceUsers(Number(b.dataset.traceUsers), b.nextElementSibling);
    });
  }
}
