"""The rewrite explorer in Chromium against the real server and a real engine trace: pick a kernel, step through
matches (highlighted nodes, the pattern's file:line), open the code, reload and land on the same step; search,
hub modes, the kernel-name legend, the timeline tab. Screenshots of each view go to tests/ui/artifacts/."""
from __future__ import annotations
import re

STEP = "#view-rewrites[data-step='{rw}:{k}']"

# counts canvas pixels near an [r, g, b] colour (the highlight rings are drawn in these)
COUNT_COLOUR = """([r, g, b]) => {
  const c = document.getElementById('graph-canvas'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - r) < 24 && Math.abs(d[i + 1] - g) < 24 && Math.abs(d[i + 2] - b) < 24) n++;
  return n;
}"""
GREEN, RED = [87, 171, 90], [229, 83, 75]

def open_kernel(page):
  """Click the kernel context with the most matches, then its rewrite with the most matches; returns (rw id, n)."""
  page.wait_for_selector(".ctx-row .badge.kind-kernel")
  best = page.evaluate("""() => {
    const rows = [...document.querySelectorAll('.ctx-row')].filter((r) => r.querySelector('.kind-kernel'));
    rows.sort((a, b) => Number(b.querySelector('.count').textContent) - Number(a.querySelector('.count').textContent));
    return rows[0].dataset.ctx;
  }""")
  page.click(f".ctx-row[data-ctx='{best}'] .ctx-name")
  page.wait_for_selector(f".rw-row[data-ctx='{best}']")
  rw, n = page.evaluate(f"""() => {{
    const rows = [...document.querySelectorAll(".rw-row[data-ctx='{best}']")];
    rows.sort((a, b) => Number(b.querySelector('.count').textContent) - Number(a.querySelector('.count').textContent));
    return [Number(rows[0].dataset.rw), Number(rows[0].querySelector('.count').textContent)];
  }}""")
  page.click(f".rw-row[data-rw='{rw}']")
  page.wait_for_selector(STEP.format(rw=rw, k=0))
  return rw, n

def click_node(page, node_id):
  x, y = page.evaluate(f"() => window.tinyviz.rewrites.canvas.screenPos({node_id})")
  box = page.locator("#graph-canvas").bounding_box()
  page.mouse.click(box["x"] + x, box["y"] + y)

def test_pick_kernel_step_code_and_reload(page, artifacts):
  page.wait_for_selector("#run-list li[data-run]")
  rw, n = open_kernel(page)
  assert n >= 3, f"the kernel's busiest rewrite has only {n} matches"
  assert page.inner_text("#step-label") == f"step 0 / {n}"
  assert "Input graph" in page.inner_text("#match-panel")
  page.keyboard.press("ArrowRight")
  page.wait_for_selector(STEP.format(rw=rw, k=1))
  # nodes that a step leaves alone (or only rebuilds with new sources) keep their places. Measured on the step
  # 1 -> 2, where the graph keeps its layers; a step that adds a layer still moves many nodes (layout.js).
  where = """() => { const v = window.tinyviz.rewrites, c = v.canvas;
    return Object.fromEntries(v.data.view.nodes.map((u) => [u.was ?? u.id, c.screenPos(u.id)]).filter(([, p]) => p)); }"""
  before = page.evaluate(where)
  page.keyboard.press("ArrowRight")
  page.wait_for_selector(STEP.format(rw=rw, k=2))
  after = page.evaluate(where)
  kept = [i for i in before if i in after]
  # the view may pan to show the new match: compare relative to the common shift
  dx = sorted(after[i][0] - before[i][0] for i in kept)[len(kept) // 2]
  dy = sorted(after[i][1] - before[i][1] for i in kept)[len(kept) // 2]
  moved = [i for i in kept if abs(after[i][0] - before[i][0] - dx) > 1 or abs(after[i][1] - before[i][1] - dy) > 1]
  assert len(kept) > 10 and len(moved) <= len(kept) // 10, f"{len(moved)} of {len(kept)} kept nodes moved"
  page.keyboard.press("ArrowRight")
  page.wait_for_selector(STEP.format(rw=rw, k=3))
  assert page.inner_text("#step-label") == f"step 3 / {n}"
  panel = page.inner_text("#match-panel")
  assert f"Match 3 of {n}" in panel
  loc = page.inner_text("#match-panel .loc")
  assert re.fullmatch(r"[\w.]+\.py:\d+", loc), loc
  assert page.get_attribute("#match-panel .loc", "title").endswith(loc.split(":")[0] + ":" + loc.split(":")[1])
  assert "before" in panel and "after" in panel
  # and how long the match's rewrite took, as tinygrad's VIZ shows it
  assert re.fullmatch(r"\d+(\.\d)? (ns|µs|ms|s)", page.inner_text("#match-panel .match-time")), page.inner_text("#match-panel h3")
  # on to the first step that both adds and removes nodes (one that replaces a node by one already in the graph
  # only removes)
  states, k = lambda: page.evaluate("() => window.tinyviz.rewrites.data.union.map((u) => u.state)"), 3
  while not {"added", "removed"} <= set(states()) and k < n:
    k += 1
    page.keyboard.press("ArrowRight")
    page.wait_for_selector(STEP.format(rw=rw, k=k))
  assert {"added", "removed"} <= set(states()), f"no step of {n} both adds and removes nodes"
  page.wait_for_timeout(100)
  assert page.evaluate(COUNT_COLOUR, GREEN) > 50, "no added node drawn"
  assert page.evaluate(COUNT_COLOUR, RED) > 50, "no removed node drawn"
  page.screenshot(path=str(artifacts / "rewrites.png"))

  # the code view: the kernel's source and uops; a click on a node marks the code line it produced
  page.click("#code-btn")
  page.wait_for_selector("#code-pane .code-line")
  assert "code=1" in page.url
  assert page.locator("#code-pane .uop-line").count() > 3
  assert page.locator("#code-pane .kname .kn-axis").count() >= 1
  # exact links (the kernel's line_uops): a node of the final graph marks exactly the lines that render it
  # (on the kernel's last rewrite, at its last step: the graph the program was made from)
  rw, n = page.evaluate("""() => { const ctx = document.querySelector('.rw-row.sel').dataset.ctx;
    const r = [...document.querySelectorAll(`.rw-row[data-ctx='${ctx}']`)].at(-1);
    return [Number(r.dataset.rw), Number(r.querySelector('.count').textContent)]; }""")
  page.click(f".rw-row[data-rw='{rw}']")
  page.wait_for_selector(STEP.format(rw=rw, k=0))
  page.keyboard.press("End")
  k = n
  page.wait_for_selector(STEP.format(rw=rw, k=k))
  node = page.evaluate("""() => {
    const v = window.tinyviz.rewrites, drawn = new Set(v.data.view.nodes.map((u) => u.id)), ex = v.code.exact;
    if (!ex) return null;
    const ok = [...ex.nodeLines.keys()].filter((id) => drawn.has(id) && ['ADD', 'MUL', 'LOAD', 'STORE'].includes(v.data.index.byId.get(id)?.op));
    if (!ok.length) return null;
    v.canvas.centerOn(ok[0]);  // in the middle of the graph pane: nothing else under the click
    return ok[0];
  }""")
  assert node is not None, "no drawn ALU/LOAD/STORE node has exact code lines"
  page.wait_for_timeout(300)
  click_node(page, node)
  page.wait_for_selector("#code-pane .code-line.hl")
  assert f"node={node}" in page.url
  assert f"#{node}" in page.inner_text("#node-panel")
  marked = page.evaluate("() => [...document.querySelectorAll('#code-pane .code-line.hl')].map((e) => Number(e.dataset.line))")
  want = page.evaluate(f"() => window.tinyviz.rewrites.code.kernel.line_uops.flatMap((ids, i) => ids.includes({node}) ? [i] : [])")
  assert marked == want and marked, (marked, want)
  # and a code line selects its node: the line's own uop
  line = page.evaluate("""() => { const v = window.tinyviz.rewrites, drawn = new Set(v.data.view.nodes.map((u) => u.id));
    return v.code.kernel.line_uops.findIndex((ids) => ids.length && drawn.has(ids[0]) && ids[0] !== %d); }""" % node)
  assert line >= 0
  own = page.evaluate(f"() => window.tinyviz.rewrites.code.kernel.line_uops[{line}][0]")
  page.click(f"#code-pane .code-line[data-line='{line}']")
  page.wait_for_function(f"location.hash.includes('node={own}')")
  assert page.locator(f"#code-pane .code-line[data-line='{line}']").get_attribute("class").split().count("hl") == 1
  page.screenshot(path=str(artifacts / "code.png"))

  # the URL opens the same run, rewrite, step, selection and code pane
  url = page.url
  page.reload()
  page.wait_for_selector(STEP.format(rw=rw, k=k))
  assert page.url == url
  assert page.inner_text("#step-label") == f"step {k} / {n}"
  page.wait_for_selector("#code-pane .code-line.hl")
  assert f"#{node}" in page.inner_text("#node-panel")
  assert page.locator(".rw-row.sel").get_attribute("data-rw") == str(rw)
  page.screenshot(path=str(artifacts / "reload.png"))

def test_slider_search_details_and_hubs(page, artifacts):
  rw, n = open_kernel(page)
  page.click("#step-last")
  page.wait_for_selector(STEP.format(rw=rw, k=n))
  page.keyboard.press("Home")
  page.wait_for_selector(STEP.format(rw=rw, k=0))
  page.fill("#node-search", "op:STORE")
  page.keyboard.press("Enter")
  page.wait_for_function("() => window.tinyviz.state.params.node !== undefined")
  assert "STORE" in page.inner_text("#node-panel h3")
  assert re.match(r"1/\d+", page.inner_text("#search-count"))
  assert "q=op:STORE" in page.url
  # a source link in the details selects that node
  src = page.locator("#node-panel td a[data-node]").first
  sid = src.get_attribute("data-node")
  src.click()
  page.wait_for_function(f"() => window.tinyviz.state.params.node === {sid}")
  page.screenshot(path=str(artifacts / "search.png"))
  # hub modes: as nodes there are more nodes to lay out than inline
  inline = page.evaluate("() => window.tinyviz.rewrites.data.view.nodes.length")
  page.select_option("#hub-mode", "shown")
  page.wait_for_function(f"() => window.tinyviz.rewrites.data.view.nodes.length > {inline}")
  shown = page.evaluate("() => window.tinyviz.rewrites.data.view.nodes.length")
  assert "hubs=shown" in page.url
  page.screenshot(path=str(artifacts / "hubs_shown.png"))
  page.evaluate("() => document.activeElement.blur()")
  page.keyboard.press("h")  # shown -> inline (the selected node stays drawn as a node)
  page.wait_for_function(f"() => window.tinyviz.rewrites.data.view.nodes.length < {shown}")
  assert "hubs=" not in page.url

def test_kernel_name_legend_and_live_socket(page):
  page.wait_for_selector(".ctx-row .kname .kn-axis")
  page.wait_for_function("() => document.getElementById('conn').dataset.status === 'open'")
  page.hover(".ctx-row .kname")
  tip = page.locator("#tooltip")
  tip.wait_for(state="visible")
  text = tip.inner_text()
  for word in ("global", "reduce", "upcast", "local"): assert word in text
  colours = page.evaluate("() => [...document.querySelectorAll('.ctx-row .kname .kn-axis')].map((e) => e.dataset.kind)")
  assert "global" in colours

def test_timeline_tab_mounts(page, artifacts):
  page.wait_for_selector("#run-list li[data-run]")
  page.click("#tabs [data-view=timeline]")
  page.wait_for_function("() => window.tinyviz.state.view === 'timeline' && document.getElementById('view-timeline').children.length > 0")
  page.wait_for_timeout(1000)
  assert "not available" not in page.inner_text("#view-timeline")
  assert page.locator("#view-rewrites").is_hidden()
  page.screenshot(path=str(artifacts / "timeline.png"))
  # a kernel in the timeline opens its codegen rewrites with the code shown
  link = page.locator("#view-timeline button.tl-link", has_text=re.compile(r"^rewrites$")).first
  if link.count():
    link.click()
    page.wait_for_selector("#code-pane .code-line")
    assert page.evaluate("() => window.tinyviz.state.view") == "rewrites"
    assert page.locator(".ctx-row.sel-ctx .badge.kind-kernel").count() == 1
  page.click("#tabs [data-view=timeline]")
  page.wait_for_selector("#view-timeline", state="visible")
  page.go_back()
  page.wait_for_selector("#view-rewrites", state="visible")
