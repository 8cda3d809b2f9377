// A schedule context's own view in the Rewrites pane: its kernels as boxes in run order and the buffers between
// them (rewrites/kernelgraph.js builds the graph), drawn on the Rewrites view's canvas. A double-click (or the
// panel's button) opens a kernel box into its UOps in place; the box's panel links to the kernel's codegen context.
// URL: a schedule `ctx` with no `rw` shows this; `open` lists the boxes shown opened.
import { api, PromiseCache } from "../common/api.js";
import { positionsOf } from "../graph/layout.js";
import { buildKernelGraph, parseOpen, formatOpen, fmtBytes, fmtCount } from "./kernelgraph.js";
import { kernelNameHTML, kernelHints } from "../kernelname.js";
import { locText } from "./tree.js";
import { esc } from "../common/esc.js";

// the layout directions of graph/direction.js (optional: without it every graph is laid out top to bottom)
const direction = import("../graph/direction.js").catch(() => null);

export class ScheduleView {
  /** rv: the RewritesView whose canvas, layout worker, panels and URL this draws into. */
  constructor(rv) {
    this.rv = rv;
    this.cache = new PromiseCache(16);
    this.shown = null;
    this.wanted = null;
  }

  /** Does the URL ask for a schedule's kernels? (a schedule context with items, and no rewrite picked) */
  wants(model, p) {
    const c = p.ctx !== undefined && p.rw === undefined ? model.contexts.get(p.ctx) : null;
    return !!c?.n_items;
  }

  forget() { this.shown = this.wanted = null; }

  /** Show schedule context `ctx` (a RunModel context) as the URL says (open, hubs, node, layout, cam). */
  show(model, ctx) {
    const rv = this.rv, p = rv.p;
    const open = formatOpen(parseOpen(p.open)), hubs = ["inline", "hidden", "shown"].includes(p.hubs) ? p.hubs : "inline";
    const want = JSON.stringify({ run: p.run, ctx: ctx.id, n: ctx.n_items, open, hubs, dir: p.layout === "lr" ? "LR" : p.layout === "tb" ? "TB" : null });
    this.renderToolbar(ctx);
    rv.shown = rv.wanted = null;  // the rewrite steps' own cache of what is drawn: a step must load again after this
    if (want === this.shown) { rv.renderSelection(); return; }
    if (want === this.wanted) return;
    this.wanted = want;
    this.load(JSON.parse(want), ctx);
  }

  renderToolbar(ctx) {
    const el = this.rv.el;
    el.title.innerHTML = `<span title="${esc(ctx.name)}">${esc(ctx.name)}</span><span class="sep">›</span><b>kernels</b>`
      + `<span class="muted mono sched-detail" title="${esc(ctx.detail ?? "")}">${esc(ctx.detail ?? "")}</span>`;
    el.stepper.classList.add("disabled");
    el.label.textContent = `${ctx.n_items} items`;
    el.codeBtn.disabled = true;
    el.codeBtn.title = "a schedule has no code of its own: open a kernel box's codegen";
  }

  async load(want, ctx) {
    const rv = this.rv, seq = ++rv.loadSeq;
    try {
      const sched = await this.cache.get(`${want.run}/${want.ctx}/${want.n}`, () => api.schedule(want.run, want.ctx));
      if (seq !== rv.loadSeq) return;
      const kg = buildKernelGraph(sched, { expanded: parseOpen(want.open), hubs: want.hubs });
      const dm = await direction;
      let dir = want.dir ?? this.dirs?.get(want.ctx), picked = null;
      if (!dir && dm) {
        picked = await dm.pickDirection(kg, (o) => rv.layout.layout(kg.nodes, kg.edges, null, o), rv.canvas.cw, rv.canvas.ch);
        if (seq !== rv.loadSeq) return;
        dir = picked.dir;
        (this.dirs ??= new Map()).set(want.ctx, dir);
      }
      dir ??= "TB";
      const key = `${want.run}/s${want.ctx}/${dir}`, same = rv.graphKey === key;
      const result = !same && picked?.[dir] ? picked[dir] : await rv.layout.layout(kg.nodes, kg.edges, same ? rv.positions : null, dm?.LAYOUT_OPTIONS?.[dir] ?? {});
      if (seq !== rv.loadSeq) return;
      rv.positions = positionsOf(kg.nodes, result);
      rv.graphKey = key;
      const union = kg.index.nodes.map((u) => ({ ...u, state: "same" }));
      rv.data = { cur: { k: 0, root: null, match: null, nodes: union }, prev: null, union, corr: new Map(), index: kg.index, view: kg, prevIndex: null, schedule: kg };
      this.shown = JSON.stringify(want);
      const first = kg.boxes[0]?.id;
      rv.canvas.setGraph(kg, result, same ? "keep" : { node: rv.p.node, focus: first === undefined ? [] : [first] });
      rv.root.dataset.dir = dir;
      rv.root.dataset.step = `s${want.ctx}`;  // for tests and tools: what is drawn
      rv.el.msg.hidden = !!kg.nodes.length;
      rv.el.msg.textContent = kg.nodes.length ? "" : "This schedule made no kernels.";
      rv.el.match.innerHTML = this.summaryHTML(ctx, kg, sched);
      rv.runSearch(false);
      rv.renderSelection();
      rv.code.setGraphNodes([]);
    } catch (err) {
      if (err.superseded || seq !== rv.loadSeq) return;
      this.wanted = null;
      rv.el.msg.textContent = `Could not load the schedule's kernels: ${err.message}`;
      rv.el.msg.hidden = false;
    }
  }

  summaryHTML(ctx, kg, sched) {
    const ks = kg.boxes.filter((b) => b.kind === "kernel"), copies = kg.boxes.length - ks.length;
    const flops = ks.reduce((s, b) => s + (b.kernel?.flops ?? 0), 0), bytes = ks.reduce((s, b) => s + (b.kernel?.bytes ?? 0), 0);
    const rows = kg.boxes.map((b) => `<li><a data-node="${b.id}" class="mono">${b.kind === "kernel" ? kernelNameHTML(b.name, kernelHints(b.kernel), { legend: false }) : "copy"}</a>`
      + (b.kernel ? ` <span class="muted">${fmtCount(b.kernel.flops)} FLOPs</span>` : "") + "</li>").join("");
    return `<h3>${esc(ctx.name)} <span class="muted mono" title="${esc(ctx.loc?.[0])}:${ctx.loc?.[1]}">${esc(locText(ctx.loc))}</span></h3>
      <p class="muted">${ks.length} kernel${ks.length === 1 ? "" : "s"}${copies ? `, ${copies} cop${copies === 1 ? "y" : "ies"}` : ""}, in run order · ${fmtCount(flops)} FLOPs · ${fmtBytes(bytes)} moved${sched.truncated ? " · (UOps cut: too many)" : ""}.
      Double-click a box for its UOps; its rewrites are in the list on the left.</p>
      ${ctx.detail ? `<p class="muted mono">realizes ${esc(ctx.detail)}</p>` : ""}
      <ol class="sched-order">${rows}</ol>`;
  }

  /** The node panel for a kernel box or a buffer; null for a UOp (the usual panel). */
  nodePanel(u) {
    if (u.box) {
      const b = u.box, k = b.kernel, link = (id) => `<a data-node="${id}">#${id}</a>`;
      const head = b.kind === "kernel" ? kernelNameHTML(b.name, kernelHints(k)) : "copy";
      return `<h3>${head} <span class="muted">#${b.i + 1} in run order</span></h3>
        <table class="fields mono">
          ${k ? `<tr><td>device</td><td>${esc(k.device)}</td></tr><tr><td>global</td><td>${esc((k.global_size ?? []).join("×") || "1")}</td></tr>
          ${k.local_size?.length ? `<tr><td>local</td><td>${esc(k.local_size.join("×"))}</td></tr>` : ""}
          <tr><td>FLOPs</td><td>${fmtCount(k.flops)}</td></tr><tr><td>bytes</td><td>${fmtBytes(k.bytes)}</td></tr>` : ""}
          <tr><td>reads</td><td>${(b.drawnReads ?? b.reads).map(link).join(" ") || "—"}</td></tr>
          <tr><td>writes</td><td>${(b.drawnWrites ?? b.writes).map(link).join(" ") || "—"}</td></tr>
        </table>
        ${b.kind === "kernel" ? `<button class="small" data-kbox="${b.id}">${b.expanded ? "fold its UOps" : "show its UOps here"}</button> ` : ""}
        ${k && k.ctx !== null && k.ctx >= 0 ? `<button class="small" data-kctx="${k.ctx}" data-kid="${k.id}">open its codegen</button>` : ""}`;
    }
    if (u.buffer) {
      const f = u.buffer;
      const note = u.copyOf !== undefined ? "an input, drawn above each kernel that reads it" : u.versionOf !== undefined ? "its new value: written after it was read" : "";
      return `<h3>#${u.copyOf ?? u.versionOf ?? u.id} <span class="opname">BUFFER</span>${note ? ` <span class="muted">(${note})</span>` : ""}</h3>
        <table class="fields mono"><tr><td>dtype</td><td>${esc(f.dtype)}</td></tr><tr><td>size</td><td>${f.size} (${fmtBytes(f.bytes)})</td></tr>
        <tr><td>device</td><td>${esc(f.device)}</td></tr><tr><td>buffer</td><td>${f.num ?? "?"}</td></tr></table>`;
    }
    return null;
  }

  /** Open or fold kernel box `id`; false when it is not a kernel box of the shown schedule. */
  toggle(id) {
    const kg = this.rv.data?.schedule, box = kg?.boxes.find((b) => b.id === id);
    if (!box || box.kind !== "kernel") return false;
    const open = parseOpen(this.rv.p.open);
    open.has(id) ? open.delete(id) : open.add(id);
    this.rv.app.nav({ open: formatOpen(open), node: id }, { push: true });
    return true;
  }

  /** Clicks on the panels' buttons; true when handled. */
  onClick(e) {
    const b = e.target.closest("[data-kbox]");
    if (b) { this.toggle(Number(b.dataset.kbox)); return true; }
    const c = e.target.closest("[data-kctx]");
    if (c) { this.rv.app.nav({ ctx: Number(c.dataset.kctx), rw: null, step: null, node: null, open: null, cam: null }, { push: true }); return true; }
    return false;
  }
}
