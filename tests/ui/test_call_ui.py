"""A @function call in the rewrite explorer (Chromium, the real server, a real VIZ=-1 trace of call_script.py): the
call is one node of its caller's graph; double-clicking it, or its details' button, opens the context its body was
traced in, where the body's graph (its PARAMs) is drawn."""
from __future__ import annotations
import os, subprocess, sys
import pytest
from conftest import HERE, ROOT, run_server, ServerUnavailable

@pytest.fixture(scope="module")
def call_server(tmp_path_factory):
  out = tmp_path_factory.mktemp("ui_call") / "call_script.tinyviz.jsonl"
  env = {**os.environ, "VIZ": "-1", "TINYVIZ_TRACE": str(out), "PYTHONPATH": str(ROOT)}
  env.pop("DEBUG", None)
  proc = subprocess.run([sys.executable, str(HERE / "call_script.py")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0 and out.exists(), proc.stderr
  try:
    with run_server([out], out.parent / "server.log") as srv: yield srv
  except ServerUnavailable as e: pytest.fail(str(e), pytrace=False)

@pytest.fixture
def call_page(browser, call_server):
  ctx = browser.new_context(viewport={"width": 1500, "height": 900})
  pg = ctx.new_page()
  errors: list[str] = []
  pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))
  pg.goto(call_server["url"])
  yield pg
  ctx.close()
  assert not errors, "\n".join(errors)

def open_inline_rewrite(page) -> int:
  """The first schedule's "schedule: inline calls" rewrite at step 0 (the graph that holds the CALL node)."""
  page.wait_for_selector(".ctx-row .badge.kind-call")
  page.fill("#ctx-filter", "inline calls")
  page.click(".ctx-row:has(.badge.kind-schedule) .ctx-name")
  row = page.locator(".rw-row", has_text="schedule: inline calls").first
  rw = int(row.get_attribute("data-rw"))
  row.click()
  page.wait_for_selector(f"#view-rewrites[data-step='{rw}:0']")
  return rw

def drawn_ops(page) -> list[str]: return page.evaluate("() => window.tinyviz.rewrites.data.view.nodes.map((u) => u.op)")

def call_node(page) -> int:
  return page.evaluate("() => window.tinyviz.rewrites.data.view.nodes.find((u) => u.op === 'CALL' && !u.arg.endsWith('_backward')).id")

def screen(page, node_id: int) -> tuple[float, float]:
  x, y = page.evaluate(f"() => window.tinyviz.rewrites.canvas.screenPos({node_id})")
  box = page.locator("#graph-canvas").bounding_box()
  return box["x"] + x, box["y"] + y

def test_double_clicking_a_call_node_opens_its_body(call_page, artifacts):
  page = call_page
  open_inline_rewrite(page)
  ops = drawn_ops(page)
  assert "CALL" in ops and "PARAM" not in ops  # the caller's graph shows the call as one node, not its body
  call = call_node(page)
  page.evaluate(f"() => window.tinyviz.rewrites.canvas.centerOn({call}, 0)")
  page.screenshot(path=str(artifacts / "call_in_caller.png"))
  page.mouse.dblclick(*screen(page, call))
  page.wait_for_function("() => window.tinyviz.state.params.ctx !== undefined && window.tinyviz.rewrites.model().contexts.get(window.tinyviz.state.params.ctx)?.kind === 'call'")
  page.wait_for_function("() => window.tinyviz.rewrites.data?.view.nodes.some((u) => u.op === 'PARAM')")
  title = page.inner_text("#rw-title")
  assert "Model.__call__" in title and "inputs to params" in title
  page.fill("#ctx-filter", "")
  page.wait_for_selector(".ctx-row.sel-ctx .badge.kind-call")  # the sidebar shows where we are
  page.screenshot(path=str(artifacts / "call_body.png"))
  page.go_back()  # and back to the caller
  page.wait_for_function("() => window.tinyviz.rewrites.data?.view.nodes.some((u) => u.op === 'CALL')")

def test_a_call_nodes_details_have_a_button_to_its_body(call_page):
  page = call_page
  open_inline_rewrite(page)
  call = call_node(page)
  page.evaluate(f"() => window.tinyviz.rewrites.canvas.centerOn({call}, 0)")
  page.mouse.click(*screen(page, call))
  page.click("#node-panel [data-open-call]")
  page.wait_for_function("() => window.tinyviz.rewrites.data?.view.nodes.some((u) => u.op === 'PARAM')")
  body = page.evaluate("() => window.tinyviz.rewrites.data.cur.root")
  rw = page.evaluate("() => window.tinyviz.rewrites.model().rewrites.get(window.tinyviz.state.params.rw)")
  assert rw["output"] == body  # the graph drawn is the body the call node pointed at
