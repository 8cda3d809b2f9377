// The UOp graph of one rewrite step as the view draws it. Pure: plain objects in, plain objects out.
//   - op families and their colours
//   - users, hubs (CONST / DEVICE / DEFINE_GLOBAL / a RANGE with many users) and where they go
//   - the diff between two steps: removed nodes stay drawn beside the new graph (the union of both)
//   - node labels and sizes, so the layout worker gets widths without measuring text

/** Op -> family; each family has one colour. */
const FAMILIES = {
  alu: ["ADD", "SUB", "MUL", "FDIV", "IDIV", "MOD", "MAX", "POW", "CMPLT", "CMPNE", "CMPEQ", "AND", "OR", "XOR", "SHL", "SHR",
    "WHERE", "MULACC", "EXP2", "LOG2", "SIN", "SQRT", "RECIP", "NEG", "TRUNC"],
  cast: ["CAST", "BITCAST", "VECTORIZE", "GEP"],
  const: ["CONST", "VCONST", "DEFINE_VAR", "DEVICE"],
  memory: ["BUFFER", "DEFINE_GLOBAL", "DEFINE_LOCAL", "DEFINE_REG", "INDEX", "LOAD", "STORE", "COPY", "BUFFER_VIEW", "ASSIGN", "AFTER"],
  movement: ["RESHAPE", "PERMUTE", "EXPAND", "PAD", "SHRINK", "FLIP", "VIEW"],
  reduce: ["REDUCE_AXIS", "REDUCE", "DEFINE_ACC", "ACC_UPDATE"],
  loop: ["RANGE", "ENDRANGE", "SPECIAL", "IF", "ENDIF", "BARRIER"],
  structure: ["SINK", "KERNEL", "NOOP", "CONTIGUOUS", "DETACH", "CALL", "GETTUPLE", "PARAM"],
};
export const FAMILY_COLORS = {
  alu: "#3b4f7a", cast: "#4b3b7a", const: "#3c3c44", memory: "#1f6b5a", movement: "#7a5a2a",
  reduce: "#8a3d3d", loop: "#6b3f7f", structure: "#2d5e8a", other: "#4a4a4a",
};
const FAMILY_OF = new Map(Object.entries(FAMILIES).flatMap(([f, ops]) => ops.map((op) => [op, f])));
export const opFamily = (op) => FAMILY_OF.get(op) ?? "other";
export const opColor = (op) => FAMILY_COLORS[opFamily(op)];
export const FAMILY_NAMES = Object.keys(FAMILY_COLORS);

/** Ops that are hubs whenever they have a user; other leaf-like nodes become hubs at HUB_USERS users. */
export const HUB_OPS = new Set(["CONST", "VCONST", "DEVICE", "DEFINE_GLOBAL", "DEFINE_VAR"]);
export const HUB_USERS = 8;

/** Index a node list: byId, users (id -> [user ids], in node order, with repeats for a source used twice). */
export function indexGraph(nodes) {
  const byId = new Map(), users = new Map();
  for (const u of nodes) byId.set(u.id, u);
  for (const u of nodes) for (const s of u.src ?? []) if (byId.has(s)) (users.get(s) ?? users.set(s, []).get(s)).push(u.id);
  return { nodes, byId, users };
}

/**
 * The ids to take out of the layout in hub mode "inline" or "hidden" ("shown": none). A hub is a node of
 * HUB_OPS with a user, or a node with at least HUB_USERS users whose own sources are all hubs or none
 * (a RANGE over a CONST). Nodes in `keep` (highlighted, selected) are never hubs.
 */
export function hubIds(g, mode = "inline", keep = new Set()) {
  const out = new Set();
  if (mode === "shown") return out;
  const isHub = (u) => !keep.has(u.id) && (g.users.get(u.id)?.length ?? 0) > 0;
  for (const u of g.nodes) if (HUB_OPS.has(u.op) && isHub(u)) out.add(u.id);
  for (const u of g.nodes) {
    if (out.has(u.id) || !isHub(u) || new Set(g.users.get(u.id)).size < HUB_USERS) continue;
    if ((u.src ?? []).every((s) => out.has(s) || !g.byId.has(s))) out.add(u.id);
  }
  return out;
}

/**
 * Which new nodes of step k stand for old nodes of step k-1. Hash-consing gives every node above a rewritten
 * one a new id, though only its sources changed: a new node whose op, dtype, arg and (mapped) sources equal
 * those of an old node that is gone is that node, rebuilt. Matched sources first, so a whole chain of
 * rebuilt users up to the root is found; `match` ({before, after}) lets `after` stand for `before` as a source.
 * Returns Map new id -> old id (rebuilt nodes only).
 */
export function correspond(prev, cur, match = null) {
  const prevIds = new Set(prev.map((u) => u.id)), curIds = new Set(cur.map((u) => u.id));
  const key = (u, src) => `${u.op}|${u.dtype}|${u.arg}|${src.join(",")}`;
  const gone = new Map();
  for (const u of prev) if (!curIds.has(u.id)) { const k = key(u, u.src ?? []); if (!gone.has(k)) gone.set(k, u.id); }
  const out = new Map(), taken = new Set();
  const asOld = (s) => out.get(s) ?? (match && s === match.after ? match.before : s);
  const byId = new Map(cur.map((u) => [u.id, u])), done = new Set();
  // sources first (iterative DFS), so a node's sources are mapped before it is looked up
  for (const root of cur) {
    const stack = [[root, false]];
    while (stack.length) {
      const [u, ready] = stack.pop();
      if (ready) {
        if (!prevIds.has(u.id)) {
          const old = gone.get(key(u, (u.src ?? []).map(asOld)));
          if (old !== undefined && !taken.has(old)) { out.set(u.id, old); taken.add(old); }
        }
        continue;
      }
      if (done.has(u.id)) continue;
      done.add(u.id);
      stack.push([u, true]);
      for (const s of u.src ?? []) { const v = byId.get(s); if (v && !done.has(s)) stack.push([v, false]); }
    }
  }
  return out;
}

/**
 * The graph the view draws for step k: step k's nodes plus the nodes match k-1 removed (from step k-1's
 * graph), each tagged state "added" | "removed" | "same". A rebuilt node (see `correspond`) is "same" and
 * carries `was` (its old id); the old node it replaces is not drawn. With no previous step all are "same".
 * removed/added: the server's lists (ids); computed from the two node lists when not given.
 */
export function unionGraph(cur, prev = null, removed = null, added = null, corr = null) {
  if (!prev) return cur.map((u) => ({ ...u, state: "same" }));
  const curIds = new Set(cur.map((u) => u.id)), prevIds = new Set(prev.map((u) => u.id));
  corr ??= new Map();
  const replaced = new Set(corr.values());
  const rem = new Set(removed ?? prev.filter((u) => !curIds.has(u.id)).map((u) => u.id));
  const add = new Set(added ?? cur.filter((u) => !prevIds.has(u.id)).map((u) => u.id));
  const out = cur.map((u) => (corr.has(u.id) ? { ...u, state: "same", was: corr.get(u.id) } : { ...u, state: add.has(u.id) ? "added" : "same" }));
  for (const u of prev) if (rem.has(u.id) && !curIds.has(u.id) && !replaced.has(u.id)) out.push({ ...u, state: "removed" });
  return out;
}

/** {removed, added}: ids of `prev` not in `cur`, ids of `cur` not in `prev` (sorted). */
export function diffSteps(prev, cur) {
  const a = new Set(prev.map((u) => u.id)), b = new Set(cur.map((u) => u.id));
  const num = (x, y) => x - y;
  return { removed: [...a].filter((id) => !b.has(id)).sort(num), added: [...b].filter((id) => !a.has(id)).sort(num) };
}

const DTYPE_SHORT = /^dtypes\./;
export const shortDtype = (d) => (d ?? "").replace(DTYPE_SHORT, "");

/** A hub as it reads inside its user's label: "2", "r0", "data1", "CPU". */
export function hubText(u) {
  const a = u.arg ?? "";
  if (u.op === "CONST") return a;
  if (u.op === "DEFINE_GLOBAL") { const m = /^\((\d+)/.exec(a); return m ? `data${m[1]}` : `glob${a}`; }
  if (u.op === "RANGE") { const m = /^\((\d+)/.exec(a); return m ? `r${m[1]}` : "range"; }
  if (u.op === "DEVICE") return a.replace(/^'|'$/g, "");
  return `${u.op.toLowerCase()} ${a}`.trim();
}

export const MAX_LABEL = 34;
const cut = (s, n = MAX_LABEL) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

/**
 * Label lines of a node: op and dtype, its arg (when it has one), and the hubs it reads as "<- 2, r0".
 * inlineSrcs: the hub nodes among its sources, in source order.
 */
export function nodeLabel(u, inlineSrcs = []) {
  const lines = [`${u.op}${u.dtype && u.dtype !== "dtypes.void" ? " " + shortDtype(u.dtype) : ""}`];
  if (u.arg !== undefined && u.arg !== null && u.arg !== "None" && u.arg !== "") lines.push(cut(String(u.arg)));
  if (inlineSrcs.length) lines.push(cut("← " + inlineSrcs.map(hubText).join(", ")));
  return lines;
}

export const FONT_PX = 11, CHAR_W = 6.7, LINE_H = 14, PAD_X = 10, PAD_Y = 6;
/** Width and height in pixels for label lines (monospace, so no measuring). */
export function labelSize(lines) {
  const w = Math.max(...lines.map((l) => l.length)) * CHAR_W + 2 * PAD_X;
  return { width: Math.ceil(Math.max(44, w)), height: lines.length * LINE_H + 2 * PAD_Y };
}

/**
 * The ids that belong only to the body of a @function call: reachable from the graph's tops (nodes no other node
 * uses) only through a CALL's first source. A call is drawn as one node; its body opens in its own context.
 */
export function callBodyIds(g) {
  const outside = new Set(), stack = g.nodes.filter((u) => !g.users.get(u.id)?.length).map((u) => u.id);
  while (stack.length) {
    const id = stack.pop();
    if (outside.has(id)) continue;
    outside.add(id);
    const u = g.byId.get(id), src = u.src ?? [];
    for (let i = u.op === "CALL" ? 1 : 0; i < src.length; i++) if (g.byId.has(src[i]) && !outside.has(src[i])) stack.push(src[i]);
  }
  return new Set(g.nodes.filter((u) => !outside.has(u.id)).map((u) => u.id));
}

/**
 * Everything the layout and the canvas need for one step: nodes (with label lines, size, state), the
 * edges [srcId, userId] in source order between drawn nodes, hub ids left out (and call bodies), and the index.
 * opts: {hubs: "inline" | "hidden" | "shown", keep: Set of ids never treated as hubs}
 */
export function buildView(nodes, opts = {}) {
  const g = indexGraph(nodes);
  const hubs = hubIds(g, opts.hubs ?? "inline", opts.keep ?? new Set());
  const bodies = callBodyIds(g);
  const drawn = [], edges = [];
  for (const u of nodes) {
    if (hubs.has(u.id) || bodies.has(u.id)) continue;
    const inl = opts.hubs === "hidden" ? [] : (u.src ?? []).filter((s) => hubs.has(s) && !bodies.has(s)).map((s) => g.byId.get(s));
    const lines = nodeLabel(u, inl);
    if (u.op === "CALL") lines.push("▸ body: double-click");
    drawn.push({ ...u, lines, ...labelSize(lines) });
    for (const s of u.src ?? []) if (g.byId.has(s) && !hubs.has(s) && !bodies.has(s)) edges.push([s, u.id]);
  }
  return { nodes: drawn, edges, hubs, bodies, index: g };
}

/**
 * A subgraph as one line of text, depth-limited: "ADD(CONST 2, CONST 2)"; deeper sources become "…#id".
 */
export function exprText(byId, id, depth = 3) {
  const u = byId.get(id);
  if (!u) return `#${id}`;
  const head = u.op + (u.arg && u.arg !== "None" ? ` ${cut(String(u.arg), 24)}` : "");
  if (!u.src?.length) return head;
  if (depth <= 0) return `${u.op}(…#${id})`;
  return `${head}(${u.src.map((s) => exprText(byId, s, depth - 1)).join(", ")})`;
}

/**
 * A subgraph as an indented tree, one node a line ("#12 ADD int" then its sources two spaces in), at most
 * `depth` levels and `maxLines` lines; a node met again is written once more as "#id ↑" without its sources.
 */
export function exprTree(byId, id, depth = 3, maxLines = 16) {
  const out = [], seen = new Set();
  const walk = (nid, d, indent) => {
    if (out.length >= maxLines) return;
    const u = byId.get(nid), pad = "  ".repeat(indent);
    if (!u) { out.push(`${pad}#${nid}`); return; }
    const again = seen.has(nid);
    seen.add(nid);
    const arg = u.arg && u.arg !== "None" ? ` ${cut(String(u.arg), 28)}` : "";
    const more = u.src?.length && (d <= 0 || again) ? (again ? " ↑" : " …") : "";
    out.push(`${pad}#${nid} ${u.op}${u.dtype && u.dtype !== "dtypes.void" ? " " + shortDtype(u.dtype) : ""}${arg}${more}`);
    if (!again && d > 0) for (const s of u.src ?? []) walk(s, d - 1, indent + 1);
  };
  walk(id, depth, 0);
  if (out.length >= maxLines) out.push("  …");
  return out;
}
