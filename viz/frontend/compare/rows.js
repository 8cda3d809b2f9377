// The compare table's rows (pure): /api/compare's answer flattened into one list (kernels in both, then only in A,
// only in B) and sorted by a column. Sorting is stable; missing values sort last whatever the direction.

export const COLUMNS = [
  { key: "name", label: "kernel", num: false },
  { key: "na", label: "n A", num: true }, { key: "nb", label: "n B", num: true },
  { key: "ta", label: "total A", num: true }, { key: "tb", label: "total B", num: true },
  { key: "ma", label: "mean A", num: true }, { key: "mb", label: "mean B", num: true },
  { key: "sa", label: "self A", num: true }, { key: "sb", label: "self B", num: true },
  { key: "delta", label: "B − A", num: true }, { key: "ratio", label: "B/A", num: true },
];

/** One row per kernel: {id, name, renamed, where: "both" | "a" | "b", na, nb, ta, tb, ma, mb, sa, sb, delta, ratio, ka, kb}. */
export function compareRows(cmp) {
  const row = (k, where) => ({
    id: `${where}:${k.name}`, name: k.name, renamed: k.renamed ?? null, where,
    na: k.a?.count ?? null, nb: k.b?.count ?? null, ta: k.a?.total_ns ?? null, tb: k.b?.total_ns ?? null,
    ma: k.a?.mean_ns ?? null, mb: k.b?.mean_ns ?? null, sa: k.a?.self_ns ?? null, sb: k.b?.self_ns ?? null,
    delta: k.delta_ns, ratio: k.ratio ?? null, ka: k.a?.kernel ?? null, kb: k.b?.kernel ?? null,
  });
  return [...cmp.kernels.map((k) => row(k, "both")), ...cmp.only_a.map((k) => row(k, "a")), ...cmp.only_b.map((k) => row(k, "b"))];
}

/** Sorted by `key` ("delta" sorts by its size, |B − A|); desc puts the largest first. */
export function sortRows(rows, key = "delta", desc = true) {
  const col = COLUMNS.find((c) => c.key === key) ?? COLUMNS.find((c) => c.key === "delta");
  const val = (r) => (col.key === "delta" && r.delta !== null ? Math.abs(r.delta) : r[col.key]);
  const dir = desc ? -1 : 1;
  return rows.map((r, i) => [r, i]).sort(([x, i], [y, j]) => {
    const a = val(x), b = val(y);
    if (a === null && b === null) return i - j;
    if (a === null) return 1;
    if (b === null) return -1;
    const c = col.num ? a - b : String(a).localeCompare(String(b));
    return c !== 0 ? dir * c : i - j;
  }).map(([r]) => r);
}

/** Passes side by side: rewrite names in the order either kernel ran them, each with both sides' match counts. */
export function passPairs(passesA, passesB) {
  const agg = (ps) => { const m = new Map(); for (const p of ps ?? []) m.set(p.name, (m.get(p.name) ?? 0) + p.n_matches); return m; };
  const a = agg(passesA), b = agg(passesB), names = [...new Set([...a.keys(), ...b.keys()])];
  return names.map((name) => ({ name, a: a.get(name) ?? null, b: b.get(name) ?? null }));
}

/** Patterns side by side, told apart by where they were written (ids differ between runs): {key, file, line,
 * source, a, b} in order of how often they fired on both sides together. */
export function patternPairs(passesA, patternsA, passesB, patternsB) {
  const m = new Map();
  const add = (passes, patterns, side) => {
    for (const p of passes ?? []) for (const { id, count } of p.patterns) {
      const pat = patterns?.[String(id)];
      const key = pat ? `${pat.file}:${pat.line}` : `#${id}`;
      let r = m.get(key);
      if (!r) m.set(key, r = { key, file: pat?.file ?? "", line: pat?.line ?? null, source: pat?.source ?? "", a: 0, b: 0 });
      r[side] += count;
    }
  };
  add(passesA, patternsA, "a"); add(passesB, patternsB, "b");
  return [...m.values()].sort((x, y) => (y.a + y.b) - (x.a + x.b));
}
