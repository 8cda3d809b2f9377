// Node search: by id ("42", "#42", "-7"), by op ("ADD", "op:add"), by arg ("arg:reduce") or any text found
// in op, dtype or arg, or in what the graph draws: a hub's inline name ("data2", "r0") and every label line (a node
// whose label reads "← 2, data2" is found by "data2"). Pure. Results are ids, best first: exact id, exact op, op
// prefix, then text matches, then label matches.
import { hubText, HUB_OPS } from "./graph.js";

/** Parse a query into {id?, op?, arg?, text?}; "" gives null. */
export function parseQuery(q) {
  const s = (q ?? "").trim();
  if (!s) return null;
  let m;
  if ((m = /^#?(-?\d+)$/.exec(s))) return { id: Number(m[1]), text: s.replace(/^#/, "").toLowerCase() };
  if ((m = /^op:\s*(.+)$/i.exec(s))) return { op: m[1].trim().toUpperCase() };
  if ((m = /^arg:\s*(.+)$/i.exec(s))) return { arg: m[1].trim().toLowerCase() };
  return { text: s.toLowerCase() };
}

/**
 * Ids of `nodes` matching `q` (a string or a parsed query), best first, at most `limit`. labels: id -> the label lines
 * drawn for the node (buildView's `lines`), so text drawn inline is found too.
 */
export function searchNodes(nodes, q, limit = 500, labels = null) {
  const p = typeof q === "string" ? parseQuery(q) : q;
  if (!p) return [];
  const scored = [];
  for (const u of nodes) {
    const op = u.op ?? "", arg = String(u.arg ?? "").toLowerCase();
    let score = -1;
    if (p.id !== undefined && u.id === p.id) score = 0;
    else if (p.op !== undefined) score = op === p.op ? 1 : op.startsWith(p.op) ? 2 : -1;
    else if (p.arg !== undefined) score = arg.includes(p.arg) ? 3 : -1;
    else if (p.text !== undefined) {
      const t = p.text, lop = op.toLowerCase();
      score = lop === t ? 1 : lop.startsWith(t) ? 2 : arg === t ? 3 : arg.includes(t) ? 4
        : (u.dtype ?? "").toLowerCase().replace(/^dtypes\./, "") === t ? 5
        : (HUB_OPS.has(op) || op === "RANGE") && hubText(u).toLowerCase() === t ? 3
        : labels?.get(u.id)?.some((l) => l.toLowerCase().includes(t)) ? 6 : -1;
    }
    if (score >= 0) scored.push([score, u.id]);
  }
  scored.sort((a, b) => a[0] - b[0] || Math.abs(a[1]) - Math.abs(b[1]) || a[1] - b[1]);
  return scored.slice(0, limit).map((x) => x[1]);
}
