// The app shell: the run list (fed by the websocket's `runs` messages), the view tabs, the URL state, and
// the two views. Everything the page shows follows from the URL hash (common/urlstate.js): user actions call
// `nav`, which writes the hash and renders; a reload or a shared link renders the same state.
//
// Timeline hook. The Timeline tab imports ./timeline/index.js when first shown and calls its
//   mountTimeline(el, ctx) -> handle        (the contract is documented at the top of timeline/index.js)
// with el = <section id="view-timeline"> and ctx = {runId, api, state, setState, navigate, subscribe}:
//   state      the URL's params (the timeline reads its own keys: t0 t1 span tab kq)
//   setState   writes the timeline's keys into the URL (history.replaceState; null deletes a key)
//   navigate   {view: "rewrites", run, ctx, kernel, code} opens another view (a new history entry)
//   subscribe  fn gets every /ws message (runs, events with gap flag); returns an unsubscribe function
// The shell calls handle.setState(params) when the URL changes from outside (back button, a pasted link),
// handle.resize() when the view is shown again, and handle.destroy() before mounting it for another run.
// The keys the shell itself uses: run ctx rw step node kernel hubs code q (common/urlstate.js).
import { parseHash, formatHash, select, withParams, sameState } from "./common/urlstate.js";
import { api } from "./common/api.js";
import { LiveClient, wsURL } from "./common/ws.js";
import { RunModel } from "./rewrites/tree.js";
import { RewritesView } from "./rewrites/view.js";
import { CompareView } from "./compare/view.js";
import { esc } from "./common/esc.js";

const $ = (id) => document.getElementById(id);

let state = parseHash(location.hash);
let runs = [];                 // as /api/runs and the `runs` message give them
const runData = new Map();     // run id -> {model, status: "loading" | "ok" | "error", message}
let timeline = null;           // {run, handle} once mounted, {error} if the module failed to load
let timelineModule = null;     // the import() promise
const liveSubscribers = new Set();

// ---- navigation: every change of view state goes through here
function nav(patch, { push = false, replaceOnly = false, view = state.view } = {}) {
  let next = select(state, patch);
  if (view !== next.view) next = withParams(next, {}, view);
  if (sameState(next, state)) return;
  state = next;
  const url = formatHash(state);
  if (push && !replaceOnly) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
  render();
}

window.addEventListener("hashchange", () => {
  const next = parseHash(location.hash);
  if (sameState(next, state)) return;
  state = next;
  render(true);
});
window.addEventListener("popstate", () => {
  const next = parseHash(location.hash);
  if (!sameState(next, state)) { state = next; render(true); }
});

// ---- runs and their contexts
function model(run) { return runData.get(run)?.model ?? null; }
function modelMessage(run) {
  const d = runData.get(run);
  if (!d) return runs.some((r) => r.id === run) ? "Loading…" : `Run ${run} is not known to this server.`;
  if (d.status === "error") return d.message;
  if (d.status === "loading") return "Loading the run's contexts…";
  return d.model.contexts.size ? "" : d.message;
}

async function loadRun(run) {
  const d = runData.get(run);
  if (d && d.status !== "error") return;
  runData.set(run, { model: null, status: "loading", message: "" });
  try {
    const snap = await api.contexts(run);
    const m = new RunModel();
    m.merge(snap);
    const info = runs.find((r) => r.id === run);
    const message = info?.kind === "chrome" ? "A Chrome trace has no graph rewrites: see its Timeline." : info?.live ? "No rewrites yet: they appear here as the script runs." : "No rewrites in this run (recorded with PROFILE=1?).";
    runData.set(run, { model: m, status: "ok", message });
  } catch (err) {
    runData.set(run, { model: null, status: "error", message: `Could not load run ${run}: ${err.message}` });
  }
  if (state.params.run === run) render();
}

function setRuns(list) {
  runs = list;
  renderRuns();
  if (state.params.run === undefined && runs.length) {
    const last = runs[runs.length - 1];
    // a bare URL on a Chrome trace opens its timeline: it has no rewrites
    nav({ run: last.id }, { replaceOnly: true, view: !location.hash && last.kind === "chrome" ? "timeline" : state.view });
  }
  else render();
}

let liveRender = false;
function onLive(msg) {
  if (msg.type === "runs") setRuns(msg.runs);
  else if (msg.type === "events") {
    const d = runData.get(msg.run);
    if (d?.status === "ok") {
      if (msg.gap) { runData.delete(msg.run); loadRun(msg.run); }
      else if (d.model.merge(msg) && msg.run === state.params.run && !liveRender) {
        liveRender = true;
        requestAnimationFrame(() => { liveRender = false; render(); });
      }
    }
    const r = runs.find((x) => x.id === msg.run);
    if (r && msg.n_events !== undefined && msg.n_events !== r.n_events) { r.n_events = msg.n_events; renderRuns(); }
  } else if (msg.type === "error") console.warn("viz server:", msg.message);
  for (const fn of liveSubscribers) fn(msg);
}

function renderRuns() {
  const list = $("run-list");
  list.innerHTML = runs.map((r) => `<li data-run="${r.id}" class="${r.id === state.params.run ? "sel" : ""}" title="${esc(r.path)}">
      <span class="badge kind-${esc(r.kind)}">${r.kind === "chrome" ? "json" : "tv"}</span>
      <span class="run-name">${esc(r.name)}</span>
      ${r.live ? `<span class="live-dot" title="live: still receiving events"></span>` : ""}
      <span class="muted mono count">${r.n_events ?? ""}</span>
      ${r.warnings?.length ? `<span class="warn" title="${esc(r.warnings.map((w) => `line ${w.line ?? "?"}: ${w.message}`).join("\n"))}">⚠ ${r.warnings.length}</span>` : ""}
    </li>`).join("") || `<li class="empty">Waiting for runs…</li>`;
  const cur = runs.find((r) => r.id === state.params.run);
  $("run-title").innerHTML = cur ? `<span class="mono">${esc(cur.name)}</span>${cur.live ? ` <span class="live-dot"></span> live` : ""}` : "";
}

$("run-list").addEventListener("click", (e) => {
  const li = e.target.closest("[data-run]");
  if (li) nav({ run: Number(li.dataset.run) }, { push: true });
});

// ---- views
const rewrites = new RewritesView($("view-rewrites"), { nav, model, modelMessage });
const compare = new CompareView($("view-compare"), { nav });

/** From a kernel (e.g. a timeline span) to its codegen context's rewrites, code open. */
function openKernel(kernelId, run = state.params.run) {
  const k = model(run)?.kernels.get(kernelId);
  if (!k || k.ctx === null || k.ctx < 0) { nav({ run, kernel: kernelId }, { push: true, view: "rewrites" }); return; }
  nav({ run, ctx: k.ctx, rw: null, step: null, node: null, code: "1", kernel: kernelId }, { push: true, view: "rewrites" });
}

function timelineContext(run) {
  return {
    runId: run,
    api,
    state: { ...state.params },
    setState: (patch) => { if (state.view === "timeline" && state.params.run === run) nav(patch, { view: "timeline" }); },
    navigate: ({ view = "rewrites", ...params }) => {
      if (view === "rewrites" && params.kernel !== undefined && params.ctx === undefined) { openKernel(params.kernel, params.run ?? run); return; }
      const patch = { ...params };
      if (patch.code !== undefined && patch.code !== null) patch.code = String(patch.code);
      if (view === "rewrites" && patch.ctx !== undefined) Object.assign(patch, { rw: patch.rw ?? null, step: patch.step ?? null, node: patch.node ?? null });
      nav(patch, { push: true, view });
    },
    subscribe: (fn) => { liveSubscribers.add(fn); return () => liveSubscribers.delete(fn); },
  };
}

/** Show the timeline of the current run: import the module once, mount it per run. */
function showTimeline(fromOutside) {
  const el = $("view-timeline"), run = state.params.run;
  if (run === undefined) { if (!timeline?.handle) el.innerHTML = `<div class="empty">No run selected.</div>`; return; }
  if (timeline?.error) return;
  if (timeline?.handle && timeline.run === run) {
    if (fromOutside) timeline.handle.setState?.({ ...state.params });
    return;
  }
  timelineModule ??= import("./timeline/index.js");
  timelineModule.then((mod) => {
    if (state.view !== "timeline" || state.params.run !== run || (timeline?.handle && timeline.run === run)) return;
    timeline?.handle?.destroy?.();
    el.innerHTML = "";
    timeline = { run, handle: mod.mountTimeline(el, timelineContext(run)) ?? {} };
  }).catch((err) => {
    timeline = { error: err };
    el.innerHTML = `<div class="empty">The timeline view is not available (${esc(err.message)}).</div>`;
  });
}

function render(fromOutside = false) {
  const { view, params } = state;
  if (params.run !== undefined && !runData.has(params.run) && runs.some((r) => r.id === params.run)) loadRun(params.run);
  // a kernel id alone (a link from elsewhere) opens that kernel's context once the run is loaded
  if (view === "rewrites" && params.kernel !== undefined && params.ctx === undefined && model(params.run)) {
    const k = model(params.run).kernels.get(params.kernel);
    if (k && k.ctx !== null && k.ctx >= 0) { nav({ ctx: k.ctx, code: "1" }, { replaceOnly: true }); return; }
  }
  for (const a of document.querySelectorAll("#tabs [data-view]")) {
    a.classList.toggle("active", a.dataset.view === view);
    a.setAttribute("aria-selected", String(a.dataset.view === view));
    const p = state.params;
    a.href = formatHash({ view: a.dataset.view, params: p });
  }
  document.body.dataset.view = view;
  const wasTimeline = !$("view-timeline").hidden;
  $("view-rewrites").hidden = view !== "rewrites";
  $("view-timeline").hidden = view !== "timeline";
  $("view-compare").hidden = view !== "compare";
  $("contexts").hidden = view !== "rewrites";
  renderRuns();
  if (view === "rewrites") rewrites.update(state);
  else if (view === "compare") compare.update(state, runs);
  else {
    showTimeline(fromOutside || !wasTimeline);
    if (!wasTimeline) timeline?.handle?.resize?.();
  }
}

// ---- keys: the active view first; ? for help
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t instanceof HTMLElement && (t.matches("input:not([type=range]), textarea, select") || t.isContentEditable)) return;
  if (t instanceof HTMLInputElement && t.type === "range" && /^(Arrow|Home|End|Page)/.test(e.key)) return;  // the slider steps itself
  if (e.key === "?") { $("help").hidden = !$("help").hidden; e.preventDefault(); return; }
  if (e.key === "Escape" && !$("help").hidden) { $("help").hidden = true; return; }
  if (state.view === "rewrites" && rewrites.onKey(e)) e.preventDefault();  // the timeline listens for its own keys
});
$("help-btn").onclick = () => { $("help").hidden = !$("help").hidden; };
// the ☰ button folds the sidebar (kept across reloads)
try { document.body.classList.toggle("side-folded", localStorage.getItem("tinyviz.sidebar") === "folded"); } catch { /* no storage */ }
$("side-btn").onclick = () => {
  const folded = document.body.classList.toggle("side-folded");
  try { localStorage.setItem("tinyviz.sidebar", folded ? "folded" : "open"); } catch { /* no storage */ }
};
$("help").onclick = () => { $("help").hidden = true; };
$("tabs").addEventListener("click", (e) => {
  const a = e.target.closest("[data-view]");
  if (!a) return;
  e.preventDefault();
  nav({}, { push: true, view: a.dataset.view });
});

// ---- one floating tooltip for every kernel name's legend (the legend's HTML rides inside the name)
const tip = document.createElement("div");
tip.id = "tooltip";
tip.hidden = true;
document.body.appendChild(tip);
document.addEventListener("mouseover", (e) => {
  const k = e.target instanceof Element ? e.target.closest(".kname") : null;
  const legend = k?.querySelector(".kn-legend");
  if (!legend) { tip.hidden = true; return; }
  tip.innerHTML = legend.innerHTML;
  tip.hidden = false;
  const r = k.getBoundingClientRect(), w = tip.offsetWidth, h = tip.offsetHeight;
  tip.style.left = `${Math.max(4, Math.min(innerWidth - w - 4, r.left))}px`;
  tip.style.top = `${r.bottom + 6 + h > innerHeight ? r.top - h - 6 : r.bottom + 6}px`;
});

// ---- start: the snapshot of runs over HTTP (in case the socket is slow), then live over the socket
const conn = $("conn");
new LiveClient(wsURL("/ws"), {
  onMessage: onLive,
  onStatus: (s) => { conn.textContent = s === "open" ? "connected" : s; conn.dataset.status = s; },  // "live" is a run's, not the socket's
}).start();
api.runs().then((list) => { if (!runs.length) setRuns(list); }).catch((err) => {
  $("run-list").innerHTML = `<li class="empty">Could not reach the server: ${esc(err.message)}</li>`;
});
render();

// for tests and the console
window.tinyviz = { get state() { return state; }, nav, rewrites, runs: () => runs, model };
