// A line diff of two kernels' code (pure: strings in, rows out). Common prefix and suffix are trimmed first; the
// middle is an LCS by dynamic programming, which is exact and fast for kernel-sized code; past MAX_CELLS (a very
// long middle) the middle is shown as removed-then-added rather than spending seconds on it.

const MAX_CELLS = 4_000_000;

/**
 * Rows of a side-by-side diff: {kind: "same" | "del" | "add" | "change", a, b, na, nb} where a/b are the lines
 * (null where that side has none) and na/nb their 1-based line numbers. "change" pairs a removed line with an added one.
 */
export function lineDiff(textA, textB) {
  const A = textA.split("\n"), B = textB.split("\n");
  let pre = 0;
  while (pre < A.length && pre < B.length && A[pre] === B[pre]) pre++;
  let suf = 0;
  while (suf < A.length - pre && suf < B.length - pre && A[A.length - 1 - suf] === B[B.length - 1 - suf]) suf++;
  const a = A.slice(pre, A.length - suf), b = B.slice(pre, B.length - suf);
  const ops = a.length * b.length <= MAX_CELLS ? lcsOps(a, b) : [...a.map(() => "del"), ...b.map(() => "add")];
  const rows = [];
  for (let i = 0; i < pre; i++) rows.push({ kind: "same", a: A[i], b: B[i], na: i + 1, nb: i + 1 });
  let i = 0, j = 0, dels = [], adds = [];
  const flush = () => {  // a run of removals next to a run of additions reads best as changed lines, side by side
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      const d = dels[k], x = adds[k];
      rows.push({ kind: d !== undefined && x !== undefined ? "change" : d !== undefined ? "del" : "add",
                  a: d?.line ?? null, b: x?.line ?? null, na: d?.n ?? null, nb: x?.n ?? null });
    }
    dels = []; adds = [];
  };
  for (const op of ops) {
    if (op === "same") { flush(); rows.push({ kind: "same", a: a[i], b: b[j], na: pre + i + 1, nb: pre + j + 1 }); i++; j++; }
    else if (op === "del") { dels.push({ line: a[i], n: pre + i + 1 }); i++; }
    else { adds.push({ line: b[j], n: pre + j + 1 }); j++; }
  }
  flush();
  for (let k = 0; k < suf; k++) rows.push({ kind: "same", a: A[A.length - suf + k], b: B[B.length - suf + k], na: A.length - suf + k + 1, nb: B.length - suf + k + 1 });
  return rows;
}

/** The counts a summary line shows. */
export function diffStats(rows) {
  const s = { same: 0, del: 0, add: 0, change: 0 };
  for (const r of rows) s[r.kind]++;
  return s;
}

function lcsOps(a, b) {
  const n = a.length, m = b.length, w = m + 1;
  const L = new Uint32Array((n + 1) * w);  // L[i][j]: LCS length of a[i:] and b[j:]
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      L[i * w + j] = a[i] === b[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
  const ops = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { ops.push("same"); i++; j++; }
    else if (L[(i + 1) * w + j] >= L[i * w + j + 1]) { ops.push("del"); i++; }
    else { ops.push("add"); j++; }
  }
  while (i < n) { ops.push("del"); i++; }
  while (j < m) { ops.push("add"); j++; }
  return ops;
}
