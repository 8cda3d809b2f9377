"""The rewrite explorer on a training step's trace (schedule_script.py under VIZ=-1), in Chromium at 1280x720 and
1920x1080: the page opens on the newest schedule, a schedule shows one box per kernel in run order and opens one into
its UOps in place, a box links to its kernel's codegen, the match's file:line opens the captured pattern table, and
search finds what hubs draw inline. Screenshots go to tests/ui/artifacts/ and /tmp/shots/explorerA/."""
from __future__ import annotations
import os, re, subprocess, sys
from pathlib import Path
import httpx
import pytest
from conftest import HERE, ROOT, ServerUnavailable, run_server

SHOTS = Path(os.environ.get("TINYVIZ_SHOTS", "/tmp/shots/explorerA"))
SIZES = [(1280, 720), (1920, 1080)]

@pytest.fixture(scope="module")
def sched_server(tmp_path_factory):
  out = tmp_path_factory.mktemp("schedui") / "schedule_script.tinyviz.jsonl"
  env = {**os.environ, "VIZ": "-1", "TINYVIZ_TRACE": str(out), "PYTHONPATH": str(ROOT)}
  env.pop("DEBUG", None)
  proc = subprocess.run([sys.executable, str(HERE / "schedule_script.py")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
  if proc.returncode != 0: pytest.fail(f"VIZ=-1 run of schedule_script.py failed:\n{proc.stdout}\n{proc.stderr}")
  try:
    with run_server([out], out.parent / "server.log") as srv:
      srv["http"] = httpx.Client(base_url=srv["base"], headers={"X-Tinyviz-Token": srv["token"] or ""}, trust_env=False, timeout=60)
      yield srv
  except ServerUnavailable as e: pytest.fail(str(e), pytrace=False)

@pytest.fixture(params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def spage(request, browser, sched_server, artifacts):
  w, h = request.param
  ctx = browser.new_context(viewport={"width": w, "height": h})
  pg = ctx.new_page()
  pg.set_default_timeout(90_000)  # a loaded shared machine: waits are for events, never timed assertions
  errors: list[str] = []
  pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))
  pg.on("console", lambda m: errors.append(f"console.error: {m.text}") if m.type == "error" else None)
  pg.size = f"{w}x{h}"  # type: ignore[attr-defined]
  def shot(name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for d in (SHOTS, artifacts): pg.screenshot(path=str(d / f"{name}_{w}x{h}.png"))
  pg.shot = shot  # type: ignore[attr-defined]
  yield pg
  ctx.close()
  bad = [e for e in errors if "Failed to load resource" not in e]
  assert not bad, "\n".join(bad)

def contexts(srv) -> list[dict]: return srv["http"].get("/api/runs/1/contexts").json()["contexts"]
def base(srv) -> str: return srv["url"].split("#")[0]
def shown(pg) -> str: return pg.evaluate("() => document.getElementById('view-rewrites').dataset.step || ''")

def test_opens_on_the_newest_schedule(spage, sched_server):
  newest = [c for c in contexts(sched_server) if c["kind"] == "schedule" and c["n_items"]][-1]
  spage.goto(sched_server["url"])
  spage.wait_for_function(f"() => document.getElementById('view-rewrites').dataset.step === 's{newest['id']}'")
  assert f"ctx={newest['id']}" in spage.url
  # named by the script's line, with the shapes as detail; the sidebar has it selected, on its kernels
  assert newest["name"].startswith("train_step · schedule_script.py:")
  assert newest["name"] in spage.inner_text("#rw-title")
  spage.wait_for_selector(".ctx-row.sel-ctx .badge.kind-schedule")
  assert spage.locator(".kernels-row.sel").count() == 1
  assert "Pick a context" not in spage.inner_text("#view-rewrites")
  spage.shot("open_newest_schedule")

def test_opens_on_the_kernel_the_url_names(spage, sched_server):
  srv = sched_server
  k = max(srv["http"].get("/api/runs/1/contexts").json()["kernels"], key=lambda k: k["flops"])
  spage.goto(base(srv) + f"#/rewrites?run=1&kernel={k['id']}")
  spage.wait_for_function(f"() => new URLSearchParams(location.hash.split('?')[1]).get('ctx') === '{k['ctx']}'")
  spage.wait_for_selector("#code-pane .code-line")  # its code is shown
  assert k["name"] in spage.inner_text(".ctx-row.sel-ctx")
  spage.shot("open_named_kernel")

def test_schedule_is_one_box_per_kernel_and_one_opens(spage, sched_server):
  srv = sched_server
  step = max((c for c in contexts(srv) if c["name"].startswith("train_step")), key=lambda c: c["n_items"])
  sched = srv["http"].get(f"/api/runs/1/contexts/{step['id']}/schedule").json()
  spage.goto(base(srv) + f"#/rewrites?run=1&ctx={step['id']}")
  spage.wait_for_function(f"() => document.getElementById('view-rewrites').dataset.step === 's{step['id']}'")
  boxes = spage.evaluate("() => window.tinyviz.rewrites.data.view.nodes.filter((u) => u.box).map((u) => [u.id, u.box.i, u.lines[0]])")
  want = [(it["ast"], it["i"], sched["kernels"][str(it["kernel"])]["name"] if it["kernel"] is not None else "copy") for it in sched["items"]]
  assert sorted(map(tuple, boxes), key=lambda b: b[1]) == want  # one box per kernel and copy, numbered in run order
  assert len([b for b in want if b[2] != "copy"]) >= 8, "a training step: forward, backward and SGD kernels"
  # the buffers between them are drawn, with dtype and size
  bufs = spage.evaluate("() => window.tinyviz.rewrites.data.view.nodes.filter((u) => u.buffer).map((u) => u.lines[0])")
  assert bufs and all(re.fullmatch(r"(float|int|bool|half|long)\[\d+\] · [\d.]+ [KMG]?B", b) for b in bufs), bufs
  spage.shot("schedule_kernels")

  # open the biggest kernel box in place: double-click it on the canvas
  kid = max((it for it in sched["items"] if it["kind"] == "kernel"), key=lambda it: sched["kernels"][str(it["kernel"])]["flops"])
  box = kid["ast"]
  xy = spage.evaluate(f"""() => {{
    const v = window.tinyviz.rewrites, c = v.canvas; c.centerOn({box}, 1, true);
    const i = c.index.get({box}), r = c.canvas.getBoundingClientRect();
    return [r.left + (c.r.x[i] - c.cam.x) * c.cam.k, r.top + (c.r.y[i] - c.cam.y) * c.cam.k];
  }}""")
  spage.mouse.dblclick(*xy)
  spage.wait_for_function(f"() => new URLSearchParams(location.hash.split('?')[1]).get('open') === '{box}'")
  spage.wait_for_function(f"() => window.tinyviz.rewrites.data.view.nodes.some((u) => u.kernelOf === {box})")
  nodes = spage.evaluate("() => window.tinyviz.rewrites.data.view.nodes.map((u) => ({id: u.id, op: u.op, box: !!u.box, of: u.kernelOf ?? null}))")
  inside = [n for n in nodes if n["of"] == box]
  assert any(n["op"] == "STORE" for n in inside) and any(n["op"] == "REDUCE_AXIS" for n in inside), inside
  assert len([n for n in nodes if n["box"]]) == len(want), "the other kernels stay boxes; the opened one keeps its header"
  spage.shot("schedule_kernel_opened")

  # the box's panel links to its codegen context
  spage.evaluate(f"() => window.tinyviz.rewrites.select({box})")
  spage.click("[data-kctx]")
  kctx = sched["kernels"][str(kid["kernel"])]["ctx"]
  spage.wait_for_function(f"() => new URLSearchParams(location.hash.split('?')[1]).get('ctx') === '{kctx}'")
  spage.wait_for_selector(".ctx-row.sel-ctx .badge.kind-kernel")

def test_file_line_opens_the_pattern_table(spage, sched_server):
  srv = sched_server
  rw = max((r for c in contexts(srv) if c["kind"] == "kernel" for r in c["rewrites"]), key=lambda r: r["n_matches"])
  spage.goto(base(srv) + f"#/rewrites?run=1&rw={rw['id']}&step=1")
  spage.wait_for_function(f"() => document.getElementById('view-rewrites').dataset.step === '{rw['id']}:1'")
  link = spage.locator("#match-panel a.loc[data-pattern-file]")
  file, line = link.get_attribute("data-pattern-file"), int(link.get_attribute("data-pattern-line"))
  link.click()
  hit = spage.locator("#match-panel .pattern-table .pt-line.hit").first
  hit.wait_for()
  assert int(hit.get_attribute("data-line")) == line
  table = srv["http"].get("/api/runs/1/patterns", params={"file": file}).json()["patterns"]
  lines = spage.evaluate("() => [...document.querySelectorAll('#match-panel .pattern-table .pt-line[data-line]')].map((e) => Number(e.dataset.line))")
  assert lines == sorted(lines) and {p["line"] for p in table} <= set(lines)  # every captured pattern of the file, in line order
  assert spage.evaluate("() => { const t = document.querySelector('#match-panel .pattern-table'), h = t.querySelector('.pt-line.hit').getBoundingClientRect(), b = t.getBoundingClientRect(); return h.top >= b.top && h.bottom <= b.bottom; }"), "the pattern is scrolled into view"
  spage.shot("pattern_table")
  link.click()  # the same link folds it again
  spage.wait_for_selector("#match-panel .pattern-table", state="hidden")

def test_search_finds_labels_drawn_inline(spage, sched_server):
  srv = sched_server
  # a kernel's codegen rewrite whose graph holds buffers (DEFINE_GLOBAL: drawn inline in their users' labels as dataN)
  ctx = next(c for c in contexts(srv) if c["kind"] == "kernel" and c["name"].startswith("r_"))
  rw = ctx["rewrites"][-1]
  spage.goto(base(srv) + f"#/rewrites?run=1&rw={rw['id']}&step={rw['n_matches']}")
  spage.wait_for_function(f"() => document.getElementById('view-rewrites').dataset.step === '{rw['id']}:{rw['n_matches']}'")
  inline = spage.evaluate("() => window.tinyviz.rewrites.data.view.nodes.flatMap((u) => u.lines).find((l) => /data\\d/.test(l))")
  assert inline, "the kernel's buffers are drawn inline"
  name = next(w for w in inline.replace(",", " ").split() if w.startswith("data"))
  spage.fill("#node-search", name)
  spage.wait_for_function("() => document.getElementById('search-count').textContent && document.getElementById('search-count').textContent !== 'none'")
  hits = spage.evaluate("() => window.tinyviz.rewrites.hits")
  labels = spage.evaluate("(hits) => hits.map((id) => window.tinyviz.rewrites.data.view.nodes.find((u) => u.id === id)?.lines.join(' ') ?? 'hub')", hits)
  assert any(name in l for l in labels), labels
