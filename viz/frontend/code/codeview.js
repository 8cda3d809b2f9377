// The kernel's code pane: its coloured name, launch sizes, the rendered source with syntax highlighting and
// line numbers, and the lowered uop list. `highlightNode` marks the source lines a graph node renders: exactly, from
// the kernel's `line_uops` (the renderer says which uops each line holds); for traces without them, the program
// line and source line linemap.js guesses. With line_uops a click on a source line selects its node (`onSelect`).
import { highlight, tokensHTML } from "./highlight.js";
import { mapNodesToUops, mapUopsToSource, exactLineMaps } from "./linemap.js";
import { kernelNameHTML, kernelHints } from "../kernelname.js";
import { esc } from "../common/esc.js";

const fmtCount = (v) => (v >= 1e9 ? `${(v / 1e9).toFixed(2)} G` : v >= 1e6 ? `${(v / 1e6).toFixed(2)} M` : v >= 1e3 ? `${(v / 1e3).toFixed(1)} K` : `${v}`);

/** The optimizer's plans for the kernel: each with the cost model's estimate (lower wins) and the one that was chosen. */
function plansHTML(plans) {
  if (!plans?.length) return "";
  const chosen = plans.find((p) => p.chosen);
  // under VIZ_PLANS=1 a losing plan's rewrites are a context of their own (p.ctx): its name opens them
  const name = (p) => (p.ctx != null ? `<a href="#" class="plan-ctx" data-plan-ctx="${p.ctx}" title="open this plan's rewrites">${esc(p.name)}</a>` : esc(p.name));
  const rows = plans.map((p) => `<tr class="${p.chosen ? "chosen" : ""}"><td>${p.chosen ? "✓" : ""}</td><td>${name(p)}</td>` +
    `<td class="num mono">${p.cost === null || p.cost === undefined ? "–" : p.cost.toFixed(3)}</td><td class="muted">${esc(p.why ?? "")}</td></tr>`).join("");
  return `<details class="plans" open><summary><h3>Plans <span class="muted">(${plans.length}; ` +
    `${esc(chosen ? `chose ${chosen.name}` : "none chosen")})</span></h3></summary>` +
    `<table class="plan-table"><tr><th></th><th>plan</th><th class="num">est. cost</th><th></th></tr>${rows}</table></details>`;
}

export class CodeView {
  constructor(el, { onSelect = () => {}, onOpenContext = () => {} } = {}) {
    this.el = el;
    this.kernel = null;
    this.nodeToUop = new Map();
    this.uopToSrc = new Map();
    this.exact = null;  // {nodeLines, lineNodes} from the kernel's line_uops
    this.graphIds = new Set();
    el.addEventListener("click", (e) => {
      const plan = e.target.closest("[data-plan-ctx]");
      if (plan) { e.preventDefault(); onOpenContext(Number(plan.dataset.planCtx)); return; }
      const row = e.target.closest(".uop-line");
      if (row) { this.markUop(Number(row.dataset.i), true); return; }
      const line = e.target.closest(".code-line");
      if (line && this.exact) {
        const ids = this.exact.lineNodes.get(Number(line.dataset.line)) ?? [];
        const id = ids.find((i) => this.graphIds.has(i)) ?? ids[0];  // the line's own uop first, if this graph has it
        if (id !== undefined) onSelect(id);
      }
    });
  }

  /** Show `kernel` (the API's kernel JSON, with src and uops), or a message when null. */
  show(kernel, message = "") {
    this.kernel = kernel;
    if (!kernel) { this.el.innerHTML = `<div class="empty">${esc(message || "No kernel for this context.")}</div>`; return; }
    const src = highlight(kernel.src ?? "");
    this.uopToSrc = mapUopsToSource(kernel.uops ?? [], kernel.src ?? "");
    this.exact = kernel.line_uops?.length ? exactLineMaps(kernel.line_uops) : null;
    const sizes = `global ${JSON.stringify(kernel.global_size ?? [])}${kernel.local_size?.length ? ` local ${JSON.stringify(kernel.local_size)}` : ""}`;
    this.el.innerHTML = `
      <div class="code-head">
        <div class="kernel-name">${kernelNameHTML(kernel.name, kernelHints(kernel))}</div>
        <div class="muted mono">${esc(kernel.device)} · ${esc(sizes)} · ${fmtCount(kernel.flops ?? 0)}FLOP · ${fmtCount(kernel.bytes ?? 0)}B</div>
      </div>
      ${plansHTML(kernel.plans)}
      <h3>Source <span class="muted">(${src.length} lines)</span></h3>
      <pre class="code src-code">${src.map((toks, i) => `<div class="code-line" data-line="${i}"><span class="ln">${i + 1}</span>${tokensHTML(toks) || " "}</div>`).join("")}</pre>
      <h3>UOps <span class="muted">(${(kernel.uops ?? []).length}, in program order)</span></h3>
      <pre class="code uop-list">${(kernel.uops ?? []).map((l, i) => `<div class="uop-line" data-i="${i}"><span class="ln">${i}</span>${esc(l)}</div>`).join("")}</pre>`;
  }

  /** The graph now shown (its nodes), so a node can be found in the program. */
  setGraphNodes(nodes) {
    this.nodeToUop = this.kernel ? mapNodesToUops(nodes, this.kernel.uops ?? []) : new Map();
    this.graphIds = new Set(nodes.map((u) => u.id));
  }

  /** Mark the lines node `id` produced; returns {uop, line} indices (-1 when unknown). */
  highlightNode(id, scroll = true) {
    if (this.exact) {
      for (const el of this.el.querySelectorAll(".hl")) el.classList.remove("hl");
      const lines = id === null || id === undefined ? [] : this.exact.nodeLines.get(id) ?? [];
      const els = lines.map((l) => this.el.querySelector(`.code-line[data-line="${l}"]`)).filter(Boolean);
      for (const e of els) e.classList.add("hl");
      if (scroll && els.length) els[0].scrollIntoView({ block: "center" });
      return { uop: -1, line: lines.length ? lines[0] : -1, lines };
    }
    const uop = id === null || id === undefined ? -1 : this.nodeToUop.get(id) ?? -1;
    return this.markUop(uop, scroll);
  }

  markUop(uop, scroll) {
    for (const el of this.el.querySelectorAll(".hl")) el.classList.remove("hl");
    if (uop < 0) return { uop: -1, line: -1 };
    const line = this.uopToSrc.get(uop) ?? -1;
    const u = this.el.querySelector(`.uop-line[data-i="${uop}"]`);
    const s = line >= 0 ? this.el.querySelector(`.code-line[data-line="${line}"]`) : null;
    u?.classList.add("hl");
    s?.classList.add("hl");
    if (scroll) (s ?? u)?.scrollIntoView({ block: "center" });
    return { uop, line };
  }
}
