// Span chunks: the binary, columnar answer of GET /api/runs/{run}/spans (docs/server-api.md), decoded into typed
// arrays without copying where alignment allows. `encodeSpans` writes the same format (fixtures, tests, bench).
//
// Layout (little-endian): uint32 header_len | header JSON (utf-8) | zero padding to a multiple of 8 | columns.
// header: {n, names: [string], columns: [{name, type, offset, length}]}; a column's `offset` counts bytes from the
// start of the columns section and `length` its bytes. Columns: start f64 (ns from the run's start_ns), dur f64,
// name u32 (index into names), depth u16, kernel i32 (-1: none), cat u8, and index u32 (the span's index in its
// track's start order, for GET /spans/{track}/{index}; absent: the chunk is the whole track, so the position).

/** Span categories, in the order of the `cat` column's codes. */
export const CATS = ["kernel", "copy", "compile", "codegen", "schedule", "tensor", "other"];
export const CAT = Object.fromEntries(CATS.map((c, i) => [c, i]));

const TYPES = {
  float64: Float64Array, f64: Float64Array, "<f8": Float64Array,
  float32: Float32Array, f32: Float32Array, "<f4": Float32Array,
  uint32: Uint32Array, u32: Uint32Array, "<u4": Uint32Array,
  int32: Int32Array, i32: Int32Array, "<i4": Int32Array,
  uint16: Uint16Array, u16: Uint16Array, "<u2": Uint16Array,
  int16: Int16Array, i16: Int16Array, "<i2": Int16Array,
  uint8: Uint8Array, u8: Uint8Array, "|u1": Uint8Array, "<u1": Uint8Array,
};
// what each known column must end up as, whatever the wire type
const WANT = { start: Float64Array, dur: Float64Array, name: Uint32Array, depth: Uint16Array, kernel: Int32Array, cat: Uint8Array, index: Uint32Array };
const WIRE = { start: "float64", dur: "float64", name: "uint32", depth: "uint16", kernel: "int32", cat: "uint8" };

const align8 = n => (n + 7) & ~7;

export class ChunkError extends Error {}

/**
 * Decode one span chunk (an ArrayBuffer, or a typed array / DataView over one) into
 * {n, names, start, dur, name, depth|null, kernel, cat, index|null} of typed arrays. A missing depth column stays null
 * (assign lanes with lanes.js); a missing kernel or cat column defaults to -1 / "other".
 */
export function decodeSpans(data) {
  const buf = data instanceof ArrayBuffer ? data : data.buffer;
  const at = data instanceof ArrayBuffer ? 0 : data.byteOffset;
  const size = data.byteLength;
  if (size < 4) throw new ChunkError(`span chunk of ${size} bytes has no header`);
  const hlen = new DataView(buf, at, 4).getUint32(0, true);
  if (4 + hlen > size) throw new ChunkError(`span chunk header of ${hlen} bytes overruns the ${size}-byte chunk`);
  let header;
  try { header = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, at + 4, hlen))); }
  catch (e) { throw new ChunkError(`span chunk header is not JSON: ${e.message}`); }
  const n = header.n | 0, base = align8(4 + hlen);
  const out = { n, names: header.names ?? [], start: null, dur: null, name: null, depth: null, kernel: null, cat: null, index: null };
  for (const col of header.columns ?? []) {
    const T = TYPES[col.type];
    if (!T) throw new ChunkError(`column ${col.name}: unknown type ${col.type}`);
    const off = base + col.offset, len = col.length ?? n * T.BYTES_PER_ELEMENT;
    if (len < n * T.BYTES_PER_ELEMENT || off + len > size) throw new ChunkError(`column ${col.name} (${len} bytes at ${off}) does not fit the chunk`);
    const view = (at + off) % T.BYTES_PER_ELEMENT === 0 ? new T(buf, at + off, n) : new T(buf.slice(at + off, at + off + n * T.BYTES_PER_ELEMENT));
    const want = WANT[col.name];
    out[col.name] = want && !(view instanceof want) ? want.from(view) : view;
  }
  if (!out.start || !out.dur || !out.name || !out.depth) throw new ChunkError("span chunk lacks its start, dur, name or depth column");
  if (!out.kernel) out.kernel = new Int32Array(n).fill(-1);
  if (!out.cat) out.cat = new Uint8Array(n).fill(CAT.other);
  return out;
}

/**
 * Encode spans into the chunk format: spans is {names, start, dur, name, depth, kernel?, cat?} of arrays, or
 * an array of {name: string, start, dur, depth?, kernel?, cat?: string|number} objects (depth 0 when not given).
 * Returns an ArrayBuffer.
 */
export function encodeSpans(spans) {
  const cols = Array.isArray(spans) ? columnsOf(spans) : spans;
  const n = cols.start.length;
  const order = ["start", "dur", "name", "depth", "kernel", "cat"].filter(c => cols[c]);
  const columns = [];
  let off = 0;
  for (const c of order) {
    const len = n * WANT[c].BYTES_PER_ELEMENT;
    columns.push({ name: c, type: WIRE[c], offset: off, length: len });
    off = align8(off + len);
  }
  const head = new TextEncoder().encode(JSON.stringify({ n, names: cols.names, columns }));
  const base = align8(4 + head.length), out = new ArrayBuffer(base + off);
  new DataView(out).setUint32(0, head.length, true);
  new Uint8Array(out, 4).set(head);
  for (const [k, c] of order.entries()) new WANT[c](out, base + columns[k].offset, n).set(cols[c]);
  return out;
}

function columnsOf(list) {
  const names = [], index = new Map(), n = list.length;
  const cols = { names, start: new Float64Array(n), dur: new Float64Array(n), name: new Uint32Array(n),
    depth: new Uint16Array(n), kernel: new Int32Array(n), cat: new Uint8Array(n) };
  list.forEach((s, i) => {
    if (!index.has(s.name)) { index.set(s.name, names.length); names.push(s.name); }
    cols.start[i] = s.start; cols.dur[i] = s.dur; cols.name[i] = index.get(s.name);
    cols.depth[i] = s.depth ?? 0;
    cols.kernel[i] = s.kernel ?? -1;
    cols.cat[i] = typeof s.cat === "string" ? (CAT[s.cat] ?? CAT.other) : (s.cat ?? CAT.other);
  });
  return cols;
}
