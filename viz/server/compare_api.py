"""The compare view's data (docs/server-api.md, "Compare"): two runs kernel by kernel from what the server holds
(each run's timeline columns and kernels), and one kernel's passes: which rewrites ran in its codegen context and
which patterns fired how often, for the side-by-side pair."""
from __future__ import annotations
from typing import Any
from profiler.compare import SpanRow, KernelInfo, compare_spans, comparison_json
from viz.server.run import Run

def _spans(run: Run) -> tuple[list[SpanRow], KernelInfo]:
  spans: list[SpanRow] = []
  for t in run.timeline.tracks:
    names, cats = t.names, t.cats
    for i in range(len(t)):
      k = t.kernel[i]
      spans.append((t.name, names[t.name_idx[i]], t.start[i], t.end[i], cats[t.cat_idx[i]], k if k >= 0 else None))
  return spans, {kid: (k.get("device", ""), k.get("src") or "") for kid, k in run.kernels.items()}

def compare_runs(a: Run, b: Run) -> dict[str, Any]:
  return comparison_json(compare_spans(*_spans(a), *_spans(b)), a.name, b.name)

def kernel_passes(run: Run, kid: int) -> dict[str, Any]:
  """The kernel's record and, for its codegen context and the contexts inside it, each rewrite with its match count
  and the patterns that fired (id -> count); the patterns' file, line and source."""
  k = run.kernel_json(kid, full=True)
  ctx = k.get("ctx")
  inside = {ctx} if ctx in run.contexts else set()
  changed = True
  while changed:  # contexts nest: a kernel's codegen context may hold others
    changed = False
    for c in run.contexts.values():
      if c.parent in inside and c.id not in inside: inside.add(c.id); changed = True
  passes, used = [], set()
  for c in sorted(inside):
    for rid in run.contexts[c].rewrites:
      r = run.rewrites[rid]
      fired: dict[int, int] = {}
      for pid, _, _ in r["matches"]:
        if pid is not None: fired[pid] = fired.get(pid, 0) + 1
      used.update(fired)
      passes.append({"id": rid, "ctx": c, "name": r["name"], "n_matches": len(r["matches"]),
                     "patterns": [{"id": p, "count": n} for p, n in sorted(fired.items(), key=lambda x: -x[1])]})
  return {"kernel": k, "passes": passes, "patterns": {str(p): run.patterns[p] for p in sorted(used) if p in run.patterns}}
