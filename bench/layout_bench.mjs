// Layout benchmark: our layered layout vs dagre on generated IR-shaped DAGs, in the same run.
//   node bench/layout_bench.mjs [sizes...]          e.g. 1000 5000 10000 (the default)
//   dagre is looked for in /tmp/dagrebench (npm install @dagrejs/dagre there; never in the repo) or DAGRE_PATH
// DAGRE_TIMEOUT_S (default 120) stops a dagre run that takes longer; the ratio is then a lower bound.
// Crossings: drawn lines that properly cross (graph/crossings.js), ours (a bus per source drawn once) against
// dagre's edges on the same graph (hubs as nodes, as dagre gets them; ours also with hubs inline, as the UI draws).
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { layout, edgesFromSrc, positionsOf } from "../viz/frontend/graph/layout.js";
import { countCrossings, layoutLines } from "../viz/frontend/graph/crossings.js";

// Deterministic PRNG (mulberry32) so every run lays out the same graphs
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALU = ["ADD", "MUL", "MAX", "CMPLT", "WHERE", "SUB", "EXP2", "RECIP", "CAST"];

/**
 * A UOp-shaped graph of about n nodes: [{id, op, src, width, height}]. Parallel "lanes" of ALU chains (the
 * long chain depth of unrolled code) read LOADs, share hub nodes (a few DEFINE_GLOBAL, RANGE and CONST used
 * by many), sometimes read another lane or a far earlier node, end in STOREs; one SINK at the bottom.
 */
export function irGraph(n, seed = 1) {
  const rand = rng(seed), nodes = [];
  const add = (op, src = []) => {
    const label = op.length + 10 + ((rand() * 8) | 0);
    nodes.push({ id: nodes.length, op, src, width: 8 * label, height: op === "STORE" || op === "LOAD" ? 40 : 28 });
    return nodes.length - 1;
  };
  const pick = (a) => a[(rand() * a.length) | 0];
  const globals = Array.from({ length: 3 + Math.ceil(n / 2000) }, () => add("DEFINE_GLOBAL"));
  const consts = Array.from({ length: 12 }, () => add("CONST"));
  const ranges = Array.from({ length: 4 }, () => add("RANGE", [pick(consts)]));
  const load = () => add("LOAD", [add("INDEX", [pick(globals), pick(ranges)])]);
  const lanes = Array.from({ length: Math.max(4, Math.round(Math.sqrt(n) / 4)) }, load);
  const stores = [];
  while (nodes.length < n - 4) {
    const l = (rand() * lanes.length) | 0, r = rand();
    const other = r < 0.35 ? pick(consts) : r < 0.42 ? pick(ranges) : r < 0.55 ? pick(lanes)
      : r < 0.56 ? (rand() * nodes.length) | 0 : load();
    lanes[l] = add(pick(ALU), rand() < 0.5 ? [lanes[l], other] : [other, lanes[l]]);
    if (rand() < 0.01) { stores.push(add("STORE", [add("INDEX", [pick(globals), pick(ranges)]), lanes[l]])); lanes[l] = load(); }
  }
  for (const t of lanes) stores.push(add("STORE", [add("INDEX", [pick(globals), pick(ranges)]), t]));
  add("SINK", stores);
  return nodes;
}

/**
 * One rewrite step as a hash-consed graph sees it: node `victim` and every node that uses it, transitively,
 * get new ids; with `remove`, the node is dropped and its users read its first source instead.
 */
export function rewriteStep(nodes, victim, remove = false) {
  const users = new Map();
  for (const u of nodes) for (const s of u.src) (users.get(s) ?? users.set(s, []).get(s)).push(u.id);
  const changed = new Set([victim]), todo = [victim];
  while (todo.length) for (const u of users.get(todo.pop()) ?? []) if (!changed.has(u)) { changed.add(u); todo.push(u); }
  const renamed = (id) => (changed.has(id) ? `new${id}` : id);
  const src = (s) => (remove && s === victim ? nodes.find((u) => u.id === victim).src.slice(0, 1) : [renamed(s)]);
  return nodes.filter((u) => !(remove && u.id === victim)).map((u) => ({ ...u, id: renamed(u.id), src: u.src.flatMap(src) }));
}

/** Ids of the hub nodes of an irGraph (what the UI draws inline). */
export const hubIds = (nodes) => nodes.filter((u) => ["CONST", "RANGE", "DEFINE_GLOBAL"].includes(u.op)).map((u) => u.id);

// ms of the first (cold) call, then the median and best of `reps` more
function time(fn, reps) {
  let t = performance.now();
  fn();
  const cold = performance.now() - t, times = [];
  for (let i = 0; i < reps; i++) { t = performance.now(); fn(); times.push(performance.now() - t); }
  times.sort((a, b) => a - b);
  return { cold, median: times[times.length >> 1], best: times[0] };
}

// dagre runs in a worker so a run past the timeout can be stopped
const DAGRE_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const dagre = require(workerData.path);
const g = new dagre.graphlib.Graph({ multigraph: true });
g.setGraph({ rankdir: "TB", nodesep: 24, ranksep: 48 });
g.setDefaultEdgeLabel(() => ({}));
for (const u of workerData.nodes) g.setNode(String(u.id), { width: u.width, height: u.height });
workerData.edges.forEach(([a, b], i) => g.setEdge(String(a), String(b), {}, "e" + i));
const t = performance.now();
dagre.layout(g);
const ms = performance.now() - t;
const lines = g.edges().map((e) => ({ pts: g.edge(e).points.flatMap((p) => [p.x, p.y]), a: e.v, b: e.w }));
parentPort.postMessage({ ms, lines });
`;

function timeDagre(path, nodes, edges, timeoutS) {
  return new Promise((resolve) => {
    const slim = nodes.map((u) => ({ id: u.id, width: u.width, height: u.height }));
    const w = new Worker(DAGRE_WORKER, { eval: true, workerData: { path, nodes: slim, edges } });
    const timer = setTimeout(() => { w.terminate(); resolve(null); }, timeoutS * 1000);
    w.on("message", (d) => { clearTimeout(timer); w.terminate(); resolve(d); });
    w.on("error", (e) => { clearTimeout(timer); resolve(e); });
  });
}

const DAGRE_DEFAULT = "/tmp/dagrebench/node_modules/@dagrejs/dagre";

async function main() {
  const sizes = process.argv.slice(2).map(Number).filter(Boolean);
  const timeoutS = Number(process.env.DAGRE_TIMEOUT_S || 120);
  let dagrePath = process.env.DAGRE_PATH || DAGRE_DEFAULT;
  try { createRequire(import.meta.url).resolve(dagrePath); } catch {
    console.log(`*** dagre NOT FOUND at ${dagrePath}: no dagre times or crossings below. Install it outside the repo:`);
    console.log(`***   mkdir -p /tmp/dagrebench && cd /tmp/dagrebench && npm install @dagrejs/dagre   (or set DAGRE_PATH)`);
    dagrePath = null;
  }
  const f = (ms) => ms.toFixed(1);
  console.log("nodes edges layers dummies | ours ms: median best cold | hubs inline | step | crossings: ours inline | dagre ms  dagre/ours  crossings");
  for (const n of sizes.length ? sizes : [200, 1000, 5000, 10000]) {
    const nodes = irGraph(n), edges = edgesFromSrc(nodes), reps = n <= 2000 ? 9 : 5;
    const ours = time(() => layout(nodes, edges), reps);
    const r = layout(nodes, edges), prev = positionsOf(nodes, r);
    const inline = time(() => layout(nodes, edges, { inline: hubIds(nodes) }), reps);
    const next = rewriteStep(nodes, n >> 1), nextEdges = edgesFromSrc(next);
    const step = time(() => layout(next, nextEdges, { prev }), reps);
    const cross = countCrossings(layoutLines(r)), crossInline = countCrossings(layoutLines(layout(nodes, edges, { inline: hubIds(nodes) })));
    let dagre = dagrePath ? "" : "(dagre not found)";
    if (dagrePath) {
      const d = await timeDagre(dagrePath, nodes, edges, timeoutS);
      if (d instanceof Error) dagre = `error: ${d.message}`;
      else if (d === null) dagre = `>${timeoutS * 1000} (stopped)  >${(timeoutS * 1000 / ours.median).toFixed(0)}x  -`;
      else dagre = `${f(d.ms)}  ${(d.ms / ours.median).toFixed(0)}x  ${countCrossings(d.lines)}`;
    }
    console.log(`${n} ${edges.length} ${r.layers} ${r.dummies} | ${f(ours.median)} ${f(ours.best)} ${f(ours.cold)} | ${f(inline.median)} | ${f(step.median)} | ${cross} ${crossInline} | ${dagre}`);
  }
  console.log("median/best of repeated runs after a cold first one; hubs inline: CONST/RANGE/DEFINE_GLOBAL left out;");
  console.log("step: the graph after one rewrite (the middle node and its users renamed), laid out with the previous");
  console.log("positions; dagre: one run in a worker, ratio against our median; crossings: drawn lines that properly");
  console.log("cross (a shared bus counts once, as it is drawn), ours and dagre's on the same graph with hubs as nodes.");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
