// The URL hash holds the whole view state, so a reload or a shared link opens the same thing:
//   #/rewrites?run=1&ctx=5&rw=8&step=3&node=42&code=1&layout=lr&cam=420,1180,1.1
//   #/timeline?run=1&...            (the timeline keeps its own keys here too)
//   #/compare?a=1&b=2&sort=delta&k=both:r_64_64_64
// Pure: strings in, plain objects out. Keys this module does not know are kept as strings, in order.

export const VIEWS = ["rewrites", "timeline", "compare"];
export const DEFAULT_VIEW = "rewrites";

// integer-valued keys (node ids may be negative: nodes the engine never interned)
const INT_KEYS = new Set(["run", "ctx", "rw", "step", "node", "kernel", "a", "b"]);  // a, b: the compare view's runs
// written in this order, before any other key
const ORDER = ["run", "ctx", "rw", "step", "node", "kernel", "hubs", "code", "q", "layout", "cam"];
// picking something at one level clears the levels below it; another run clears every key but these.
// cam (the graph's camera) belongs to one rewrite's graph; layout (tb / lr) is a preference
const BELOW = { ctx: ["rw", "step", "node", "kernel", "cam", "open"], rw: ["step", "node", "cam", "open"] };  // open: a schedule's opened kernel boxes
const KEEP_ACROSS_RUNS = new Set(["hubs", "code", "tab", "layout", "a", "b", "sort", "dir", "k"]);  // view preferences, and the compare view's own keys

/** "#/view?k=v&..." -> {view, params}. Unknown views fall back to the default; bad integers are dropped. */
export function parseHash(hash) {
  let s = (hash ?? "").replace(/^#/, "").replace(/^\//, "");
  const q = s.indexOf("?");
  const path = q < 0 ? s : s.slice(0, q), query = q < 0 ? "" : s.slice(q + 1);
  const view = VIEWS.includes(path) ? path : DEFAULT_VIEW;
  const params = {};
  for (const part of query.split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    const k = decode(eq < 0 ? part : part.slice(0, eq)), v = eq < 0 ? "" : decode(part.slice(eq + 1));
    if (!k) continue;
    if (INT_KEYS.has(k)) { if (/^-?\d+$/.test(v)) params[k] = Number(v); }
    else params[k] = v;
  }
  return { view, params };
}

/** {view, params} -> "#/view?k=v&..."; null, undefined and "" values are left out. */
export function formatHash({ view = DEFAULT_VIEW, params = {} }) {
  const keys = Object.keys(params).filter((k) => params[k] !== null && params[k] !== undefined && params[k] !== "");
  keys.sort((a, b) => rank(a) - rank(b) || (rank(a) === ORDER.length ? (a < b ? -1 : a > b ? 1 : 0) : 0));
  const query = keys.map((k) => `${encode(k)}=${encode(String(params[k]))}`).join("&");
  return `#/${VIEWS.includes(view) ? view : DEFAULT_VIEW}${query ? "?" + query : ""}`;
}

/** A new state with `patch` merged into params (null/undefined deletes a key); `view` may change too. */
export function withParams(state, patch = {}, view = state.view) {
  const params = { ...state.params };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === undefined) delete params[k];
    else params[k] = v;
  }
  return { view, params };
}

/**
 * Pick a value at one level of run > ctx > rw > step: the levels below it are cleared unless the patch
 * sets them too. Choosing another run forgets everything of the old run (context, rewrite, step, node, the
 * timeline's viewport and span, the search) and keeps the view preferences (hubs, code, tab).
 */
export function select(state, patch) {
  const params = { ...state.params };
  for (const [k, v] of Object.entries(patch)) {
    if (params[k] === v) continue;
    const below = k === "run" ? Object.keys(params).filter((b) => b !== "run" && !KEEP_ACROSS_RUNS.has(b)) : BELOW[k] ?? [];
    for (const b of below) if (!(b in patch)) delete params[b];
  }
  return withParams({ view: state.view, params }, patch);
}

/** Two states describe the same view. */
export const sameState = (a, b) => formatHash(a) === formatHash(b);

function rank(k) { const i = ORDER.indexOf(k); return i < 0 ? ORDER.length : i; }
function decode(s) { try { return decodeURIComponent(s.replace(/\+/g, " ")); } catch { return s; } }
function encode(s) { return encodeURIComponent(s).replace(/%20/g, "+").replace(/%2C/g, ",").replace(/%3A/g, ":"); }

/** The graph camera as the URL holds it: "cx,cy,zoom" (the view's centre in graph units) <-> {x, y, k}; null if bad. */
export function parseCamera(v) {
  const m = /^(-?[\d.]+(?:e-?\d+)?),(-?[\d.]+(?:e-?\d+)?),([\d.]+(?:e-?\d+)?)$/.exec(v ?? "");
  if (!m) return null;
  const [x, y, k] = m.slice(1).map(Number);
  return Number.isFinite(x) && Number.isFinite(y) && k > 0 && Number.isFinite(k) ? { x, y, k } : null;
}
export const formatCamera = ({ x, y, k }) => `${Math.round(x)},${Math.round(y)},${+k.toFixed(3)}`;
