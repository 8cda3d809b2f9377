// The compare view: two runs kernel by kernel (GET /api/compare), sortable; a row opens both kernels side by side:
// their code with a line diff, launch sizes, FLOPs and bytes, and which passes and patterns fired how often on each
// side (GET /api/runs/R/kernels/K/passes), each side linking into its run's rewrite explorer.
// URL keys: a, b (run ids), sort (a column key), dir ("asc"), k (the open row's id).
import { getJSON, PromiseCache } from "../common/api.js";
import { COLUMNS, compareRows, sortRows, passPairs, patternPairs } from "./rows.js";
import { lineDiff, diffStats } from "./diff.js";
import { formatDuration } from "../timeline/timefmt.js";
import { kernelNameHTML, kernelHints } from "../kernelname.js";
import { esc } from "../common/esc.js";

const dur = (ns) => (ns === null || ns === undefined ? "–" : formatDuration(ns));
const delta = (ns) => (ns === null ? "–" : (ns > 0 ? "+" : ns < 0 ? "−" : "") + formatDuration(Math.abs(ns)));
const ratio = (r) => (r === null ? "–" : `${r.toFixed(2)}x`);
const num = (n) => (n === null || n === undefined ? "–" : String(n));
const CELL = { name: null, na: num, nb: num, ta: dur, tb: dur, ma: dur, mb: dur, sa: dur, sb: dur, delta, ratio };

export class CompareView {
  constructor(el, { nav }) {
    this.el = el;
    this.nav = nav;
    this.cache = new PromiseCache(16);
    this.el.innerHTML = `
      <div class="toolbar cmp-toolbar">
        <label>A <select id="cmp-a" aria-label="run A"></select></label>
        <label>B <select id="cmp-b" aria-label="run B"></select></label>
        <span id="cmp-summary" class="muted title"></span>
      </div>
      <div class="cmp-body">
        <div class="cmp-table-wrap"><table id="cmp-table" class="cmp-table"></table></div>
        <section id="cmp-pair" class="cmp-pair" hidden></section>
      </div>`;
    this.$ = (id) => this.el.querySelector(`#${id}`);
    this.$("cmp-a").onchange = (e) => this.nav({ a: Number(e.target.value), k: null }, { push: true, view: "compare" });
    this.$("cmp-b").onchange = (e) => this.nav({ b: Number(e.target.value), k: null }, { push: true, view: "compare" });
    this.$("cmp-table").addEventListener("click", (e) => {
      const th = e.target.closest("th[data-key]");
      if (th) {
        const same = (this.params.sort ?? "delta") === th.dataset.key;
        this.nav({ sort: th.dataset.key, dir: same && this.params.dir !== "asc" ? "asc" : null }, { view: "compare" });
        return;
      }
      const tr = e.target.closest("tr[data-id]");
      if (tr) this.nav({ k: tr.dataset.id === this.params.k ? null : tr.dataset.id }, { push: true, view: "compare" });
    });
    this.$("cmp-pair").addEventListener("click", (e) => {
      const a = e.target.closest("a[data-run]");
      if (!a) return;
      e.preventDefault();
      this.nav({ run: Number(a.dataset.run), ctx: a.dataset.ctx === "" ? null : Number(a.dataset.ctx), kernel: Number(a.dataset.kernel), code: "1" },
               { push: true, view: "rewrites" });
    });
    this.params = {};
    this.runs = [];
  }

  /** Called by the shell whenever the URL or the run list changes. */
  update(state, runs) {
    this.params = state.params;
    this.runs = runs;
    const ids = runs.map((r) => r.id);
    let { a, b } = this.params;
    if (ids.length >= 2 && (!ids.includes(a) || !ids.includes(b))) {  // pick the first two runs not given
      a = ids.includes(a) ? a : ids.find((x) => x !== b) ?? ids[0];
      b = ids.includes(b) ? b : ids.find((x) => x !== a);
      this.nav({ a, b }, { replaceOnly: true, view: "compare" });
      return;
    }
    for (const [sel, v] of [["cmp-a", a], ["cmp-b", b]]) {
      this.$(sel).innerHTML = runs.map((r) => `<option value="${r.id}"${r.id === v ? " selected" : ""}>${esc(`${r.id}: ${r.name}`)}</option>`).join("");
    }
    if (ids.length < 2) {
      this.$("cmp-table").innerHTML = "";
      this.$("cmp-summary").textContent = "";
      this.$("cmp-pair").hidden = true;
      this.el.querySelector(".cmp-table-wrap").dataset.empty = "Open two runs to compare them (tinyviz A B --compare).";
      return;
    }
    delete this.el.querySelector(".cmp-table-wrap").dataset.empty;
    const key = `${a}/${b}`;
    // each run's kernel records: their axis kinds colour the names as everywhere else (kernelname.js)
    const recs = (run) => this.cache.get(`k${run}`, () => getJSON(`/api/runs/${run}/contexts`).then((c) => new Map(c.kernels.map((k) => [k.id, k])), () => new Map()));
    Promise.all([this.cache.get(key, () => getJSON(`/api/compare?a=${a}&b=${b}`)), recs(a), recs(b)]).then(([cmp, ra, rb]) => {
      if (`${this.params.a}/${this.params.b}` !== key) return;
      this.recs = { a: ra, b: rb };
      this.renderTable(cmp);
      this.renderPair(cmp);
    }).catch((err) => { this.$("cmp-summary").textContent = `Could not compare: ${err.message}`; });
  }

  renderTable(cmp) {
    const sort = this.params.sort ?? "delta", desc = this.params.dir !== "asc";
    this.rows = sortRows(compareRows(cmp), sort, desc);
    const t = cmp.total;
    this.$("cmp-summary").textContent = `${cmp.kernels.length} kernels in both, ${cmp.only_a.length} only in A, ${cmp.only_b.length} only in B · ` +
      `kernel time A ${dur(t.a_ns)}, B ${dur(t.b_ns)}, B − A ${delta(t.b_ns - t.a_ns)}` + (t.a_ns ? `, B/A ${ratio(t.b_ns / t.a_ns)}` : "");
    const head = COLUMNS.map((c) => `<th data-key="${c.key}" class="${c.num ? "num" : ""}${c.key === sort ? " sorted" : ""}" title="sort by ${esc(c.label)}">` +
      `${esc(c.label)}${c.key === sort ? (desc ? " ▾" : " ▴") : ""}</th>`).join("");
    const body = this.rows.map((r) => `<tr data-id="${esc(r.id)}" class="cmp-${r.where}${r.id === this.params.k ? " selected" : ""}">` +
      COLUMNS.map((c) => c.key === "name"
        ? `<td class="mono name" title="${esc(r.name)}">${this.nameHTML(r.name, r)}${r.renamed ? ` <span class="muted">→ ${esc(r.renamed)}</span>` : ""}` +
          `${r.where !== "both" ? ` <span class="tag">only ${r.where.toUpperCase()}</span>` : ""}</td>`
        : `<td class="num mono${c.key === "delta" && r.delta ? (r.delta < 0 ? " faster" : " slower") : ""}">${CELL[c.key](r[c.key])}</td>`).join("") + "</tr>").join("");
    this.$("cmp-table").innerHTML = `<thead><tr>${head}</tr></thead><tbody>${body}</tbody>`;
  }

  nameHTML(name, r) {
    const k = this.recs?.a.get(r.ka) ?? this.recs?.b.get(r.kb) ?? null;
    return kernelNameHTML(name, kernelHints(k), { legend: false });
  }

  renderPair(cmp) {
    const pane = this.$("cmp-pair"), row = this.rows?.find((r) => r.id === this.params.k);
    if (!row) { pane.hidden = true; return; }
    pane.hidden = false;
    const { a, b } = this.params;
    const side = (run, k) => (k === null ? Promise.resolve(null) : this.cache.get(`p${run}/${k}`, () => getJSON(`/api/runs/${run}/kernels/${k}/passes`)));
    pane.innerHTML = `<div class="empty">Loading ${esc(row.name)}…</div>`;
    Promise.all([side(a, row.ka), side(b, row.kb)]).then(([pa, pb]) => {
      if (this.params.k !== row.id) return;
      pane.innerHTML = this.pairHTML(row, a, pa, b, pb);
    }).catch((err) => { pane.innerHTML = `<div class="empty">Could not load the kernels: ${esc(err.message)}</div>`; });
  }

  pairHTML(row, a, pa, b, pb) {
    const ka = pa?.kernel, kb = pb?.kernel;
    const head = (label, run, k, name) => `<div class="cmp-side"><h3>${label}: <span class="mono">${kernelNameHTML(k?.name ?? name, kernelHints(k), { legend: false })}</span></h3>` +
      (k ? `<div class="muted mono">${esc(k.device)} · global ${esc((k.global_size ?? []).join("×"))} · local ${esc((k.local_size ?? []).join("×") || "–")} · ` +
           `${num(k.flops)} FLOP · ${num(k.bytes)} B</div><a href="#" data-run="${run}" data-ctx="${k.ctx ?? ""}" data-kernel="${k.id}">open in run ${run}'s rewrites</a>`
         : `<div class="muted">no kernel record on this side${row.where !== "both" ? " (only the other run has it)" : " (a foreign trace's span)"}</div>`) + "</div>";
    let code = "";
    if (ka?.src || kb?.src) {
      const rows = lineDiff(ka?.src ?? "", kb?.src ?? ""), st = diffStats(rows);
      code = `<h3>code <span class="muted">${st.same} same, ${st.change} changed, ${st.del} only in A, ${st.add} only in B</span></h3>` +
        `<table class="cmp-diff mono">${rows.map((r) => `<tr class="d-${r.kind}"><td class="ln">${r.na ?? ""}</td><td>${esc(r.a ?? "")}</td>` +
          `<td class="ln">${r.nb ?? ""}</td><td>${esc(r.b ?? "")}</td></tr>`).join("")}</table>`;
    }
    const passes = passPairs(pa?.passes, pb?.passes);
    const pats = patternPairs(pa?.passes, pa?.patterns, pb?.passes, pb?.patterns);
    const pt = passes.length ? `<h3>passes <span class="muted">(matches per rewrite)</span></h3><table class="cmp-small"><tr><th>rewrite</th><th class="num">A</th><th class="num">B</th></tr>` +
      passes.map((p) => `<tr${p.a !== p.b ? ' class="differs"' : ""}><td>${esc(p.name)}</td><td class="num">${num(p.a)}</td><td class="num">${num(p.b)}</td></tr>`).join("") + "</table>" : "";
    const pp = pats.length ? `<h3>patterns that fired</h3><table class="cmp-small"><tr><th>pattern</th><th class="num">A</th><th class="num">B</th></tr>` +
      pats.map((p) => `<tr${p.a !== p.b ? ' class="differs"' : ""}><td class="mono" title="${esc(p.file)}:${p.line ?? ""}">${esc((p.source || p.key).split("\n")[0].slice(0, 90))}` +
        ` <span class="muted">${esc(p.file.split("/").pop())}:${p.line ?? ""}</span></td><td class="num">${p.a}</td><td class="num">${p.b}</td></tr>`).join("") + "</table>" : "";
    return `<div class="cmp-heads">${head("A", a, ka, row.name)}${head("B", b, kb, row.renamed ?? row.name)}</div>${code}<div class="cmp-passes">${pt}${pp}</div>`;
  }
}
