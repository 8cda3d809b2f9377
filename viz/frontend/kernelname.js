// Kernel names as tinygrad users read them in DEBUG=2: a letter for the kind of kernel, then one number per
// axis, coloured by what the axis is (global, local, reduce, upcast, unroll, group). Pure: no DOM.
//   E_4_4        elementwise kernel over a 4x4 grid
//   r_16_32_16   reduction: output axes 16 and 32, reduced over 16
//   r_32_16n1    a second, different kernel with the same shape gets a suffix
// A name may carry tinygrad's own ANSI colours (as printed by DEBUG=2 or imported from its traces); those
// say each axis's kind exactly. A plain name says only the kind of kernel, so the number of reduce axes
// comes from a hint (the kernel's lowered uops) or, without one, is taken to be 1.

import { esc } from "./common/esc.js";
/** Axis kinds and kernel letters, with their colours and a sentence for the legend. */
export const AXIS_KINDS = {
  global: { color: "#5b9cf5", ansi: "blue", label: "global", help: "one GPU thread / loop iteration per index (the launch grid)" },
  local: { color: "#3fc6d3", ansi: "cyan", label: "local", help: "threads of one workgroup, which can share memory" },
  group: { color: "#4cc35a", ansi: "green", label: "group", help: "a reduce axis split across a workgroup (group-for-reduce)" },
  reduce: { color: "#e5534b", ansi: "red", label: "reduce", help: "summed (or max-ed) over: a loop inside each thread" },
  upcast: { color: "#e0b93b", ansi: "yellow", label: "upcast", help: "an output axis unrolled into registers (each thread computes several outputs)" },
  unroll: { color: "#c86bd8", ansi: "magenta", label: "unroll", help: "a reduce axis unrolled into straight-line code" },
};

export const KERNEL_LETTERS = {
  E: { label: "elementwise", help: "no reduction: every output element on its own" },
  r: { label: "reduce", help: "a reduction: some axes are summed / max-ed over" },
  C: { label: "copy", help: "only moves data (buffer to buffer)" },
};

const ANSI_KIND = Object.fromEntries(Object.entries(AXIS_KINDS).map(([k, v]) => [v.ansi, k]));
// SGR colour codes: 30+i normal, 90+i bright
const SGR = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];

/**
 * Split a kernel name into parts. hints: {reduceAxes?: number, kinds?: [kind per axis]}.
 * Returns {name, letter, letterInfo, axes: [{text, size, kind}], suffix, parts: [{text, kind, role}]} where
 * parts concatenate to the plain name (ANSI codes removed) and role is "letter" | "sep" | "axis" | "suffix" | "text".
 * A name that is not of this shape comes back as a single "text" part.
 */
export function parseKernelName(name, hints = {}) {
  const { plain, colors } = stripAnsi(String(name ?? ""));
  const m = /^([A-Za-z])_((?:\d+_)*\d+)(n\d+)?$/.exec(plain);
  if (!m) return { name: plain, letter: null, letterInfo: null, axes: [], suffix: "", parts: [{ text: plain, kind: null, role: "text" }] };
  const [, letter, dims, suffix = ""] = m;
  const sizes = dims.split("_");
  let kinds = hints.kinds && hints.kinds.length === sizes.length ? hints.kinds.slice() : null;
  if (!kinds) {
    // ANSI colours: each number's colour is the colour in effect at its first character
    let pos = 2;
    const fromAnsi = sizes.map((s) => { const c = colors[pos]; pos += s.length + 1; return ANSI_KIND[c] ?? null; });
    if (fromAnsi.every(Boolean)) kinds = fromAnsi;
  }
  if (!kinds) {
    const nred = letter === "r" ? Math.min(sizes.length, Math.max(0, hints.reduceAxes ?? 1)) : 0;
    kinds = sizes.map((_, i) => (i >= sizes.length - nred ? "reduce" : "global"));
  }
  const axes = sizes.map((text, i) => ({ text, size: Number(text), kind: kinds[i] }));
  const parts = [{ text: letter, kind: null, role: "letter" }];
  axes.forEach((a) => { parts.push({ text: "_", kind: null, role: "sep" }); parts.push({ text: a.text, kind: a.kind, role: "axis" }); });
  if (suffix) parts.push({ text: suffix, kind: null, role: "suffix" });
  return { name: plain, letter, letterInfo: KERNEL_LETTERS[letter] ?? null, axes, suffix, parts };
}

/**
 * Hints for parseKernelName from a kernel record of the API: the kind of each number of its name as the engine
 * wrote it (`axis_kinds`, what DEBUG=2 colours), else (older traces) the number of reduce loops in its lowered
 * uops (lines like "RANGE int (1, 'reduce')"). Every place that shows a kernel name passes its record through here.
 */
export function kernelHints(kernel) {
  if (kernel?.axis_kinds?.length && kernel.axis_kinds.every((k) => k in AXIS_KINDS)) return { kinds: kernel.axis_kinds.slice() };
  if (!kernel?.uops) return {};
  let reduceAxes = 0;
  for (const line of kernel.uops) if (/^RANGE\b/.test(line) && /'reduce'/.test(line)) reduceAxes++;
  return { reduceAxes };
}

/** Plain-text legend for a parsed name, one line per letter or axis kind it uses (a tooltip's text). */
export function legendText(parsed) {
  const lines = [];
  if (parsed.letterInfo) lines.push(`${parsed.letter}: ${parsed.letterInfo.label} kernel (${parsed.letterInfo.help})`);
  for (const a of parsed.axes) lines.push(`${a.text}: ${AXIS_KINDS[a.kind].label} axis of size ${a.text} (${AXIS_KINDS[a.kind].help})`);
  if (parsed.suffix) lines.push(`${parsed.suffix}: another kernel of the same shape (number ${parsed.suffix.slice(1)})`);
  return lines.join("\n");
}


/**
 * HTML for a kernel name: each axis in its kind's colour, and a legend (class "kn-legend") that the page's
 * stylesheet shows on hover, explaining the letters and colours used. A string, so pure modules and canvases
 * can use `parseKernelName` and DOM code can drop this into innerHTML.
 */
export function kernelNameHTML(name, hints = {}, { legend = true } = {}) {
  const p = parseKernelName(name, hints);
  const body = p.parts.map((part) => {
    if (part.role === "axis") return `<span class="kn-axis" data-kind="${part.kind}" style="color:${AXIS_KINDS[part.kind].color}">${esc(part.text)}</span>`;
    if (part.role === "letter") return `<span class="kn-letter">${esc(part.text)}</span>`;
    return `<span class="kn-${part.role}">${esc(part.text)}</span>`;
  }).join("");
  if (!legend || !p.letter) return `<span class="kname">${body}</span>`;
  const rows = [];
  if (p.letterInfo) rows.push(`<div><b>${esc(p.letter)}</b> ${esc(p.letterInfo.label)} kernel: ${esc(p.letterInfo.help)}</div>`);
  const used = [...new Set(p.axes.map((a) => a.kind))];
  for (const k of Object.keys(AXIS_KINDS)) {
    const info = AXIS_KINDS[k];
    rows.push(`<div${used.includes(k) ? "" : ' class="kn-unused"'}><span class="kn-swatch" style="background:${info.color}"></span><b style="color:${info.color}">${info.label}</b>: ${esc(info.help)}</div>`);
  }
  if (p.suffix) rows.push(`<div><b>${esc(p.suffix)}</b>: another kernel of the same shape</div>`);
  return `<span class="kname" tabindex="0" aria-label="${esc(legendText(p))}">${body}<span class="kn-legend" role="tooltip">${rows.join("")}</span></span>`;
}

/** Remove ANSI SGR sequences; colors[i] is the colour name in effect at plain character i (or null). */
export function stripAnsi(s) {
  let plain = "", color = null;
  const colors = [];
  const re = /\x1b\[([\d;]*)m/g;
  let last = 0, m;
  const take = (text) => { for (const ch of text) { plain += ch; colors.push(color); } };
  while ((m = re.exec(s))) {
    take(s.slice(last, m.index));
    last = re.lastIndex;
    for (const code of (m[1] || "0").split(";").map(Number)) {
      if (code === 0 || code === 39) color = null;
      else if (code >= 30 && code <= 37) color = SGR[code - 30];
      else if (code >= 90 && code <= 97) color = SGR[code - 90];
    }
  }
  take(s.slice(last));
  return { plain, colors };
}
