"""VIZ_PLANS=1 in Debian's Chromium: a matmul kernel's losing plans are contexts of their own inside the kernel's,
listed under it; the Plans panel links each losing plan to its rewrites. Without VIZ_PLANS none is recorded."""
from __future__ import annotations
import os, subprocess, sys
from pathlib import Path
import pytest
from conftest import run_server, ServerUnavailable
from profiler.events import ContextBegin, Kernel
from profiler.load import load

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "import numpy as np\nfrom tinygrad import Tensor\na = Tensor(np.ones((48, 64), np.float32))\n(a @ a.T).realize()\n"

def _trace(d: Path, name: str, cache: Path, plans: str | None) -> Path:
  out = d / f"{name}.tinyviz.jsonl"
  env = {**os.environ, "VIZ": "-1", "TINYVIZ_TRACE": str(out), "PYTHONPATH": str(ROOT), "TINYVIZ_CACHE": str(cache)}
  env.pop("DEBUG", None); env.pop("VIZ_PLANS", None)
  if plans is not None: env["VIZ_PLANS"] = plans
  p = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
  assert p.returncode == 0 and out.exists(), p.stderr
  return out

def _plan_contexts(path: Path) -> tuple[list[ContextBegin], Kernel]:
  evs = load(str(path)).events
  k = next(e for e in evs if isinstance(e, Kernel) and e.name == "r_48_48_64")
  return [e for e in evs if isinstance(e, ContextBegin) and e.kind == "plan"], k

def test_losing_plans_recorded_only_when_asked(page, tmp_path, artifacts):
  cache = tmp_path / "cache"
  plain = _trace(tmp_path, "plain", cache, None)
  assert _plan_contexts(plain)[0] == []  # by default only the winner's rewrites are recorded
  # asked for, every plan is built again (the choice is remembered by now) and each loser's rewrites recorded
  asked = _trace(tmp_path, "asked", cache, "1")
  plans, k = _plan_contexts(asked)
  built = [p for p in k.plans if not p["chosen"] and p["cost"] is not None]  # (one that did not apply shows how far it got)
  assert len(built) >= 2 and all(p.get("ctx") in {c.id for c in plans} for p in built)
  losers = [p for p in k.plans if p.get("ctx") is not None]
  assert {c.parent for c in plans} == {k.ctx} and sorted(c.name for c in plans) == sorted(p["name"] for p in losers)
  assert not any(p["chosen"] for p in losers)
  p = subprocess.run([sys.executable, "-c", "import tinygrad"], cwd=ROOT, env={**os.environ, "VIZ": "-1", "VIZ_PLANS": "maybe",
                     "TINYVIZ_TRACE": str(tmp_path / "bad.jsonl"), "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
  assert p.returncode != 0 and "VIZ_PLANS='maybe'" in p.stderr  # a typo is named, never silently ignored
  loser = built[0]
  try:
    with run_server([asked], tmp_path / "server.log") as srv:
      page.goto(srv["url"])
      page.goto(f"{srv['base']}/#/rewrites?run=1")
      page.wait_for_selector(".ctx-row .badge.kind-kernel")
      page.locator(".ctx-row:has(.kind-kernel) .ctx-name", has_text="r_48_48_64").first.click()
      page.click("#code-btn")
      page.wait_for_selector("#code-pane .plan-table")
      links = page.locator("#code-pane .plan-table a.plan-ctx")
      assert links.count() == len([p for p in k.plans if p.get("ctx") is not None])
      page.click(f"#code-pane .plan-table a[data-plan-ctx='{loser['ctx']}']")
      page.wait_for_function(f"location.hash.includes('ctx={loser['ctx']}')")
      row = page.locator(f".ctx-row[data-ctx='{loser['ctx']}']")
      assert row.locator(".badge.kind-plan").count() == 1 and loser["name"] in row.inner_text()
      page.wait_for_selector(".rw-row.sel")  # one of the plan's rewrites is open, with the kernel's code beside it
      assert page.locator(f".rw-row[data-ctx='{loser['ctx']}']").count() >= 1
      page.wait_for_selector("#code-pane .plan-table")
      page.screenshot(path=str(artifacts / "viz_plans.png"))
  except ServerUnavailable as e: pytest.fail(str(e), pytrace=False)
