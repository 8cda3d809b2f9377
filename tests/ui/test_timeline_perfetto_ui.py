"""The timeline as a Perfetto user expects it (issue 19), in Debian's Chromium against the real server on three
traces: our engine's (two devices, a memory counter), a PyTorch CPU trace (nested ops, flows) and a JAX-shaped one
(processes named "/host:CPU" and "/device:GPU:0", flows from host launches to device ops). Counter readout and
area statistics, self time, flows on the selected span only, span search with N stepping, JAX process grouping,
pinned tracks, the overview strip and the wheel setting. Screenshots go to /tmp/shots/timeline/."""
from __future__ import annotations
import os, re, subprocess, sys
from pathlib import Path
import pytest
from conftest import run_server, ServerUnavailable
from test_timeline_ui import TWO_DEVICES, TL, open_timeline, viewport, plot_point

ROOT = Path(__file__).resolve().parents[2]
TORCH_TRACE = ROOT / "tests" / "fixtures" / "torch_cpu_trace.json"
JAX_TRACE = ROOT / "tests" / "fixtures" / "jax_trace.json"
SHOTS = Path(os.environ.get("TINYVIZ_SHOTS", "/tmp/shots/timeline"))
OURS, TORCH, JAX = "two_devices.tinyviz.jsonl", "torch_cpu_trace.json", "jax_trace.json"

@pytest.fixture(scope="module")
def srv(tmp_path_factory):
  d = tmp_path_factory.mktemp("perfetto")
  trace = d / "two_devices.tinyviz.jsonl"
  env = {**os.environ, "VIZ": "-1", "TINYVIZ_TRACE": str(trace), "PYTHONPATH": str(ROOT)}
  env.pop("DEBUG", None)
  proc = subprocess.run([sys.executable, "-c", TWO_DEVICES], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0 and trace.exists(), proc.stderr
  SHOTS.mkdir(parents=True, exist_ok=True)
  try:
    with run_server([trace, TORCH_TRACE, JAX_TRACE], d / "server.log") as s: yield s
  except ServerUnavailable as e: pytest.fail(str(e), pytrace=False)

def open_run(pg, srv: dict, name: str) -> int:
  """Open the timeline of the run read from file `name` (the server numbers runs as their files load); its id."""
  pg.goto(srv["url"])
  runs = pg.evaluate("fetch('/api/runs').then(r => r.json())")
  rid = next(r["id"] for r in runs if r["name"] == name)
  open_timeline(pg, srv, rid)
  return rid

def canvas_box(pg) -> dict: return pg.locator("#view-timeline canvas.tl-canvas").bounding_box()

def row_y(pg, pred: str) -> float:
  """Client y of the middle of the first row matching a JS predicate on r (pinned rows do not scroll)."""
  r = pg.evaluate(f"(() => {{ const v = {TL}.debug.view, r = v.model.rows.find(r => {pred}); "
                  f"return r && {{y: r.y, h: r.h, pinned: !!r.pinned, scroll: v.scroller.scrollTop}}; }})()")
  assert r is not None, pred
  return canvas_box(pg)["y"] + 40 + r["y"] - (0 if r["pinned"] else r["scroll"]) + r["h"] / 2

def test_counter_value_under_the_cursor_and_area_stats(page, srv):
  pg = page
  open_run(pg, srv, OURS)
  c = pg.evaluate(f"(() => {{ const c = {TL}.debug.model.counters.find(c => c.ts && c.ts.length > 1); "
                  f"return c && {{id: c.id, ts: Array.from(c.ts), values: Array.from(c.values)}}; }})()")
  assert c is not None, "the engine trace has a memory counter with several values"
  # the cursor over the middle of the counter's second step: the readout is that step's value
  i = max(range(1, len(c["values"])), key=lambda j: c["values"][j])
  t_next = c["ts"][i + 1] if i + 1 < len(c["ts"]) else pg.evaluate(f"{TL}.debug.model.duration")
  t = (c["ts"][i] + t_next) / 2
  pg.evaluate(f"(t) => {TL}.debug.view.setViewport({{t0: t - {t_next - c['ts'][i]}, t1: t + {t_next - c['ts'][i]}}})", t)
  box, v = canvas_box(pg), viewport(pg)
  x = box["x"] + 200 + (t - v["t0"]) / (v["t1"] - v["t0"]) * (box["width"] - 200)
  pg.mouse.move(x, row_y(pg, f"r.kind === 'counter' && r.counter.id === {c['id']}"))
  pg.wait_for_timeout(100)
  cursor = pg.evaluate(f"{TL}.debug.view.cursorTime()")
  assert c["ts"][i] <= cursor <= t_next, (cursor, c["ts"][i], t_next)
  shown = pg.evaluate(f"{TL}.debug.view.counterReadout({c['id']})")
  assert shown == pg.evaluate(f"{TL}.debug.view.formatCounterValue({c['id']}, {c['values'][i]})"), shown
  pg.screenshot(path=str(SHOTS / "counter_readout.png"))
  # an area selection over everything (a drag in the ruler): the counter's min, max and time-weighted mean
  pg.keyboard.press("f")
  box = canvas_box(pg)
  pg.mouse.move(box["x"] + 205, box["y"] + 20); pg.mouse.down()
  pg.mouse.move(box["x"] + box["width"] - 5, box["y"] + 20, steps=4); pg.mouse.up()
  table = pg.locator("#view-timeline .tl-counter-table")
  table.wait_for(timeout=3000)
  cells = table.locator("tbody tr").first.locator("td").all_inner_texts()
  fmt = lambda val: pg.evaluate(f"{TL}.debug.view.formatCounterValue({c['id']}, {val})")
  assert cells[2] == fmt(max(c["values"])), cells
  assert cells[1] == fmt(min(c["values"])), cells
  assert "self" in pg.locator("#view-timeline .tl-area-table thead").inner_text()
  pg.screenshot(path=str(SHOTS / "area_counters.png"))

def test_self_time_in_table_details_and_area_on_pytorch(page, srv):
  pg = page
  torch = open_run(pg, srv, TORCH)
  pane = pg.locator("#view-timeline .tl-kernels")
  heads = pane.locator("thead th").all_inner_texts()
  assert "self" in heads and "% (self)" in heads, heads
  assert "no kernel spans in this run: all spans summed" in pane.inner_text()
  # the "in all" figure sums self times: at most the trace's busy time summed over threads, not several times it
  got = pg.evaluate(f"""(() => {{ const m = {TL}.debug.model; let busy = 0, self = 0;
    for (const t of m.loaded()) {{ const c = t.chunk; const s = c.self;
      for (let i = 0; i < c.n; i++) self += s[i];
      let e0 = -Infinity, s0 = -Infinity;
      for (let i = 0; i < c.n; i++) {{ const a = c.start[i], b = a + c.dur[i]; if (a > e0) {{ if (e0 > s0) busy += e0 - s0; s0 = a; e0 = b; }} else if (b > e0) e0 = b; }}
      if (e0 > s0) busy += e0 - s0; }}
    return {{ busy, self, total: {TL}.debug.view.summary.total, sumDur: m.loaded().reduce((a, t) => a + t.chunk.dur.reduce((x, y) => x + y, 0), 0) }}; }})()""")
  assert got["self"] <= got["busy"] * (1 + 1e-9) and abs(got["total"] - got["self"]) < 1e-6 * got["self"], got
  assert got["sumDur"] > 1.5 * got["total"], "nested spans: the durations sum to more than the self times"
  # the details of a span with children: self < duration
  parent = pg.evaluate(f"""(() => {{ const m = {TL}.debug.model; for (const t of m.loaded()) {{ const c = t.chunk;
    for (let i = 0; i < c.n; i++) if (c.self[i] < 0.5 * c.dur[i] && c.dur[i] > 0) return {{track: t.id, index: i}}; }} return null; }})()""")
  assert parent is not None
  pg.evaluate(f"(s) => {TL}.debug.view.select(s, true)", parent)
  details = pg.locator("#view-timeline .tl-details")
  pg.wait_for_function("() => !document.querySelector('#view-timeline .tl-details').innerText.includes('…')", timeout=5000)
  text = details.inner_text()
  m = re.search(r"self\s+([\d.]+ \S+)", text)
  assert m, text
  cat = re.search(r"category\s+(\S+)", text).group(1)
  assert cat not in ("other", "…") and cat == pg.evaluate(f"fetch('/api/runs/{torch}/spans/{parent['track']}/' + {TL}.debug.model.span({parent['track']}, {parent['index']}).serverIndex).then(r => r.json()).then(j => j.cat)"), text
  pg.screenshot(path=str(SHOTS / "torch_details_self.png"))

def test_flows_only_for_the_selected_span_unless_toggled(page, srv):
  pg = page
  open_run(pg, srv, JAX)
  pg.wait_for_function(f"{TL}.debug.model.flows.length >= 12", timeout=10000)
  pg.keyboard.press("f"); pg.wait_for_timeout(100)
  last = lambda: pg.evaluate(f"{TL}.debug.stats.draws.at(-1).flows")
  pg.mouse.move(*plot_point(pg, 0.5, 0.9)); pg.wait_for_timeout(100)
  assert last() == 0, "nothing selected: no arrows"
  # select a device op that a flow ends on: only its own arrow is drawn
  op = pg.evaluate(f"""(() => {{ const m = {TL}.debug.model; const t = m.tracks.find(t => t.name.endsWith('Stream #14(Compute)'));
    const c = t.chunk; for (let i = 0; i < c.n; i++) if (m.names[t.gid[c.name[i]]] === 'dot.3') return {{track: t.id, index: i}}; return null; }})()""")
  pg.evaluate(f"(s) => {TL}.debug.view.select(s, false)", op)
  pg.wait_for_timeout(150)
  assert last() == 1, "the selected op's incoming arrow only"
  pg.screenshot(path=str(SHOTS / "jax_flow_selected.png"))
  pg.locator("#view-timeline .tl-allflows").check()
  pg.wait_for_timeout(150)
  assert last() == 12, "all flows on the toggle"
  assert pg.evaluate("JSON.parse(localStorage.getItem('tinyviz.timeline')).allFlows") is True
  pg.locator("#view-timeline .tl-allflows").uncheck()

def test_jax_processes_group_their_threads(page, srv):
  pg = page
  open_run(pg, srv, JAX)
  rows = pg.evaluate(f"{TL}.debug.model.rows.map(r => ({{kind: r.kind, label: r.label, indent: r.indent}}))")
  groups = [r["label"] for r in rows if r["kind"] == "group"]
  assert "/host:CPU" in groups and "/device:GPU:0" in groups, rows
  tracks = [r["label"] for r in rows if r["kind"] == "track"]
  assert "python3" in tracks and "Stream #14(Compute)" in tracks and "XLA Ops" in tracks, tracks
  assert any(t.endswith("/XlaCompile") and t.startswith("tf_pjrt") for t in tracks), "a thread name's own '/' stays in it"
  assert "" not in groups and all(r["indent"] == 1 for r in rows if r["kind"] == "track")
  # the counter sits under its process; the Kernels table's device column names the process
  assert any(r["kind"] == "counter" for r in rows[rows.index(next(r for r in rows if r["label"] == "/device:GPU:0")):])
  devices = set(pg.locator("#view-timeline .tl-summary-table tbody td:nth-child(2)").all_inner_texts())
  assert devices == {"/host:CPU", "/device:GPU:0"}, devices
  # a long thread name is cut with an ellipsis on the canvas and shown whole on hover
  pg.mouse.move(canvas_box(pg)["x"] + 40, row_y(pg, "r.kind === 'track' && r.label.startsWith('tf_pjrt')"))
  tip = pg.locator("#view-timeline .tl-tip")
  assert "tf_pjrt_thread_pool_worker_with_a_rather_long_name/XlaCompile" in tip.inner_text()
  pg.screenshot(path=str(SHOTS / "jax_groups.png"))

def test_search_steps_through_matches_with_n(page, srv):
  pg = page
  open_run(pg, srv, JAX)
  pg.keyboard.press("/")
  assert pg.evaluate("document.activeElement.classList.contains('tl-search')")
  pg.keyboard.type("/^dot\\.\\d$/")
  pg.wait_for_function("document.querySelector('#view-timeline .tl-hits').textContent.includes('/ 8')", timeout=5000)
  pg.keyboard.press("Enter")  # the first match, selected and shown
  pg.locator("#view-timeline canvas.tl-canvas").focus()
  seen = []
  for _ in range(9):
    sel = pg.evaluate(f"(() => {{ const s = {TL}.debug.view.selected; const sp = {TL}.debug.model.span(s.track, s.index); return {{name: sp.name, start: sp.start, track: s.track}}; }})()")
    seen.append(sel)
    pg.keyboard.press("n")
  assert all(s["name"] == "dot.3" for s in seen)
  starts = [s["start"] for s in seen[:8]]
  assert starts == sorted(starts), "N walks the matches in time order"
  assert seen[8] == seen[0], "and wraps around after the last"
  assert "2 / 8" in pg.locator("#view-timeline .tl-hits").inner_text()  # the ninth N: past the first again
  pg.keyboard.press("Shift+N"); pg.keyboard.press("Shift+N")
  assert pg.evaluate(f"{TL}.debug.view.search.cur") == 7, "shift+N steps back (wrapping)"
  # non-matching names are dimmed: the mask covers only the matches
  assert pg.evaluate(f"(() => {{ const v = {TL}.debug.view, m = v.currentMask(); return v.model.names.filter((n, i) => m[i]); }})()") == ["dot.3"]
  pg.screenshot(path=str(SHOTS / "jax_search.png"))
  # the search lives in the URL: a reload finds the same matches
  pg.wait_for_function("decodeURIComponent(location.hash).includes('tq=/^dot')", timeout=5000)
  pg.reload(); pg.wait_for_selector("#view-timeline[data-state=ready]", timeout=15000)
  pg.wait_for_function("document.querySelector('#view-timeline .tl-hits').textContent.includes('/ 8')", timeout=5000)
  assert pg.locator("#view-timeline .tl-search").input_value() == "/^dot\\.\\d$/"
  # no match says so
  pg.locator("#view-timeline .tl-search").fill("zzz-no-such-span")
  pg.wait_for_function("document.querySelector('#view-timeline .tl-hits').textContent === 'no match'", timeout=5000)  # once typing pauses

def test_pin_overview_wheel_setting_and_kernel_lanes(page, srv):
  pg = page
  open_run(pg, srv, OURS)
  # a device track's lanes are taller than the 18 px host lanes
  assert pg.evaluate(f"{TL}.debug.model.tracks.find(t => t.kind === 'device').laneH") > 18
  # pin the last track: it moves to the top and stays there when the tracks scroll
  last = pg.evaluate(f"{TL}.debug.model.rows.filter(r => r.kind === 'track').at(-1).track.id")
  box = canvas_box(pg)
  pg.mouse.move(box["x"] + 100, row_y(pg, f"r.kind === 'track' && r.track.id === {last}"))
  pg.mouse.click(box["x"] + 190, row_y(pg, f"r.kind === 'track' && r.track.id === {last}"))
  first = pg.evaluate(f"{TL}.debug.model.rows[0]")
  assert first["kind"] == "track" and first["pinned"] and first["track"]["id"] == last
  pg.screenshot(path=str(SHOTS / "pinned.png"))
  # the overview strip: a click moves the window there, keeping its width
  pg.evaluate(f"{TL}.debug.view.setViewport({{t0: 0, t1: {TL}.debug.model.duration / 10}})")
  ov = pg.locator("#view-timeline canvas.tl-overview").bounding_box()
  v0 = viewport(pg)
  pg.mouse.click(ov["x"] + 200 + 0.75 * (ov["width"] - 200), ov["y"] + ov["height"] / 2)
  v1 = viewport(pg)
  d = pg.evaluate(f"{TL}.debug.model.duration")
  assert abs((v1["t0"] + v1["t1"]) / 2 - 0.75 * d) < 0.02 * d and abs((v1["t1"] - v1["t0"]) - (v0["t1"] - v0["t0"])) < 1e-6 * d
  # Perfetto's wheel: the plain wheel leaves the window alone, ctrl+wheel zooms; the choice is kept after a reload
  pg.locator("#view-timeline select.tl-wheel").select_option("perfetto")
  pg.mouse.move(*plot_point(pg, 0.5, 0.3))
  before = viewport(pg)
  pg.mouse.wheel(0, -200); pg.wait_for_timeout(100)
  assert viewport(pg) == before
  pg.keyboard.down("Control"); pg.mouse.wheel(0, -200); pg.keyboard.up("Control"); pg.wait_for_timeout(100)
  after = viewport(pg)
  assert after["t1"] - after["t0"] < 0.9 * (before["t1"] - before["t0"])
  pg.reload(); pg.wait_for_selector("#view-timeline[data-state=ready]", timeout=15000)
  assert pg.locator("#view-timeline select.tl-wheel").input_value() == "perfetto"
  pg.locator("#view-timeline select.tl-wheel").select_option("zoom")

def test_help_shows_the_timeline_keys_and_no_live_for_a_saved_file(page, srv):
  pg = page
  open_run(pg, srv, OURS)
  pg.locator("#view-timeline canvas.tl-canvas").focus()
  pg.keyboard.press("?")
  help_text = pg.locator("#help").inner_text()
  assert "W / S" in help_text and "find spans" in help_text, help_text
  assert "hub nodes" not in help_text, "the rewrite view's keys are not shown on the timeline"
  pg.screenshot(path=str(SHOTS / "help.png"))
  pg.keyboard.press("Escape")
  assert "live" not in pg.locator("#conn").inner_text(), "a saved file is not live"
  assert "live" not in pg.locator("#run-title").inner_text()
  # the sidebar folds (and the timeline takes the width), and stays folded after a reload
  w0 = canvas_box(pg)["width"]
  pg.locator("#side-btn").click()
  assert not pg.locator("#sidebar").is_visible()
  pg.wait_for_function(f"document.querySelector('#view-timeline canvas.tl-canvas').getBoundingClientRect().width > {w0 + 100}", timeout=5000)
  pg.reload(); pg.wait_for_selector("#view-timeline[data-state=ready]", timeout=15000)
  assert not pg.locator("#sidebar").is_visible()
  pg.locator("#side-btn").click()
  assert pg.locator("#sidebar").is_visible()

def test_the_tooltip_follows_the_view_under_a_still_mouse(page, srv):
  pg = page
  open_run(pg, srv, JAX)
  # the window around XlaCompile's end, the mouse over the part of it in view
  p = pg.evaluate(f"""(() => {{ const v = {TL}.debug.view, t = v.model.tracks.find(t => t.name.endsWith('/XlaCompile')), sp = v.model.span(t.id, 0);
    const w = (sp.end - sp.start) / 2; v.setViewport({{t0: sp.end - w / 2, t1: sp.end + w / 2}}); v.drawNow(); return {TL}.debug.spanPoint(t.id, 0); }})()""")
  pg.mouse.move(p["x"], p["y"])
  tip = pg.locator("#view-timeline .tl-tip")
  assert tip.is_visible() and "XlaCompile" in tip.inner_text()
  pg.keyboard.down("d")  # pan right by about a window: XlaCompile leaves the mouse, which does not move
  pg.wait_for_timeout(800)
  pg.keyboard.up("d")
  pg.wait_for_timeout(100)
  after = tip.inner_text() if tip.is_visible() else None
  assert after is None or "XlaCompile" not in after, after
  pg.mouse.move(p["x"] + 40, p["y"])  # what moving the mouse there says
  pg.mouse.move(p["x"], p["y"])
  assert (tip.inner_text() if tip.is_visible() else None) == after
