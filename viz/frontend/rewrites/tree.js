// Contexts > rewrites as the sidebar lists them. Pure. Contexts arrive in recording order (parents first)
// from GET /contexts and from live `events` messages; merging is by id, so a repeat is harmless.

/** A store of one run's contexts and kernels that live batches merge into. */
export class RunModel {
  constructor() { this.contexts = new Map(); this.kernels = new Map(); this.rewrites = new Map(); this.version = 0; }
  /** Merge {contexts, kernels} (a /contexts reply or an `events` message). Returns true if anything changed. */
  merge({ contexts = [], kernels = [] } = {}) {
    let changed = false;
    for (const c of contexts) {
      const old = this.contexts.get(c.id);
      const rewrites = mergeById(old?.rewrites ?? [], c.rewrites ?? []);
      const next = { ...old, ...c, rewrites };
      if (!old || JSON.stringify(old) !== JSON.stringify(next)) changed = true;
      this.contexts.set(c.id, next);
      for (const r of rewrites) this.rewrites.set(r.id, { ...r, ctx: c.id });
    }
    for (const k of kernels) {
      if (!this.kernels.has(k.id)) changed = true;
      this.kernels.set(k.id, { ...this.kernels.get(k.id), ...k });
    }
    if (changed) this.version++;
    return changed;
  }
  /** The kernel whose codegen context is `ctx` or one of its ancestors (null if none). */
  kernelOf(ctx) {
    const byCtx = new Map();
    for (const k of this.kernels.values()) if (k.ctx !== null && k.ctx >= 0) byCtx.set(k.ctx, k);
    for (let c = this.contexts.get(ctx), hops = 0; c && hops < 64; c = this.contexts.get(c.parent), hops++) {
      if (byCtx.has(c.id)) return byCtx.get(c.id);
    }
    return null;
  }
  /** Where a @function call's body was traced: {ctx, rw} of the "call" context's rewrite whose result is the graph
   * `body` (a CALL node's first source), or null. */
  callBody(body) {
    for (const c of this.contexts.values()) {
      const r = c.kind === "call" ? c.rewrites.find((x) => x.output === body) : null;
      if (r) return { ctx: c.id, rw: r.id };
    }
    return null;
  }
  /** The context that holds rewrite `rw`. */
  contextOfRewrite(rw) { return this.rewrites.get(rw)?.ctx ?? null; }
}

function mergeById(a, b) {
  if (!b.length) return a;
  const m = new Map(a.map((x) => [x.id, x]));
  for (const x of b) m.set(x.id, { ...m.get(x.id), ...x });
  return [...m.values()].sort((x, y) => x.id - y.id);
}

/**
 * Sidebar rows: each context with its depth (nesting), in recording order, filtered by `filter` (a
 * case-insensitive substring of the context's or one of its rewrites' names; a match keeps its ancestors).
 * opts.hideEmpty leaves out contexts whose rewrites made no match.
 */
export function contextRows(model, { filter = "", hideEmpty = false } = {}) {
  const ctxs = [...model.contexts.values()];
  const depth = new Map();
  for (const c of ctxs) depth.set(c.id, c.parent !== null && depth.has(c.parent) ? depth.get(c.parent) + 1 : 0);
  const f = filter.trim().toLowerCase();
  const matches = (c) => !f || c.name.toLowerCase().includes(f) || c.rewrites.some((r) => r.name.toLowerCase().includes(f));
  const nonEmpty = (c) => c.rewrites.some((r) => r.n_matches > 0);
  const keep = new Set();
  for (const c of ctxs) {
    if (!matches(c) || (hideEmpty && !nonEmpty(c))) continue;
    for (let p = c, hops = 0; p && !keep.has(p.id) && hops < 64; p = model.contexts.get(p.parent), hops++) keep.add(p.id);
  }
  return ctxs.filter((c) => keep.has(c.id)).map((c) => ({
    ctx: c, depth: depth.get(c.id),
    matches: c.rewrites.reduce((s, r) => s + (r.n_matches ?? 0), 0),
  }));
}

/** The rewrite to open when a context is picked: its first with matches, else its first. */
export function defaultRewrite(ctx) {
  return ctx.rewrites.find((r) => r.n_matches > 0) ?? ctx.rewrites[0] ?? null;
}

/** "file.py:123" from a [file, line] loc ("" when unknown). */
export function locText(loc) {
  if (!loc || !loc[0]) return "";
  return `${loc[0].split("/").pop()}:${loc[1]}`;
}

