// The timeline's panels under the canvas, as DOM: a selected span's details, an area selection's table grouped
// by name, and the run's kernel summary. Each function fills a container from plain data and calls back on
// clicks; the numbers come from aggregate.js, the formatting from timefmt.js.

import { formatDuration, formatRate, formatCount, formatBytes, formatTick } from "./timefmt.js";
import { CATS } from "./chunk.js";
import { sortRows, filterRows } from "./aggregate.js";
import { kernelNameHTML, kernelHints } from "../kernelname.js";

/** h("td", {class: "num", onclick: f}, child, "text", ...): a DOM element. */
export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "html") e.innerHTML = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : String(c));
  return e;
}

/** A kernel name with its axes coloured by kind (kernelname.js); any other name as plain text. */
export function nameNode(name, kernel = null, legend = false) {
  return h("span", { class: "tl-name", html: kernelNameHTML(name, kernel ? kernelHints(kernel) : {}, { legend }) });
}

const rel = (t) => formatTick(t, 1, Math.max(Math.abs(t), 1));  // "12.345678 ms": exact to the ns

/**
 * A span's details. s: model.span(); extra: {args, kernel (the kernel record or null), device};
 * on: {rewrites(kernel), zoom(), next()}.
 */
export function spanDetails(box, s, extra, on) {
  const k = extra.kernel;
  const rows = [
    ["track", s.track.name + (s.track.kind === "device" ? "" : `  (${s.track.kind})`)],
    ["device", extra.device ?? "-"],
    // as recorded (the server's answer: PyTorch's "cpu_op"); the chunk's code names only our own categories
    ["category", extra.cat != null ? extra.cat || "-" : s.cat === CATS.length - 1 ? "…" : CATS[s.cat] ?? String(s.cat)],
    ["start", rel(s.start)],
    ["duration", formatDuration(s.dur)],
    ["self", formatDuration(s.self)],
    ["end", rel(s.end)],
    ["lane", String(s.depth)],
  ];
  const a = extra.args ?? {};
  if (k || s.cat === 0) {
    // the kernel record when the trace has one (the trace format's names), else what the span's args say
    const { flops, bytes, global_size: gs, local_size: ls } = k ?? a;
    rows.push(["global size", gs ? `[${gs.join(", ")}]` : "-"], ["local size", ls && ls.length ? `[${ls.join(", ")}]` : "-"],
      ["FLOPs", formatCount(flops)], ["bytes", bytes == null ? "-" : `${formatCount(bytes)} (${formatBytes(bytes)})`]);
    // a rate only for the kernel's run: over a codegen or compile span it would be the kernel's work per compile time
    if (s.cat === 0) rows.push(["GFLOPS", formatRate(flops / s.dur)], ["GB/s", formatRate(bytes / s.dur)]);
  } else if (a.bytes != null) rows.push(["bytes", `${formatCount(a.bytes)} (${formatBytes(a.bytes)})`], ["GB/s", formatRate(a.bytes / s.dur)]);
  const shown = new Set(["kernel", "flops", "bytes", "global_size", "local_size", "kernel_info"]);
  for (const [key, v] of Object.entries(a)) if (!shown.has(key)) rows.push([key, typeof v === "object" ? JSON.stringify(v) : String(v)]);

  const links = [];
  if (k) {
    const ok = k.ctx != null && k.ctx >= 0;
    links.push(ok ? h("button", { class: "tl-link tl-rewrites", onclick: () => on.rewrites(k), title: "its codegen rewrites and generated source" }, "Open in rewrite explorer ›")
      : h("span", { class: "tl-muted", title: "recorded with PROFILE=1: timing only" }, "no rewrites recorded for this kernel"));
  }
  links.push(h("button", { class: "tl-link", onclick: on.zoom, title: "f" }, "Zoom to span"));
  links.push(h("button", { class: "tl-link", onclick: on.next, title: "the next span with this name" }, "Next with this name ›"));
  box.replaceChildren(
    h("div", { class: "tl-dhead" }, nameNode(s.name, k, true), h("span", { class: "tl-muted" }, ` ${formatDuration(s.dur)}`)),
    h("div", { class: "tl-links" }, links),
    h("div", { class: "tl-kv" }, rows.map(([key, v]) => h("div", { class: "tl-kvrow" }, h("span", { class: "tl-k", title: key }, key), h("span", { class: "tl-v" }, v)))),
  );
}

const COLS_AREA = [
  { key: "name", label: "name" }, { key: "count", label: "count", num: true, fmt: formatCount },
  { key: "total", label: "total", num: true, fmt: formatDuration }, { key: "self", label: "self", num: true, fmt: formatDuration },
  { key: "share", label: "% (self)", num: true, fmt: v => (v * 100).toFixed(1) },
  { key: "mean", label: "mean", num: true, fmt: formatDuration },
  { key: "min", label: "min", num: true, fmt: formatDuration }, { key: "max", label: "max", num: true, fmt: formatDuration },
];

/**
 * An area selection: a header, a sortable table of its spans by name, and its counters' min, max and mean;
 * counters: [{name, min, max, mean, fmt(v)}]; on: {row(r), zoom(), clear()}; sort: {key, dir} (kept by caller).
 */
export function areaTable(box, area, rows, sort, on, counters = []) {
  const nspans = rows.reduce((s, r) => s + r.count, 0), self = rows.reduce((s, r) => s + r.self, 0);
  for (const r of rows) r.share = self ? r.self / self : 0;
  const head = h("div", { class: "tl-dhead" },
    h("b", {}, `${formatCount(nspans)} spans`), ` in ${formatDuration(area.t1 - area.t0)} on ${area.tracks.size} track${area.tracks.size === 1 ? "" : "s"}, ${rows.length} names, ${formatDuration(self)} self time`,
    h("button", { class: "tl-link", onclick: on.zoom }, "Zoom to selection"), h("button", { class: "tl-link", onclick: on.clear }, "Clear"));
  const parts = [head, table(COLS_AREA, sortRows(rows, sort.key, sort.dir), sort, on, "tl-area-table")];
  if (counters.length) parts.push(h("table", { class: "tl-table tl-counter-table" },
    h("thead", {}, h("tr", {}, ["counter", "min", "max", "mean"].map((c, i) => h("th", { class: i ? "num" : null }, c)))),
    h("tbody", {}, counters.map(c => h("tr", {}, h("td", { class: "name" }, c.name), ...[c.min, c.max, c.mean].map(v => h("td", { class: "num" }, c.fmt(v))))))));
  box.replaceChildren(...parts);
}

const COLS_SUMMARY = [
  { key: "name", label: "kernel" }, { key: "device", label: "device" }, { key: "count", label: "count", num: true, fmt: formatCount },
  { key: "total", label: "total", num: true, fmt: formatDuration }, { key: "self", label: "self", num: true, fmt: formatDuration },
  { key: "share", label: "% (self)", num: true, fmt: v => (v * 100).toFixed(1) },
  { key: "mean", label: "mean", num: true, fmt: formatDuration }, { key: "gflops", label: "GFLOPS", num: true, fmt: formatRate },
  { key: "gbs", label: "GB/s", num: true, fmt: formatRate },
];
const MAX_ROWS = 500;

/**
 * The run's kernel summary (aggregate.kernelSummary) with a filter box. state: {filter, sort} (kept by caller);
 * on: {filter(q), sort(s), row(r) (select its spans), hasRewrites(r), rewrites(r)}.
 */
export function summaryTable(box, summary, state, on) {
  let input = box.querySelector("input.tl-filter");
  if (!input) {
    input = h("input", { class: "tl-filter", type: "search", placeholder: "filter kernels (text or /regex/)", spellcheck: "false" });
    input.addEventListener("input", () => on.filter(input.value));
    box.replaceChildren(h("div", { class: "tl-dhead" }, input, h("span", { class: "tl-muted tl-count" })), h("div", { class: "tl-tablebox" }));
  }
  if (input.value !== state.filter && document.activeElement !== input) input.value = state.filter;
  const rows = filterRows(summary.rows, state.filter).map(r => Object.assign(r, { share: summary.total ? r.self / summary.total : 0 }));
  const sorted = sortRows(rows, state.sort.key, state.sort.dir);
  const what = summary.allSpans ? "names (no kernel spans in this run: all spans summed)" : "kernels";
  box.querySelector(".tl-count").textContent = ` ${rows.length} of ${summary.rows.length} ${what}, ${formatDuration(summary.total)} in all (self times: nested spans count once)` +
    (sorted.length > MAX_ROWS ? `; first ${MAX_ROWS} shown` : "");
  const cols = summary.allSpans ? [{ ...COLS_SUMMARY[0], label: "name" }, ...COLS_SUMMARY.slice(1)] : COLS_SUMMARY;
  const tbl = table(cols, sorted.slice(0, MAX_ROWS), state.sort, on, "tl-summary-table", r =>
    h("td", { class: "tl-actions" },
      h("button", { class: "tl-link", onclick: (e) => { e.stopPropagation(); on.row(r); }, title: "select its spans, one after another" }, "spans"),
      on.hasRewrites(r) ? h("button", { class: "tl-link", onclick: (e) => { e.stopPropagation(); on.rewrites(r); }, title: "its rewrites and source" }, "rewrites") : null));
  box.querySelector(".tl-tablebox").replaceChildren(tbl);
}

function table(cols, rows, sort, on, cls, extra = null) {
  const th = cols.map(c => h("th", {
    class: (c.num ? "num " : "") + (sort.key === c.key ? (sort.dir < 0 ? "sorted desc" : "sorted asc") : ""),
    onclick: () => on.sort({ key: c.key, dir: sort.key === c.key ? -sort.dir : (c.num ? -1 : 1) }),
    title: "sort",
  }, c.label));
  if (extra) th.push(h("th", {}, ""));
  const body = rows.map(r => h("tr", { onclick: () => on.row(r), class: on.isActive?.(r) ? "active" : null },
    cols.map(c => c.key === "name" ? h("td", { class: "name" }, nameNode(r.name, on.kernelOf?.(r) ?? null)) : h("td", { class: c.num ? "num" : null }, c.fmt ? c.fmt(r[c.key]) : String(r[c.key] ?? ""))),
    extra ? extra(r) : null));
  return h("table", { class: `tl-table ${cls}` }, h("thead", {}, h("tr", {}, th)), h("tbody", {}, body));
}
