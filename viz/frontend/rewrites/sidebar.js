// The sidebar's contexts > rewrites list for one run. Rebuilt from the RunModel when it changes (live
// batches are coalesced to one render per frame); the selected context is expanded, others on click.
import { contextRows, locText } from "./tree.js";
import { formatDuration } from "../timeline/timefmt.js";
import { kernelNameHTML, kernelHints } from "../kernelname.js";
import { esc } from "../common/esc.js";

const KIND_BADGE = { schedule: "S", kernel: "K", user: "U", call: "C", plan: "P" };  // P: a losing plan's rewrites (VIZ_PLANS=1)

export class ContextList {
  constructor(el, { filter, hideEmpty, count, onPick }) {
    Object.assign(this, { el, filter, hideEmpty, count, onPick });
    this.model = null;
    this.sel = {};
    this.expanded = new Set();
    this.pending = false;
    filter.addEventListener("input", () => this.render());
    hideEmpty.addEventListener("change", () => this.render());
    el.addEventListener("click", (e) => {
      const row = e.target.closest("[data-ctx]");
      if (!row) return;
      const ctx = Number(row.dataset.ctx);
      if (row.dataset.rw !== undefined) { this.onPick({ ctx, rw: Number(row.dataset.rw) }); return; }
      if (row.dataset.kernels !== undefined) { this.onPick({ ctx, kernels: true }); return; }
      if (e.target.closest(".twisty") && this.sel.ctx !== ctx) {
        this.expanded.has(ctx) ? this.expanded.delete(ctx) : this.expanded.add(ctx);
        this.render();
        return;
      }
      this.onPick({ ctx });
    });
  }

  /** Show `model` with `sel` = {ctx, rw} selected; a message instead when model is null. */
  set(model, sel, message = "") {
    const scroll = sel.rw !== this.sel.rw || sel.ctx !== this.sel.ctx || model !== this.model;
    this.model = model; this.sel = sel; this.message = message;
    this.renderNow();
    if (scroll) this.el.querySelector(".sel")?.scrollIntoView({ block: "nearest" });
  }

  /** Re-render at the next frame (live batches). */
  render() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.renderNow(); });
  }

  renderNow() {
    if (!this.model) { this.el.innerHTML = `<div class="empty">${esc(this.message || "")}</div>`; this.count.textContent = ""; return; }
    const rows = contextRows(this.model, { filter: this.filter.value, hideEmpty: this.hideEmpty.checked });
    this.count.textContent = `${rows.length}${rows.length !== this.model.contexts.size ? ` of ${this.model.contexts.size}` : ""}`;
    const kernels = new Map([...this.model.kernels.values()].map((k) => [k.ctx, k]));
    const html = [];
    for (const { ctx: c, depth, matches } of rows) {
      const open = c.id === this.sel.ctx || this.expanded.has(c.id);
      const k = kernels.get(c.id);
      const name = c.kind === "kernel" || k ? kernelNameHTML(c.name, kernelHints(k)) : esc(c.name);
      const detail = c.detail ? `<span class="ctx-detail muted mono" title="${esc(c.detail)}">${esc(c.detail)}</span>` : "";
      html.push(`<div class="ctx-row${c.id === this.sel.ctx ? " sel-ctx" : ""}${matches ? "" : " empty-ctx"}" data-ctx="${c.id}" style="padding-left:${6 + depth * 14}px" role="treeitem" aria-expanded="${open}">`
        + `<span class="twisty">${c.rewrites.length || c.n_items ? (open ? "▾" : "▸") : " "}</span>`
        + `<span class="badge kind-${esc(c.kind)}" title="${esc(c.kind)} context">${KIND_BADGE[c.kind] ?? "?"}</span>`
        + `<span class="ctx-name" title="${esc(c.detail ? `${c.name}: ${c.detail}` : c.name)}">${name}</span>${detail}<span class="count" title="matches in its rewrites">${matches}</span></div>`);
      if (!open) continue;
      // a schedule's own view: the kernels it made (selected when the context is picked without a rewrite)
      if (c.n_items) {
        const sel = c.id === this.sel.ctx && this.sel.rw === undefined;
        html.push(`<div class="rw-row kernels-row${sel ? " sel" : ""}" data-ctx="${c.id}" data-kernels="" style="padding-left:${26 + depth * 14}px" title="the kernels and copies this schedule made, in run order">`
          + `<span class="rw-name">kernels</span><span class="count">${c.n_items}</span><span class="rw-meta muted">in run order</span></div>`);
      }
      for (const r of c.rewrites) {
        const sel = r.id === this.sel.rw;
        html.push(`<div class="rw-row${sel ? " sel" : ""}${r.n_matches ? "" : " empty-rw"}" data-ctx="${c.id}" data-rw="${r.id}" style="padding-left:${26 + depth * 14}px" title="${esc((r.loc?.[0] ?? "") + ":" + (r.loc?.[1] ?? ""))}">`
          + `<span class="rw-name">${esc(r.name)}</span><span class="count">${r.n_matches}</span>`
          + `<span class="rw-meta muted">${esc(locText(r.loc))} · ${formatDuration(r.dur_ns)}</span></div>`);
      }
    }
    this.el.innerHTML = html.join("") || `<div class="empty">${this.model.contexts.size ? "Nothing matches the filter." : esc(this.message || "No rewrites in this run.")}</div>`;
  }

  /** Rewrite ids in list order (for ↑ ↓ through rewrites), over every context. */
  rewriteOrder() {
    if (!this.model) return [];
    return contextRows(this.model, { filter: this.filter.value, hideEmpty: this.hideEmpty.checked })
      .flatMap(({ ctx }) => ctx.rewrites.map((r) => ({ ctx: ctx.id, rw: r.id })));
  }
}
