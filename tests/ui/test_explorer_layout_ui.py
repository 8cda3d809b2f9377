"""The rewrite explorer at reading size, in Chromium at 1280x720 and 1920x1080 against the real server and a real
engine trace: the first view's text is readable (>= 10 CSS px) and shows the match; with the code pane open the
graph keeps at least half the width and the title keeps its file:line; the URL restores the camera and the layout
direction; a removed node is drawn beside its replacement; the minimap and legend step aside from the match.
Screenshots go to tests/ui/artifacts/ (and /tmp/shots/explorerB/ when that folder exists)."""
from __future__ import annotations
import re
from pathlib import Path
import pytest
from test_rewrites_ui import open_kernel, STEP

SIZES = [(1280, 720), (1920, 1080)]
FONT_PX = 11  # rewrites/graph.js: node text size at zoom 1
SHOTS = Path("/tmp/shots/explorerB")

@pytest.fixture(params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def sized(request, browser, server):
  """A page at one window size; console errors fail the test."""
  w, h = request.param
  ctx = browser.new_context(viewport={"width": w, "height": h})
  pg = ctx.new_page()
  errors: list[str] = []
  pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))
  pg.on("console", lambda m: errors.append(f"console.error: {m.text}") if m.type == "error" else None)
  pg.goto(server["url"])
  pg.size = (w, h)  # type: ignore[attr-defined]
  yield pg
  ctx.close()
  bad = [e for e in errors if "Failed to load resource" not in e]
  assert not bad, "\n".join(bad)

def shot(page, artifacts, name):
  w, h = page.size
  page.mouse.move(w - 2, 45)  # off the sidebar's kernel names and the graph's nodes (their tooltips)
  page.wait_for_timeout(100)
  path = artifacts / f"explorer_{name}_{w}x{h}.png"
  page.screenshot(path=str(path))
  if SHOTS.is_dir(): page.screenshot(path=str(SHOTS / path.name))

CAMERA = "() => window.tinyviz.rewrites.canvas.getCamera()"
# screen rectangle (in the canvas) of a drawn node, or null
NODE_RECT = """(id) => { const c = window.tinyviz.rewrites.canvas, i = c.index.get(id);
  if (i === undefined || !(c.r.x[i] === c.r.x[i])) return null;
  const [x, y] = c.screenPos(id), hw = c.W[i] / 2 * c.cam.k, hh = c.H[i] / 2 * c.cam.k;
  return [x - hw, y - hh, x + hw, y + hh]; }"""
# an overlay's rectangle relative to the canvas, or null when it is not shown
OVERLAY_RECT = """(sel) => { const e = document.querySelector(sel), g = document.getElementById('graph-canvas').getBoundingClientRect();
  if (!e || e.hidden || getComputedStyle(e).visibility === 'hidden' || getComputedStyle(e).display === 'none') return null;
  const r = e.getBoundingClientRect(); return [r.left - g.left, r.top - g.top, r.right - g.left, r.bottom - g.top]; }"""

def overlaps(a, b): return a is not None and b is not None and a[0] < b[2] and a[2] > b[0] and a[1] < b[3] and a[3] > b[1]

def test_first_view_is_readable_and_shows_the_match(sized, artifacts):
  page = sized
  rw, n = open_kernel(page)
  page.wait_for_timeout(200)
  cam = page.evaluate(CAMERA)
  assert cam["k"] * FONT_PX >= 10, f"first view at zoom {cam['k']:.2f}: text {cam['k'] * FONT_PX:.1f} px"
  # step 0 opens on the node the first match rewrites (else the root), inside the pane
  first = page.evaluate(f"() => fetch('/api/runs/' + window.tinyviz.rewrites.p.run + '/rewrites/{rw}/step/1').then((r) => r.json()).then((s) => s.match.before)")
  drawn = page.evaluate(NODE_RECT, first)
  target = first if drawn else page.evaluate("() => window.tinyviz.rewrites.data.cur.root")
  r = page.evaluate(NODE_RECT, target)
  box = page.locator("#graph-canvas").bounding_box()
  assert r and r[0] >= 0 and r[1] >= 0 and r[2] <= box["width"] and r[3] <= box["height"], f"node {target} at {r} not in the {box['width']}x{box['height']} pane"
  shot(page, artifacts, "first_view")
  # "fit" on request: the whole graph in view (button and key)
  page.click("#fit-btn")
  page.wait_for_timeout(150)
  b = page.evaluate("() => { const c = window.tinyviz.rewrites.canvas, b = c.r.bounds, k = c.cam.k; return [(b.x0 - c.cam.x) * k, (b.y0 - c.cam.y) * k, (b.x1 - c.cam.x) * k, (b.y1 - c.cam.y) * k]; }")
  assert b[0] >= -1 and b[1] >= -1 and b[2] <= box["width"] + 1 and b[3] <= box["height"] + 1, b

def test_code_pane_leaves_the_graph_half_the_width_and_the_title_its_file_line(sized, artifacts):
  page = sized
  rw, n = open_kernel(page)
  page.wait_for_timeout(200)
  centre = page.evaluate(CAMERA)
  page.click("#code-btn")
  page.wait_for_selector("#code-pane .code-line")
  page.wait_for_timeout(200)
  now = page.evaluate(CAMERA)
  assert abs(now["x"] - centre["x"]) < 1 and abs(now["y"] - centre["y"]) < 1, f"the graph's middle moved: {centre} -> {now}"
  w = page.evaluate("() => innerWidth")
  graph = page.locator("#graph-wrap").bounding_box()
  assert graph["width"] >= w / 2 - 1, f"graph {graph['width']:.0f} px of {w}"
  code, details = page.locator("#code-pane").bounding_box(), page.locator("#rw-panel").bounding_box()
  assert code["width"] >= 200 and details["height"] >= 60, (code, details)
  # the title: kernel, rewrite and file:line, the last never cut
  title, loc = page.locator("#rw-title").bounding_box(), page.locator("#rw-title .t-loc").bounding_box()
  assert re.fullmatch(r"[\w.]+\.py:\d+", page.inner_text("#rw-title .t-loc")), page.inner_text("#rw-title .t-loc")
  assert loc["x"] + loc["width"] <= title["x"] + title["width"] + 0.5, "file:line cut off"
  assert page.locator("#rw-title .t-ctx .kname, #rw-title .t-ctx").count() >= 1 and page.inner_text("#rw-title .t-rw")
  # a splitter moves the boundary; the graph still keeps half
  s = page.locator("#split-right").bounding_box()
  page.mouse.move(s["x"] + 3, s["y"] + 100); page.mouse.down(); page.mouse.move(s["x"] - 400, s["y"] + 100, steps=4); page.mouse.up()
  page.wait_for_timeout(150)
  assert page.locator("#graph-wrap").bounding_box()["width"] >= w / 2 - 1, "a splitter took the graph below half"
  side = page.locator("#sidebar").bounding_box()["width"]
  s = page.locator("#split-sidebar").bounding_box()
  page.mouse.move(s["x"] + 3, s["y"] + 200); page.mouse.down(); page.mouse.move(s["x"] + 83, s["y"] + 200, steps=4); page.mouse.up()
  page.wait_for_timeout(150)
  assert abs(page.locator("#sidebar").bounding_box()["width"] - side - 80) < 2, "the sidebar's splitter does not move it"
  assert page.locator("#graph-wrap").bounding_box()["width"] >= w / 2 - 1, "a wider sidebar took the graph below half"
  shot(page, artifacts, "code_open")

def test_url_restores_camera_and_direction(sized, artifacts):
  page = sized
  rw, n = open_kernel(page)
  page.keyboard.press("l")  # switch the direction
  page.wait_for_function("() => /layout=(lr|tb)/.test(location.hash)")
  want_dir = "LR" if "layout=lr" in page.url else "TB"
  page.wait_for_selector(f"#view-rewrites[data-dir='{want_dir}']")
  page.wait_for_timeout(200)
  box = page.locator("#graph-canvas").bounding_box()
  page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
  page.mouse.wheel(0, -300)
  page.mouse.down(); page.mouse.move(box["x"] + box["width"] / 2 - 120, box["y"] + box["height"] / 2 - 60, steps=5); page.mouse.up()
  page.wait_for_function("() => /cam=-?\\d+,-?\\d+,[\\d.]+/.test(location.hash)")
  before = page.evaluate(CAMERA)
  m = re.search(r"cam=(-?\d+),(-?\d+),([\d.]+)", page.url)
  assert abs(float(m.group(1)) - before["x"]) <= 1 and abs(float(m.group(3)) - before["k"]) < 0.002, (m.group(0), before)
  shot(page, artifacts, "camera_before_reload")
  page.reload()
  page.wait_for_selector(STEP.format(rw=rw, k=0))
  page.wait_for_selector(f"#view-rewrites[data-dir='{want_dir}']")
  page.wait_for_timeout(200)
  after = page.evaluate(CAMERA)
  assert abs(after["x"] - before["x"]) <= 1 and abs(after["y"] - before["y"]) <= 1 and abs(after["k"] - before["k"]) < 0.002, (before, after)
  shot(page, artifacts, "camera_after_reload")
  # another rewrite forgets the camera but keeps the direction
  page.keyboard.press("ArrowDown")
  page.wait_for_function("() => !/cam=/.test(location.hash)")
  assert f"layout={want_dir.lower()}" in page.url

def test_removed_node_beside_its_replacement_and_overlays_aside(sized, artifacts):
  page = sized
  rw, n = open_kernel(page)
  # every step whose matched node is removed: it is drawn next to the node that replaced it, the two boxes no
  # further apart than two neighbours of a layer (nodeSep 24) across, and in the same or the next layer (rankSep 48,
  # plus up to a node's height where the layers' tallest nodes are taller than these two)
  found, gaps = None, []
  for k in range(1, n + 1):
    page.keyboard.press("ArrowRight")
    page.wait_for_selector(STEP.format(rw=rw, k=k))
    g = page.evaluate("""() => { const v = window.tinyviz.rewrites, m = v.data.cur.match, c = v.canvas;
      if (!m) return null;
      const u = v.data.union.find((x) => x.id === m.before), i = c.index.get(m.before), j = c.index.get(m.after);
      if (!u || u.state !== 'removed' || i === undefined || j === undefined || !(c.r.x[i] === c.r.x[i]) || !(c.r.x[j] === c.r.x[j])) return null;
      return {k: v.data.cur.k, after: m.after, across: Math.max(0, Math.abs(c.r.x[i] - c.r.x[j]) - (c.W[i] + c.W[j]) / 2),
              down: Math.max(0, Math.abs(c.r.y[i] - c.r.y[j]) - (c.H[i] + c.H[j]) / 2)}; }""")
    if g:
      gaps.append(g)
      if found is None:
        found = g
        shot(page, artifacts, "removed_beside")
    if len(gaps) >= 8: break
  assert found, f"no step of {n} draws its removed node"
  far = [g for g in gaps if g["across"] > 24 + 1 or g["down"] > 48 + 40]
  assert not far, f"removed nodes away from their replacements: {far}"
  # park the match under the minimap's corner, then under the legend: each steps aside
  if page.evaluate("() => !document.getElementById('minimap').hidden"):
    page.evaluate("""(id) => { const c = window.tinyviz.rewrites.canvas, i = c.index.get(id);
      c.setCamera({ x: c.r.x[i] - (c.cw / 2 - 70) / c.cam.k, y: c.r.y[i] - (c.ch / 2 - 50) / c.cam.k, k: c.cam.k }); }""", found["after"])
    page.wait_for_timeout(150)
    assert not overlaps(page.evaluate(NODE_RECT, found["after"]), page.evaluate(OVERLAY_RECT, "#minimap")), "the minimap covers the match"
    assert page.evaluate("() => document.getElementById('minimap').dataset.place") in ("left", "folded")
  page.evaluate("""(id) => { const c = window.tinyviz.rewrites.canvas, i = c.index.get(id);
    c.setCamera({ x: c.r.x[i] + (c.cw / 2 - 90) / c.cam.k, y: c.r.y[i] + (c.ch / 2 - 22) / c.cam.k, k: c.cam.k }); }""", found["after"])
  page.wait_for_timeout(150)
  assert not overlaps(page.evaluate(NODE_RECT, found["after"]), page.evaluate(OVERLAY_RECT, "#graph-legend")), "the legend covers the match"
  shot(page, artifacts, "overlays_aside")
