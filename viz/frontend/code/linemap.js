// Where a graph node ends up in the kernel's code, as far as the trace lets us know. Pure.
// The kernel record has the linearized program as text lines ("LOAD  float  ") without uop ids, and the
// rendered source. We match a node to a program line by op, dtype and arg (the k-th equal node in
// topological order to the k-th equal line), and a program line to a source line by walking both in order
// the way the C renderer emits them. Good for the common cases; a miss gives -1 (nothing highlighted).

/** "LOAD         float  None" -> {op, dtype, arg} (arg "" when none). */
export function parseUopLine(line) {
  const m = /^(\S+)\s+(\S+)\s*(.*)$/.exec(line.trim());
  return m ? { op: m[1], dtype: m[2], arg: m[3].trim() } : { op: line.trim(), dtype: "", arg: "" };
}

const keyOf = (op, dtype, arg) => `${op}|${dtype}|${arg}`;
const nodeKey = (u) => keyOf(u.op, (u.dtype ?? "").replace(/^dtypes\./, ""), u.arg === "None" || u.arg === undefined || u.arg === null ? "" : String(u.arg));

/**
 * Map node id -> index into `uopLines` for the nodes of a graph (`nodes`: [{id, op, dtype, arg, src}]).
 * Equal keys are paired in order: nodes in topological order (sources first, then by id), lines in program order.
 */
export function mapNodesToUops(nodes, uopLines) {
  const byKey = new Map();
  uopLines.forEach((line, i) => {
    const p = parseUopLine(line), k = keyOf(p.op, p.dtype, p.arg);
    (byKey.get(k) ?? byKey.set(k, []).get(k)).push(i);
  });
  const out = new Map(), used = new Map();
  for (const u of topoOrder(nodes)) {
    const k = nodeKey(u), lines = byKey.get(k);
    if (!lines) continue;
    const n = used.get(k) ?? 0;
    if (n < lines.length) { out.set(u.id, lines[n]); used.set(k, n + 1); }
  }
  return out;
}

function topoOrder(nodes) {
  const byId = new Map(nodes.map((u) => [u.id, u])), seen = new Set(), out = [];
  const sorted = [...nodes].sort((a, b) => Math.abs(a.id) - Math.abs(b.id));
  for (const r of sorted) {
    const stack = [[r, false]];
    while (stack.length) {
      const [u, done] = stack.pop();
      if (done) { out.push(u); continue; }
      if (seen.has(u.id)) continue;
      seen.add(u.id);
      stack.push([u, true]);
      for (let i = (u.src ?? []).length - 1; i >= 0; i--) { const s = byId.get(u.src[i]); if (s && !seen.has(s.id)) stack.push([s, false]); }
    }
  }
  return out;
}

// What source line each kind of program line produces (C renderer): a regex the line must match
const EMITS = {
  RANGE: /\bfor\s*\(/, ENDRANGE: /^\s*}\s*$/, DEFINE_ACC: /\bacc\d+\s*=/, ACC_UPDATE: /\bacc\d+\s*=\s*/,
  LOAD: /\bval\d+\s*=/, STORE: /\]\s*=[^=]|__builtin_memcpy\(data\d/,  // a vector store is a memcpy into the buffer
};
const ALU_LIKE = /^(ADD|SUB|MUL|FDIV|IDIV|MOD|MAX|POW|CMPLT|CMPNE|CMPEQ|AND|OR|XOR|SHL|SHR|WHERE|MULACC|EXP2|LOG2|SIN|SQRT|RECIP|NEG|TRUNC|CAST|BITCAST|VECTORIZE|GEP)$/;

/**
 * Map program line index -> source line index (0-based) for a kernel's `uopLines` and its rendered `src`.
 * DEFINE_GLOBALs map to the signature (the line with the kernel's "(" ), loops and statements to the next
 * line of their shape, an ALU op to the statement that follows it (where it is named or inlined).
 */
export function mapUopsToSource(uopLines, src) {
  const lines = String(src ?? "").split("\n");
  const sig = lines.findIndex((l) => /\w+\s*\(.*\)\s*{?\s*$/.test(l) && !/^\s*(for|if|while)\b/.test(l) && !/^\s*#/.test(l));
  const out = new Map();
  let at = sig >= 0 ? sig + 1 : 0;
  const next = (re) => {
    for (let j = at; j < lines.length; j++) if (re.test(lines[j]) && !/^\s*#/.test(lines[j])) return j;
    return -1;
  };
  const statement = () => { for (let j = at; j < lines.length; j++) if (lines[j].trim() && !/^\s*#/.test(lines[j])) return j; return -1; };
  uopLines.forEach((line, i) => {
    const { op } = parseUopLine(line);
    if (op === "DEFINE_GLOBAL" || op === "DEFINE_VAR") { if (sig >= 0) out.set(i, sig); return; }
    if (ALU_LIKE.test(op)) { const j = statement(); if (j >= 0) out.set(i, j); return; }
    const re = EMITS[op];
    if (!re) return;
    const j = next(re);
    if (j < 0) return;
    out.set(i, j); at = j + 1;
    // a vector load is two lines: `floatx8 val1 = {0};` and the memcpy that fills it
    const v = op === "LOAD" && /\b(val\d+)\s*=\s*\{0\}/.exec(lines[j]);
    if (v && lines[at]?.includes(`__builtin_memcpy(&${v[1]},`)) at += 1;
  });
  return out;
}

/**
 * The exact maps from a kernel's `line_uops` (per source line, the ids of the uops it renders; the line's own uop
 * first): node id -> the source lines (0-based) that hold it, and line -> its node ids.
 */
export function exactLineMaps(lineUops) {
  const nodeLines = new Map(), lineNodes = new Map();
  lineUops.forEach((ids, line) => {
    if (!ids?.length) return;
    lineNodes.set(line, ids);
    for (const id of ids) (nodeLines.get(id) ?? nodeLines.set(id, []).get(id)).push(line);
  });
  return { nodeLines, lineNodes };
}
