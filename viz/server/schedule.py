"""A schedule context's kernels and copies (the trace's `schedule` event) as the explorer draws them: the items in run
order, the kernel records they ran, and the UOps of each item's graph down to its buffers (so a kernel box can open
into its UOps in place). No I/O; the graph itself is built in the browser (viz/frontend/rewrites/kernelgraph.js)."""
from __future__ import annotations
from typing import Any
from viz.server.graph import node_json

MAX_NODES = 50_000  # a schedule's item graphs together; past it the boxes still draw, without their UOps

def schedule_json(run: Any, ctx: int) -> dict[str, Any]:
  """{ctx, items: [{i, kind, ast, kernel, reads, writes}], kernels: {id: summary}, uops: [node], truncated}: uops hold
  each item's graph from its root down to (and with) its BUFFERs, plus every buffer's DEVICE."""
  items, rows = run.schedules[ctx], run.uops.rows
  seen: dict[int, dict[str, Any]] = {}
  truncated = False
  for it in items:
    stack = [it["ast"], *it["reads"], *it["writes"]]
    while stack:
      u = stack.pop()
      if u in seen or u not in rows: continue
      if len(seen) >= MAX_NODES: truncated = True; break
      seen[u] = node_json(run.uops, u)
      stack.extend(rows[u][3])  # down to the buffers, whose only source is their DEVICE
  kernels = {it["kernel"]: run.kernel_json(it["kernel"]) for it in items if it["kernel"] in run.kernels}
  return {"ctx": ctx, "items": [{"i": i, **it} for i, it in enumerate(items)], "kernels": {str(k): v for k, v in kernels.items()},
          "uops": list(seen.values()), "truncated": truncated}
