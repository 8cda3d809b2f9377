"""The plans panel in Debian's Chromium: a matmul kernel's code pane lists the optimizer's plans with their
estimated costs and marks the one chosen (the cheapest); a later run that remembers the choice says so."""
from __future__ import annotations
import os, subprocess, sys
from pathlib import Path
import pytest
from conftest import run_server, ServerUnavailable

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "import numpy as np\nfrom tinygrad import Tensor\na = Tensor(np.ones((48, 64), np.float32))\n(a @ a.T).realize()\n"

def _trace(d: Path, name: str, cache: Path) -> Path:
  out = d / f"{name}.tinyviz.jsonl"
  env = {**os.environ, "VIZ": "-1", "TINYVIZ_TRACE": str(out), "PYTHONPATH": str(ROOT), "TINYVIZ_CACHE": str(cache)}
  env.pop("DEBUG", None)
  p = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
  assert p.returncode == 0 and out.exists(), p.stderr
  return out

def test_plans_panel_shows_the_search(page, tmp_path, artifacts):
  cache = tmp_path / "cache"  # empty: the first run searches every plan, the second remembers the choice
  first, again = _trace(tmp_path, "first", cache), _trace(tmp_path, "again", cache)
  try:
    with run_server([first, again], tmp_path / "server.log") as srv:
      for run, searched in ((1, True), (2, False)):
        page.goto(srv["url"])
        page.goto(f"{srv['base']}/#/rewrites?run={run}")
        page.wait_for_selector(".ctx-row .badge.kind-kernel")
        page.locator(".ctx-row:has(.kind-kernel) .ctx-name", has_text="r_48_48_64").first.click()
        page.click("#code-btn")
        page.wait_for_selector("#code-pane .code-line")
        rows = page.locator("#code-pane .plan-table tr.chosen")
        assert rows.count() == 1
        text = page.inner_text("#code-pane .plans")
        if searched:
          costs = page.evaluate("""() => [...document.querySelectorAll('#code-pane .plan-table tr')].slice(1)
            .map((r) => [r.classList.contains('chosen'), r.cells[2].textContent]).filter(([, c]) => c !== '–').map(([w, c]) => [w, Number(c)])""")
          assert len(costs) >= 3, costs
          best = min(c for _, c in costs)
          assert [c for w, c in costs if w] == [best]  # the chosen plan is the cheapest by the estimate
          assert "does not apply" in text or len(costs) == page.locator("#code-pane .plan-table tr").count() - 1
          page.screenshot(path=str(artifacts / "plans.png"))
        else: assert "remembered from an earlier search" in text
  except ServerUnavailable as e: pytest.fail(str(e), pytrace=False)
