"""The compare view in Debian's Chromium against the real server: two recorded runs of one script, one with
NOOPT=1. The table lists every kernel of both, matched; sorting by a column reorders it; a row opens both kernels
side by side with the code diff and the passes, and links into a run's rewrites. Also the terminal's view of the
same two runs (`tinyviz compare --json`): the optimized run's matmul is the faster one."""
from __future__ import annotations
import json, os, subprocess, sys
from pathlib import Path
import pytest
from conftest import run_server, ServerUnavailable

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import numpy as np
from tinygrad import Tensor
a = Tensor(np.random.default_rng(0).random((320, 320), dtype=np.float32))
for _ in range(3): (a @ a).relu().realize()
(a * 2 + 1).exp().sum().realize()
"""

@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
  d = tmp_path_factory.mktemp("compare")
  out = []
  for name, extra in (("opt", {}), ("noopt", {"NOOPT": "1"})):
    trace = d / f"{name}.tinyviz.jsonl"
    env = {**os.environ, "VIZ": "-1", "TINYVIZ_TRACE": str(trace), "PYTHONPATH": str(ROOT), **extra}
    env.pop("DEBUG", None)
    p = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and trace.exists(), p.stderr
    out.append(trace)
  return d, out

def test_terminal_compare_says_the_optimized_matmul_is_faster(two_runs):
  _, (opt, noopt) = two_runs
  p = subprocess.run([sys.executable, "-m", "viz", "compare", str(noopt), str(opt), "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
  assert p.returncode == 0, p.stderr
  got = json.loads(p.stdout)
  assert got["only_a"] == [] and got["only_b"] == []  # every kernel of both, matched
  mm = next(k for k in got["kernels"] if k["name"].startswith("r_320_320_320"))
  assert mm["a"]["count"] == mm["b"]["count"] == 3 and mm["ratio"] < 1 and mm["delta_ns"] < 0  # B (optimized) faster

def test_compare_view_sorts_and_opens_a_kernel_pair(two_runs, page, artifacts):
  d, (opt, noopt) = two_runs
  try:
    with run_server([noopt, opt], d / "server.log") as srv:
      pg = page
      pg.goto(srv["url"])
      pg.goto(f"{srv['base']}/#/compare")
      pg.wait_for_selector("#cmp-table tbody tr[data-id]", timeout=30_000)
      assert "a=1" in pg.url and "b=2" in pg.url  # the first two runs picked and written to the URL
      names = pg.locator("#cmp-table tbody td.name").all_inner_texts()
      assert any(n.startswith("r_320_320_320") for n in names) and not pg.locator("#cmp-table tr.cmp-a, #cmp-table tr.cmp-b").count()
      pg.click("#cmp-table th[data-key='name']")
      pg.wait_for_function("location.hash.includes('sort=name')")
      by_name = pg.locator("#cmp-table tbody td.name").all_inner_texts()
      assert by_name == sorted(by_name, key=str.lower) or by_name == sorted(by_name, reverse=True, key=str.lower)
      pg.click("#cmp-table th[data-key='delta']")
      pg.wait_for_function("location.hash.includes('sort=delta')")
      first = pg.locator("#cmp-table tbody tr[data-id]").first
      assert first.locator("td.name").inner_text().startswith("r_320_320_320")  # the largest |B - A|: the matmul
      first.click()
      pg.wait_for_selector("#cmp-pair .cmp-diff", timeout=30_000)
      pair = pg.locator("#cmp-pair").inner_text()
      assert "code" in pair and "changed" in pair and "passes" in pair
      assert pg.locator("#cmp-pair .cmp-diff tr.d-change, #cmp-pair .cmp-diff tr.d-add, #cmp-pair .cmp-diff tr.d-del").count() > 0
      assert "k=both" in pg.url
      pg.screenshot(path=str(artifacts / "compare_pair.png"))
      pg.locator("#cmp-pair a[data-run='2']").click()  # into run B's explorer, the kernel's code open
      pg.wait_for_function("location.hash.startsWith('#/rewrites') && location.hash.includes('run=2')")
      assert not pg.locator("#view-rewrites").is_hidden()
  except ServerUnavailable as e: pytest.fail(str(e), pytrace=False)
