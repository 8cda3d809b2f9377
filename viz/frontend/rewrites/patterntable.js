// The captured pattern table around a match's pattern: every pattern the trace captured from the same file, in line
// order, each with its source as it was when the trace was recorded (numbered from its line), the matched one marked
// and scrolled to. Opened from the match panel's file:line. `tableLines` is pure; `showPatternTable` fills an element.
import { api } from "../common/api.js";
import { esc } from "../common/esc.js";


/**
 * patterns: [{id, file, line, source}] of one file -> [{n (line number), text, hit, gap}] in line order: each
 * pattern's source lines numbered from its line (one copy of patterns written at the same place), `hit` on the lines
 * of the pattern at `line`, `gap` on the first line after lines the trace did not capture.
 */
export function tableLines(patterns, line) {
  const seen = new Set(), out = [];
  let next = null;
  for (const p of [...patterns].sort((a, b) => a.line - b.line)) {
    const key = `${p.line}\n${p.source}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const src = (p.source || "(source not recorded)").split("\n");
    src.forEach((text, i) => {
      const n = p.line + i;
      if (next !== null && n < next) return;  // overlapping entries (a pattern inside a bigger one): print each line once
      out.push({ n, text, hit: p.line === line, gap: next !== null && n > next && i === 0 });
    });
    next = Math.max(next ?? 0, p.line + src.length);
  }
  return out;
}

/** Fill `el` with run's captured table of `file` around `line`; a message if the server has none. */
export async function showPatternTable(el, run, file, line) {
  el.hidden = false;
  el.innerHTML = `<div class="muted">loading the patterns of ${esc(file.split("/").pop())}…</div>`;
  try {
    const r = await api.patterns(run, file);
    const rows = tableLines(r.patterns, line);
    el.innerHTML = `<div class="muted pt-head">${esc(file)}: ${r.patterns.length} captured pattern${r.patterns.length === 1 ? "" : "s"}</div>`
      + rows.map((x) => `${x.gap ? '<div class="pt-line muted"><span class="ln">⋮</span></div>' : ""}<div class="pt-line${x.hit ? " hit" : ""}" data-line="${x.n}"><span class="ln">${x.n}</span>${esc(x.text)}</div>`).join("");
    const hit = el.querySelector(".pt-line.hit");
    if (hit) el.scrollTop = Math.max(0, hit.offsetTop - el.offsetTop - 40);
  } catch (err) {
    el.innerHTML = `<div class="muted">No pattern table: ${esc(err.message)}</div>`;
  }
}
