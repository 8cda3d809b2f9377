// Span colours: a name keeps its colour everywhere (a kernel is recognisable across tracks and runs); host work
// gets one colour per category so codegen, compile and schedule read as kinds. Colours are small integers
// ("slots") into COLORS so the renderer can batch rectangles by colour: one fillStyle per colour per lane
// instead of one per rectangle (setting fillStyle parses a CSS string each time). Pure.

import { CAT } from "./chunk.js";

// [hue, saturation %, lightness %]: light enough for dark text, distinct side by side, readable on the dark page
const PALETTE = [
  [210, 62, 70], [28, 80, 68], [135, 42, 62], [350, 62, 74], [265, 45, 74], [45, 85, 62], [185, 50, 60],
  [315, 45, 72], [95, 45, 62], [230, 50, 76], [12, 65, 70], [160, 45, 60], [290, 35, 70], [60, 60, 58],
  [200, 45, 62], [335, 50, 66], [110, 35, 70], [250, 40, 68], [20, 45, 62], [175, 40, 70],
];
const CAT_HSL = { [CAT.copy]: [205, 18, 66], [CAT.compile]: [36, 90, 60], [CAT.codegen]: [172, 42, 58], [CAT.schedule]: [222, 28, 70] };
const CAT_SLOT = Object.fromEntries(Object.keys(CAT_HSL).map((c, i) => [c, PALETTE.length + i]));
const ALL = [...PALETTE, ...Object.values(CAT_HSL)];

/** "#rrggbb" of an HSL colour (hex parses fastest when assigned to fillStyle). */
export function hslToHex(h, s, l) {
  s /= 100; l /= 100;
  const f = (n) => {
    const k = (n + h / 30) % 12, c = l - s * Math.min(l, 1 - l) * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(c * 255).toString(16).padStart(2, "0");
  };
  return `#${f(0)}${f(8)}${f(4)}`;
}

/** Fill colour of each slot, and the same washed towards the background (spans outside a highlighted name). */
export const COLORS = ALL.map(([h, s, l]) => hslToHex(h, s, l));
export const DIM_COLORS = ALL.map(([h, s, l]) => hslToHex(h, s * 0.35, l * 0.42));
export const N_SLOTS = ALL.length;

/** "#rrggbb" as an opaque ImageData pixel read through a Uint32Array (little-endian: bytes R, G, B, A). */
export function hexToPixel(hex) {
  const n = parseInt(hex.slice(1), 16);
  return ((255 << 24) | ((n & 255) << 16) | (n & 0xff00) | (n >> 16)) >>> 0;
}

/** COLORS then DIM_COLORS as pixels: index slot, or N_SLOTS + slot for the dimmed one (render.js paints lanes with them). */
export const PIXELS = Uint32Array.from([...COLORS, ...DIM_COLORS], hexToPixel);

/** 32-bit FNV-1a of a string: the same name gives the same colour in every session. */
export function hashName(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
  return h >>> 0;
}

/** The colour slot of a span: by category for copies and host work, else by name. */
export function colorSlot(name, cat) {
  return CAT_SLOT[cat] ?? hashName(name) % PALETTE.length;
}

/** Canvas colours; index.js overrides the first few from the page's CSS variables (style.css) when it has them. */
export const THEME = {
  bg: "#14171c", panel: "#1b1f26", grid: "#232833", text: "#e6edf3", muted: "#7d8796", border: "#2e3440",
  spanText: "#0d1016", select: "#ffffff", accent: "#5b9cf5", area: "rgba(91, 156, 245, 0.16)", areaEdge: "rgba(91, 156, 245, 0.9)",
  marker: "#f0883e", counter: "#57ab5a", counterFill: "rgba(87, 171, 90, 0.28)", flow: "rgba(240, 200, 90, 0.9)",
  hover: "rgba(255, 255, 255, 0.6)", cursor: "rgba(230, 237, 243, 0.35)", cursorBg: "#2b3340", tipBg: "rgba(13, 16, 22, 0.85)",
  rowHover: "rgba(255, 255, 255, 0.04)",
};

/** "#rrggbb" scaled towards black by `f` (0..1 of the brightness kept). */
export function darken(hex, f) {
  const n = parseInt(hex.slice(1), 16), c = (s) => Math.round(((n >> s) & 255) * f).toString(16).padStart(2, "0");
  return `#${c(16)}${c(8)}${c(0)}`;
}

/** CSS variables of the page that set THEME entries. */
export const THEME_VARS = { bg: "--bg", panel: "--bg2", grid: "--bg3", text: "--fg", muted: "--muted", border: "--line", accent: "--accent" };
