"""Real tinygrad 0.14's own VIZ files (tests/fixtures/tinygrad014/matmul: rewrites.pkl + profile.pkl, one run) in
Chromium against the real server: the explorer lists its contexts and steps through a kernel's matches with its
code; the timeline shows tinygrad's device tracks; a kernel span opens its rewrites and code."""
from __future__ import annotations
from pathlib import Path
import pytest
from conftest import run_server, ServerUnavailable
from test_timeline_ui import TL, open_timeline

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "tinygrad014" / "matmul"
STEP = "#view-rewrites[data-step='{rw}:{k}']"

@pytest.fixture(scope="module")
def tg_server(tmp_path_factory):
  d = tmp_path_factory.mktemp("tinygrad")
  try:
    with run_server([FIX / "rewrites.pkl.gz", FIX / "profile.pkl.gz"], d / "server.log") as srv: yield srv
  except ServerUnavailable as e: pytest.fail(str(e), pytrace=False)

def test_tinygrad_trace_in_the_explorer(page, tg_server, artifacts):
  pg = page
  pg.goto(tg_server["url"])
  pg.goto(f"{tg_server['base']}/#/rewrites?run=1")
  pg.wait_for_selector(".ctx-row .badge.kind-kernel", timeout=15000)
  names = pg.evaluate("() => [...document.querySelectorAll('.ctx-row .ctx-name')].map((e) => e.textContent)")
  assert any("r_64_64_64" in n for n in names) and any("Schedule" in n for n in names), names
  ctx = pg.evaluate("""() => [...document.querySelectorAll('.ctx-row')].find((r) => r.textContent.includes('r_64_64_64')).dataset.ctx""")
  pg.click(f".ctx-row[data-ctx='{ctx}'] .ctx-name")
  pg.wait_for_selector(f".rw-row[data-ctx='{ctx}']")
  rw, n = pg.evaluate(f"""() => {{
    const rows = [...document.querySelectorAll(".rw-row[data-ctx='{ctx}']")];
    rows.sort((a, b) => Number(b.querySelector('.count').textContent) - Number(a.querySelector('.count').textContent));
    return [Number(rows[0].dataset.rw), Number(rows[0].querySelector('.count').textContent)];
  }}""")
  assert n > 1
  pg.click(f".rw-row[data-rw='{rw}']")
  pg.wait_for_selector(STEP.format(rw=rw, k=0))
  pg.keyboard.press("ArrowRight")
  pg.wait_for_selector(STEP.format(rw=rw, k=1))
  pg.click("#code-btn")
  pg.wait_for_selector("#code-pane .code-line")
  assert "void r_64_64_64(" in pg.inner_text("#code-pane")
  pg.screenshot(path=str(artifacts / "tinygrad_rewrites.png"))

def test_tinygrad_trace_timeline_kernel_opens_its_rewrites(page, tg_server, artifacts):
  pg = page
  open_timeline(pg, tg_server, 1)
  tracks = pg.evaluate(f"{TL}.debug.model.tracks.map(t => ({{name: t.name, n: t.chunk ? t.chunk.n : -1}}))")
  assert {"CPU", "CPU Graph", "TINY", "USER"} <= {t["name"] for t in tracks}, tracks  # tinygrad's own names
  assert all(t["n"] > 0 for t in tracks), "every track's spans arrived"
  assert pg.evaluate(f"{TL}.debug.stats.draws.at(-1).rects") > 0
  rows = pg.locator("#view-timeline .tl-summary-table tbody tr")
  row = rows.filter(has_text="r_64_64_64").first
  row.locator("button", has_text="spans").click()
  sel = pg.evaluate(f"{TL}.debug.view.selected")
  assert sel is not None
  pg.locator("#view-timeline", has_text="Selection").get_by_text("Selection", exact=True).first.click()
  details = pg.locator("#view-timeline .tl-details")
  assert "r_64_64_64" in details.inner_text() and "CPU" in details.inner_text()
  pg.screenshot(path=str(artifacts / "tinygrad_timeline.png"))
  details.locator("button", has_text="Open in rewrite explorer").click()
  pg.wait_for_function("location.hash.startsWith('#/rewrites') && location.hash.includes('ctx=')", timeout=10000)
  pg.wait_for_selector(".ctx-row.sel-ctx", timeout=10000)
  assert "r_64_64_64" in pg.inner_text(".ctx-row.sel-ctx")
  assert pg.locator(".rw-row").count() > 10
