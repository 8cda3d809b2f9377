// Splitters between the page's panes (the sidebar's fold is app.js's ☰ button). The widths live in CSS variables on <html>
// (style.css clamps them so the graph keeps at least half the window), remembered in localStorage. A splitter is
// a thin handle laid over the boundary it moves (absolutely placed in #main, re-placed whenever a pane resizes),
// so the panes themselves keep their plain flex / grid layout.

const KEY = "tinyviz.panes";
const $ = (id) => document.getElementById(id);

// each splitter: the boundary it sits on, the variable it sets, and how a drag changes it
const SPLITS = [
  // right edge of the sidebar
  { id: "split-sidebar", axis: "x", edge: () => $("sidebar"), side: "right", v: "--sidebar-w", px: (r, x) => x - r.left },
  // left edge of the details panel (code closed) or of the details + code column (code open)
  { id: "split-right", axis: "x", edge: () => (codeOpen() ? $("code-pane") : $("rw-panel")), side: "left",
    v: () => (codeOpen() ? "--right-w" : "--panel-w"), px: (r, x) => $("rw-body").getBoundingClientRect().right - x },
  // between the details (above) and the code (below) when the code is open
  { id: "split-code", axis: "y", edge: () => (codeOpen() ? $("code-pane") : null), side: "top", v: "--details-h",
    px: (r, y) => y - $("rw-body").getBoundingClientRect().top },
];
const codeOpen = () => $("view-rewrites")?.classList.contains("with-code") && !$("code-pane").hidden;

export function initPanes() {
  const main = $("main"), root = document.documentElement;
  let saved = {};
  try { saved = JSON.parse(localStorage.getItem(KEY) || "{}"); } catch { saved = {}; }
  for (const [k, v] of Object.entries(saved)) if (/^--[\w-]+$/.test(k) && /^\d+px$/.test(v)) root.style.setProperty(k, v);

  const handles = SPLITS.map((s) => {
    const h = document.createElement("div");
    h.id = s.id; h.className = `splitter ${s.axis}`;
    h.title = "drag to resize";
    main.appendChild(h);
    h.addEventListener("pointerdown", (e) => {
      const el = s.edge();
      if (!el) return;
      e.preventDefault();
      h.setPointerCapture(e.pointerId);
      h.classList.add("dragging");
      const move = (ev) => {
        const v = typeof s.v === "function" ? s.v() : s.v, r = el.getBoundingClientRect();
        root.style.setProperty(v, `${Math.max(80, Math.round(s.px(r, s.axis === "x" ? ev.clientX : ev.clientY)))}px`);
        place();
      };
      const up = () => { h.classList.remove("dragging"); h.removeEventListener("pointermove", move); h.removeEventListener("pointerup", up); save(); };
      h.addEventListener("pointermove", move);
      h.addEventListener("pointerup", up);
    });
    return h;
  });

  // the handles follow the boundaries
  const place = () => {
    const m = main.getBoundingClientRect();
    SPLITS.forEach((s, i) => {
      const el = s.edge(), h = handles[i], r = el?.getBoundingClientRect();
      const off = !el || !el.offsetParent || !r.width || !r.height;
      if (h.hidden !== off) h.hidden = off;  // only on a change: the observer below sees every write
      if (off) return;
      if (s.axis === "x") Object.assign(h.style, { left: `${r[s.side] - m.left - 3}px`, top: `${r.top - m.top}px`, height: `${r.height}px`, width: "", });
      else Object.assign(h.style, { top: `${r.top - m.top - 3}px`, left: `${r.left - m.left}px`, width: `${r.width}px`, height: "" });
    });
  };
  const ro = new ResizeObserver(place);
  for (const id of ["main", "sidebar", "rw-body", "rw-panel", "code-pane", "graph-wrap"]) if ($(id)) ro.observe($(id));
  new MutationObserver((list) => { if (list.some((m) => !m.target.classList?.contains("splitter"))) place(); })
    .observe(document.body, { attributes: true, subtree: true, attributeFilter: ["hidden", "class", "data-view"] });

  place();
  return { place };
}

function save() {
  const root = document.documentElement, out = {};
  for (const v of ["--sidebar-w", "--panel-w", "--right-w", "--details-h"]) {
    const val = root.style.getPropertyValue(v);
    if (val) out[v] = val;
  }
  try { localStorage.setItem(KEY, JSON.stringify(out)); } catch { /* private mode: widths last for the page */ }
}
