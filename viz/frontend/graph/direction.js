// Which way a graph is laid out when the URL does not say: top to bottom (sources above users), or left to
// right (tinygrad VIZ's direction, which fills a wide screen with a deep graph). Pure: the layouts come from
// the caller (the worker in the page, layout.js in tests).

/** Layout options per direction: left to right stacks nodes in columns, so they sit closer there. */
export const LAYOUT_OPTIONS = { TB: {}, LR: { dir: "LR", nodeSep: 12, rankSep: 64 } };

/** The zoom at which bounds {x0, y0, x1, y1} fit a pane of cw x ch (pad px each side). */
export const fitZoom = (b, cw, ch, pad = 24) => Math.min((cw - 2 * pad) / Math.max(1, b.x1 - b.x0), (ch - 2 * pad) / Math.max(1, b.y1 - b.y0));

// how many nodes of layout r a cw x ch window at zoom k centred on node `at` (index; -1: the graph's centre) shows
function shown(r, at, cw, ch, k) {
  const b = r.bounds, cx = at >= 0 && r.x[at] === r.x[at] ? r.x[at] : (b.x0 + b.x1) / 2, cy = at >= 0 && r.x[at] === r.x[at] ? r.y[at] : (b.y0 + b.y1) / 2;
  const hw = cw / 2 / k, hh = ch / 2 / k;
  let c = 0;
  for (let i = 0; i < r.x.length; i++) if (Math.abs(r.x[i] - cx) <= hw && Math.abs(r.y[i] - cy) <= hh) c++;
  return c;
}

/**
 * Pick a direction for a graph shown in a pane of cw x ch, read at zoom k around node `focus` (an id; none: the
 * centre), as the canvas's first view does. layoutFn(options) -> a layout result (or a promise of one). Top to
 * bottom if the graph fits the pane at zoom fitK (node text at 10 px) that way; else the direction whose first
 * view shows more nodes (left to right by at least 20%: ties stay top to bottom). Returns {dir, TB, LR?}: the
 * direction and the layouts made on the way.
 */
export async function pickDirection(view, layoutFn, cw, ch, focus = undefined, k = 1, fitK = 10 / 11) {
  const TB = await layoutFn(LAYOUT_OPTIONS.TB);
  if (!view.nodes.length || fitZoom(TB.bounds, cw, ch) >= fitK) return { dir: "TB", TB };
  const LR = await layoutFn(LAYOUT_OPTIONS.LR), at = view.nodes.findIndex((u) => u.id === focus);
  return { dir: shown(LR, at, cw, ch, k) > 1.2 * shown(TB, at, cw, ch, k) ? "LR" : "TB", TB, LR };
}
