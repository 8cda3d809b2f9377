"""The timeline view in Debian's Chromium against the real server: a real engine trace with two devices (CPU and
PYTHON), a PyTorch Chrome trace, and a live run streamed in over /ingest.

Uses conftest's `page` (which fails a test on console errors) and `artifacts`; the server is our own (both traces
in one server, and a live run added to it), started like conftest's (`python -m viz FILE... --no-browser --port P`)
and stopped by its PID."""
from __future__ import annotations
import json, os, re, subprocess, sys
from pathlib import Path
import pytest
from conftest import run_server, ServerUnavailable

ROOT = Path(__file__).resolve().parents[2]
TORCH_TRACE = ROOT / "tests" / "fixtures" / "torch_cpu_trace.json"
TWO_DEVICES = """
from tinygrad import Tensor
a = Tensor.arange(64).reshape(8, 8).float()
print((a @ a.T).relu().sum(axis=0).numpy()[:2])
b = Tensor.arange(16, device="PYTHON").float() * 2 + 1
print(b.sum().numpy())
"""
TL = "document.getElementById('view-timeline').timeline"

@pytest.fixture(scope="module")
def tl_server(tmp_path_factory):
  """The real server on [two-device engine trace, PyTorch trace]: {url, base, port, token}."""
  d = tmp_path_factory.mktemp("timeline")
  trace = d / "two_devices.tinyviz.jsonl"
  env = {**os.environ, "VIZ": "-1", "TINYVIZ_TRACE": str(trace), "PYTHONPATH": str(ROOT)}
  env.pop("DEBUG", None)
  proc = subprocess.run([sys.executable, "-c", TWO_DEVICES], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0 and trace.exists(), proc.stderr
  try:
    with run_server([trace, TORCH_TRACE], d / "server.log") as srv: yield srv
  except ServerUnavailable as e: pytest.fail(str(e), pytrace=False)

def open_timeline(pg, server: dict, run: int, extra: str = "") -> None:
  """conftest's `page` starts on conftest's server: log in to ours (the token URL sets the cookie), open the run."""
  pg.goto(server["url"])
  pg.goto(f"{server['base']}/#/timeline?run={run}{extra}")
  pg.wait_for_selector("#view-timeline[data-state=ready]", timeout=15000)

def viewport(pg) -> dict: return pg.evaluate(f"{TL}.debug.viewport()")

def plot_point(pg, fx: float = 0.5, fy: float = 0.3) -> tuple[float, float]:
  """A point over the spans (right of the track names), as fractions of the canvas."""
  box = pg.locator("#view-timeline canvas.tl-canvas").bounding_box()
  return box["x"] + 200 + (box["width"] - 200) * fx, box["y"] + 40 + (box["height"] - 40) * fy

def test_engine_trace_has_a_track_per_device(page, tl_server, artifacts):
  pg = page
  open_timeline(pg, tl_server, 1)
  tracks = pg.evaluate(f"{TL}.debug.model.tracks.map(t => ({{name: t.name, kind: t.kind, n: t.chunk ? t.chunk.n : -1}}))")
  devices = {t["name"] for t in tracks if t["kind"] == "device"}
  assert {"CPU", "PYTHON"} <= devices, tracks
  assert {t["kind"] for t in tracks} >= {"host", "tensor", "device"}
  assert all(t["n"] > 0 for t in tracks), "every track's spans arrived"
  rows = pg.evaluate(f"{TL}.debug.model.rows.map(r => r.kind + ':' + r.label)")
  assert "track:Host" in rows and "track:Tensor calls" in rows
  assert any(r.startswith("counter:memory") for r in rows), rows
  # something was drawn: the last frame drew span rectangles
  assert pg.evaluate(f"{TL}.debug.stats.draws.at(-1).rects") > 0
  assert "kernels" in pg.locator("#view-timeline .tl-kernels").inner_text()
  pg.screenshot(path=str(artifacts / "timeline_engine.png"))

def test_zoom_with_w_wheel_and_fit(page, tl_server):
  pg = page
  open_timeline(pg, tl_server, 1)
  x, y = plot_point(pg, 0.3, 0.2)
  pg.mouse.move(x, y)
  v0 = viewport(pg)
  t_at = lambda v: v["t0"] + 0.3 * (v["t1"] - v["t0"])
  pg.keyboard.down("w"); pg.wait_for_timeout(300); pg.keyboard.up("w")
  v1 = viewport(pg)
  assert v1["t1"] - v1["t0"] < (v0["t1"] - v0["t0"]) / 1.5, (v0, v1)
  assert abs(t_at(v1) - t_at(v0)) < 0.02 * (v0["t1"] - v0["t0"]), "W zooms about the cursor"
  pg.mouse.wheel(0, -300)
  pg.wait_for_timeout(100)
  v2 = viewport(pg)
  assert v2["t1"] - v2["t0"] < (v1["t1"] - v1["t0"]) / 1.5
  assert abs(t_at(v2) - t_at(v1)) < 0.02 * (v1["t1"] - v1["t0"]), "the wheel zooms about the cursor"
  pg.keyboard.down("d"); pg.wait_for_timeout(150); pg.keyboard.up("d")
  assert viewport(pg)["t0"] > v2["t0"], "D pans right"
  pg.mouse.wheel(0, 400)
  pg.wait_for_timeout(100)
  assert viewport(pg)["t1"] - viewport(pg)["t0"] > v2["t1"] - v2["t0"], "wheel down zooms out"
  pg.keyboard.press("f")
  v3 = viewport(pg)
  assert v3["t0"] <= 0 and abs((v3["t1"] - v3["t0"]) - (v0["t1"] - v0["t0"])) < 0.05 * (v0["t1"] - v0["t0"]), "f fits everything"
  # the viewport goes into the URL, and the URL restores it
  pg.wait_for_function("location.hash.includes('t0=')", timeout=3000)
  assert re.search(r"t0=-?\d+&t1=\d+|t1=\d+.*t0=-?\d+", pg.evaluate("location.hash"))

def test_select_kernel_span_and_open_its_rewrites(page, tl_server, artifacts):
  pg = page
  open_timeline(pg, tl_server, 1)
  # the kernel summary lists the run's kernels; "spans" selects the first run of one and brings it into view
  rows = pg.locator("#view-timeline .tl-summary-table tbody tr")
  assert rows.count() >= 3
  name = rows.nth(0).locator("td.name").inner_text()
  rows.nth(0).locator("button", has_text="spans").click()
  sel = pg.evaluate(f"{TL}.debug.view.selected")
  assert sel is not None
  # click the span on the canvas itself (first elsewhere, to clear the selection)
  pg.keyboard.press("Escape")
  assert pg.evaluate(f"{TL}.debug.view.selected") is None
  pt = pg.evaluate(f"{TL}.debug.spanPoint({sel['track']}, {sel['index']})")
  assert pt is not None, "the selected span is on screen"
  pg.mouse.click(pt["x"], pt["y"])
  assert pg.evaluate(f"{TL}.debug.view.selected") == sel
  details = pg.locator("#view-timeline .tl-details")
  text = details.inner_text()
  assert name in text
  for field in ("device", "start", "duration", "global size", "GFLOPS", "GB/s"):
    assert field in text, text
  assert re.search(r"duration\s+[\d.]+ (ns|µs|ms)", text)
  pg.wait_for_function("location.hash.includes('span=')", timeout=10000)
  pg.screenshot(path=str(artifacts / "timeline_selected.png"))
  # a host codegen span of a kernel shows the kernel's work, but no rate: GFLOPS over compile time means nothing
  cg = pg.evaluate(f"""() => {{ for (const t of {TL}.debug.model.tracks) {{ const c = t.chunk;
    for (let i = 0; i < c.n; i++) if (c.cat[i] === 3) return {{ track: t.id, index: c.index[i] }}; }} return null; }}""")
  assert cg is not None, "the trace has codegen spans"
  pg.evaluate(f"(s) => {TL}.debug.view.select(s, true)", cg)
  pg.wait_for_function(f"{TL}.debug.view.selected && {TL}.debug.view.selected.index === {cg['index']}")
  cg_text = details.inner_text()
  assert "codegen" in cg_text and "FLOPs" in cg_text and "GFLOPS" not in cg_text and "GB/s" not in cg_text, cg_text
  pg.evaluate(f"(s) => {TL}.debug.view.select(s, true)", sel)
  pg.wait_for_function(f"{TL}.debug.view.selected && {TL}.debug.view.selected.index === {sel['index']}")
  details.locator("button", has_text="Open in rewrite explorer").click()
  pg.wait_for_function("location.hash.startsWith('#/rewrites') && location.hash.includes('ctx=')", timeout=10000)
  assert "kernel=" in pg.evaluate("location.hash")
  assert pg.locator("#view-rewrites").is_visible()
  assert not pg.locator("#view-timeline").is_visible()
  # back to the timeline: the same span is still selected
  pg.go_back()
  pg.wait_for_function("location.hash.startsWith('#/timeline')", timeout=10000)
  pg.wait_for_selector("#view-timeline[data-state=ready]", timeout=10000)
  assert pg.evaluate(f"{TL}.debug.view.selected") == sel

def test_area_selection_sums_by_name(page, tl_server, artifacts):
  pg = page
  open_timeline(pg, tl_server, 1)
  # everything, over all tracks: a drag in the ruler
  box = pg.locator("#view-timeline canvas.tl-canvas").bounding_box()
  y = box["y"] + 20
  pg.mouse.move(box["x"] + 205, y)
  pg.mouse.down()
  pg.mouse.move(box["x"] + box["width"] - 5, y, steps=4)
  pg.mouse.up()
  table = pg.locator("#view-timeline .tl-area-table")
  table.wait_for(timeout=3000)
  head = pg.locator("#view-timeline .tl-details .tl-dhead").inner_text()
  n = int(re.search(r"([\d,]+) spans", head).group(1).replace(",", ""))
  total = pg.evaluate(f"{TL}.debug.model.tracks.reduce((s, t) => s + t.chunk.n, 0)")
  assert n == total, (head, total)
  names = table.locator("tbody td.name").all_inner_texts()
  assert len(names) >= 5 and any(s.startswith("Tensor.") for s in names)
  counts = [int(c.replace(",", "")) for c in table.locator("tbody tr td:nth-child(2)").all_inner_texts()]
  assert sum(counts) == n
  # sortable: by count, descending then ascending
  table.locator("th", has_text="count").click()
  counts = [int(c.replace(",", "")) for c in pg.locator("#view-timeline .tl-area-table tbody tr td:nth-child(2)").all_inner_texts()]
  assert counts == sorted(counts, reverse=True)
  pg.locator("#view-timeline .tl-area-table th", has_text="count").click()
  counts = [int(c.replace(",", "")) for c in pg.locator("#view-timeline .tl-area-table tbody tr td:nth-child(2)").all_inner_texts()]
  assert counts == sorted(counts)
  pg.locator("#view-timeline .tl-area-table th", has_text="name").click()
  names = pg.locator("#view-timeline .tl-area-table tbody td.name").all_inner_texts()
  natural = lambda s: [int(p) if p.isdigit() else p.lower() for p in re.split(r"(\d+)", s)]
  assert names == sorted(names, key=natural) or names == sorted(names, key=natural, reverse=True)
  # shift-drag over one track only: fewer spans
  x0, yh = plot_point(pg, 0.0, 0.0)
  host = pg.evaluate(f"{TL}.debug.model.rows.find(r => r.label === 'Host')")
  yh = box["y"] + 40 + host["y"] + 8
  pg.keyboard.down("Shift")
  pg.mouse.move(box["x"] + 205, yh)
  pg.mouse.down()
  pg.mouse.move(box["x"] + box["width"] - 5, yh + 2, steps=3)
  pg.mouse.up()
  pg.keyboard.up("Shift")
  head = pg.locator("#view-timeline .tl-details .tl-dhead").inner_text()
  assert "on 1 track" in head, head
  m = int(re.search(r"([\d,]+) spans", head).group(1).replace(",", ""))
  assert 0 < m < n
  pg.screenshot(path=str(artifacts / "timeline_area.png"))
  # zoom to the selection
  pg.locator("#view-timeline .tl-details button", has_text="Zoom to selection").click()
  area = pg.evaluate(f"{TL}.debug.view.area")
  v = viewport(pg)
  assert v["t0"] <= area["t0"] and v["t1"] >= area["t1"] and (v["t1"] - v["t0"]) < 1.1 * (area["t1"] - area["t0"])

def test_kernel_summary_filter(page, tl_server):
  pg = page
  open_timeline(pg, tl_server, 1)
  pane = pg.locator("#view-timeline .tl-kernels")
  all_rows = pane.locator("tbody tr").count()
  devices = pane.locator("tbody tr td:nth-child(2)").all_inner_texts()
  assert set(devices) >= {"CPU", "PYTHON"}
  pane.locator("input.tl-filter").fill("python")
  pg.wait_for_timeout(100)
  assert 0 < pane.locator("tbody tr").count() < all_rows
  assert set(pane.locator("tbody tr td:nth-child(2)").all_inner_texts()) == {"PYTHON"}
  pane.locator("input.tl-filter").fill("/^nothing$/")
  assert pane.locator("tbody tr").count() == 0

def test_pytorch_trace_shows_processes_and_threads(page, tl_server, artifacts):
  pg = page
  open_timeline(pg, tl_server, 2)
  rows = pg.evaluate(f"{TL}.debug.model.rows.map(r => ({{kind: r.kind, label: r.label}}))")
  threads = [r["label"] for r in rows if r["kind"] == "track"]
  groups = [r["label"] for r in rows if r["kind"] == "group"]
  assert any(re.match(r"thread \d+ \(python\)", t) for t in threads), rows
  assert "python" in groups
  assert pg.evaluate(f"{TL}.debug.model.tracks.every(t => t.kind === 'thread')")
  n = pg.evaluate(f"{TL}.debug.model.tracks.reduce((s, t) => s + t.chunk.n, 0)")
  assert n > 100
  assert pg.evaluate(f"{TL}.debug.model.byId.get(0).nLanes") > 1, "nested CPU ops draw as a flame"
  assert pg.evaluate(f"{TL}.debug.model.counters.length") >= 1, "PyTorch's memory instants become a counter"
  assert "all spans summed" in pg.locator("#view-timeline .tl-kernels").inner_text()
  pg.screenshot(path=str(artifacts / "timeline_torch.png"))

def test_live_run_grows_and_follows(page, tl_server):
  import websockets.sync.client as websockets
  pg = page
  url = f"ws://127.0.0.1:{tl_server['port']}/ingest"
  t = 10**12
  def span(i: int) -> dict:
    return {"type": "span", "track": "CPU", "name": f"E_{4 + i % 3}", "start_ns": t + i * 100_000, "end_ns": t + i * 100_000 + 60_000,
            "cat": "kernel", "args": {}}
  with websockets.connect(url, additional_headers={"X-Tinyviz-Token": tl_server["token"]}, open_timeout=10) as ws:
    json.loads(ws.recv())
    run = {"type": "run", "script": "/tmp/live.py", "argv": ["live.py"], "start_time": 1.0, "clock_ns": t, "pid": 4242, "version": "0",
           "mode": "profile"}
    ws.send(json.dumps([run] + [span(i) for i in range(50)]))
    rid = json.loads(ws.recv())["run"]
    open_timeline(pg, tl_server, rid)
    assert pg.evaluate(f"{TL}.debug.model.byId.get(0).chunk.n") == 50
    assert pg.locator("#view-timeline .tl-follow").is_checked(), "a live run follows the newest events"
    for k in range(1, 4):
      ws.send(json.dumps([span(i) for i in range(50 * k, 50 * (k + 1))]))
      json.loads(ws.recv())
    pg.wait_for_function(f"{TL}.debug.model.byId.get(0).chunk.n === 200", timeout=10000)
    pg.wait_for_timeout(200)
    v = viewport(pg)
    assert v["t1"] >= 199 * 100_000, f"the window follows the newest span: {v}"
    # panning stops following
    pg.mouse.move(*plot_point(pg))
    pg.keyboard.down("a"); pg.wait_for_timeout(100); pg.keyboard.up("a")
    assert not pg.locator("#view-timeline .tl-follow").is_checked()
    ws.send(json.dumps([{"type": "run_end", "ts_ns": t + 300 * 100_000}]))
    json.loads(ws.recv())
  pg.wait_for_function(f"!{TL}.debug.view.live", timeout=10000)
