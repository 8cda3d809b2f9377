// A small syntax highlighter for the C and CUDA our renderers emit (and any C-like kernel source). Pure.
// highlight(src) -> lines, each a list of tokens {type, text} whose texts concatenate to the line.
// Token types: keyword, type, builtin, number, string, comment, preproc, func, ident, op, punct, space.

import { esc } from "../common/esc.js";
const KEYWORDS = new Set(["if", "else", "for", "while", "do", "return", "break", "continue", "switch", "case", "default",
  "goto", "sizeof", "struct", "union", "enum", "typedef", "static", "extern", "const", "volatile", "restrict",
  "__restrict__", "inline", "__inline__", "register", "auto", "template", "typename", "namespace", "using",
  "__global__", "__device__", "__host__", "__shared__", "__constant__", "__launch_bounds__", "__forceinline__"]);
const TYPES = new Set(["void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "bool", "_Bool",
  "_Float16", "half", "__half", "__nv_bfloat16", "__bf16", "size_t", "int8_t", "int16_t", "int32_t", "int64_t",
  "uint8_t", "uint16_t", "uint32_t", "uint64_t", "uchar", "ushort", "uint", "ulong"]);
const VECTOR_TYPE = /^(float|int|uint|half|char|uchar|short|ushort|long|ulong|double)[1-8]$/;
const BUILTINS = new Set(["threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "__syncthreads", "__syncwarp",
  "NAN", "INFINITY", "true", "false", "NULL", "nullptr"]);

// One master regex; the order of alternatives decides ties. Group names are the token types.
const TOKEN = new RegExp([
  String.raw`(?<comment>\/\/.*|\/\*[\s\S]*?(?:\*\/|$))`,
  String.raw`(?<string>"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)`,
  String.raw`(?<number>(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(?:[fFlLuU]|ll|ull|LL|ULL)*)`,
  String.raw`(?<word>[A-Za-z_]\w*)`,
  String.raw`(?<space>\s+)`,
  String.raw`(?<op>->|\+\+|--|<<=?|>>=?|[<>!=]=|&&|\|\||[-+*/%&|^~!<>=?:])`,
  String.raw`(?<punct>[{}()\[\];,.#\\])`,
].join("|"), "y");

/** Tokens of one line; `state.inComment` carries an unclosed /* comment over line ends. */
function lineTokens(line, state) {
  const out = [];
  let i = 0;
  if (state.inComment) {
    const end = line.indexOf("*/");
    if (end < 0) return [{ type: "comment", text: line }];
    out.push({ type: "comment", text: line.slice(0, end + 2) });
    i = end + 2;
    state.inComment = false;
  }
  if (/^\s*#/.test(line.slice(i)) && !out.length) return [{ type: "preproc", text: line }];
  while (i < line.length) {
    TOKEN.lastIndex = i;
    const m = TOKEN.exec(line);
    if (!m) { out.push({ type: "punct", text: line[i] }); i++; continue; }
    const text = m[0], gr = m.groups;
    let type;
    if (gr.comment !== undefined) {
      type = "comment";
      if (text.startsWith("/*") && !text.endsWith("*/")) state.inComment = true;
      if (text === "/*/") state.inComment = true;
    } else if (gr.string !== undefined) type = "string";
    else if (gr.number !== undefined) type = "number";
    else if (gr.word !== undefined) {
      type = KEYWORDS.has(text) ? "keyword" : TYPES.has(text) || VECTOR_TYPE.test(text) ? "type"
        : BUILTINS.has(text) ? "builtin" : /^\s*\(/.test(line.slice(i + text.length)) ? "func" : "ident";
    } else if (gr.space !== undefined) type = "space";
    else if (gr.op !== undefined) type = "op";
    else type = "punct";
    const prev = out[out.length - 1];
    if (prev && prev.type === type && (type === "space" || type === "punct")) prev.text += text;
    else out.push({ type, text });
    i += text.length;
  }
  return out;
}

/** Highlight a whole source: one token list per line ("\n"-separated; "\r" is dropped). */
export function highlight(src) {
  const state = { inComment: false };
  return String(src ?? "").replace(/\r/g, "").split("\n").map((line) => lineTokens(line, state));
}


/** One line's tokens as HTML spans (class "tk-<type>"; spaces and idents stay plain text). */
export function tokensHTML(tokens) {
  return tokens.map((t) => (t.type === "space" || t.type === "ident" || t.type === "punct"
    ? esc(t.text) : `<span class="tk-${t.type}">${esc(t.text)}</span>`)).join("");
}
