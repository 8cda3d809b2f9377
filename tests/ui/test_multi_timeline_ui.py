"""A multi-device run's timeline in Debian's Chromium against the real server: a sharded training step on CPU and
CPU:1 (recorded under VIZ=-1) shows a track per device, a copy track per receiving device, and flow arrows drawn
from the kernels that made the copied data to the copies."""
from __future__ import annotations
import os, subprocess, sys
from pathlib import Path
import pytest
from conftest import run_server, ServerUnavailable

ROOT = Path(__file__).resolve().parents[2]
SHARDED_STEP = """
import numpy as np
from tinygrad import Tensor, nn
GPUS = ("CPU", "CPU:1")
Tensor.manual_seed(0)
lin1, lin2 = nn.Linear(16, 32), nn.Linear(32, 4)
for p in nn.state.get_parameters([lin1, lin2]): p.to_(GPUS)
opt = nn.optim.SGD(nn.state.get_parameters([lin1, lin2]), lr=0.1)
x = Tensor(np.random.default_rng(0).standard_normal((64, 16), dtype=np.float32)).shard(GPUS, axis=0)
y = Tensor(np.arange(64, dtype=np.int32) % 4).shard(GPUS, axis=0)
for _ in range(3):
  with Tensor.train():
    opt.zero_grad()
    loss = lin2(lin1(x).relu()).sparse_categorical_crossentropy(y).backward()
    opt.step()
print(loss.item())
"""
TL = "document.getElementById('view-timeline').timeline"

@pytest.fixture(scope="module")
def multi_server(tmp_path_factory):
  d = tmp_path_factory.mktemp("multi_timeline")
  trace = d / "sharded.tinyviz.jsonl"
  env = {**os.environ, "VIZ": "-1", "TINYVIZ_TRACE": str(trace), "PYTHONPATH": str(ROOT), "DEV": "CPU"}
  env.pop("DEBUG", None)
  proc = subprocess.run([sys.executable, "-c", SHARDED_STEP], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
  assert proc.returncode == 0 and trace.exists(), proc.stderr
  try:
    with run_server([trace], d / "server.log") as srv: yield srv
  except ServerUnavailable as e: pytest.fail(str(e), pytrace=False)

def test_sharded_step_draws_device_tracks_copy_tracks_and_flows(page, multi_server, artifacts):
  pg = page
  pg.goto(multi_server["url"])
  pg.goto(f"{multi_server['base']}/#/timeline?run=1")
  pg.wait_for_selector("#view-timeline[data-state=ready]", timeout=15000)
  names = pg.evaluate(f"{TL}.debug.model.tracks.map(t => t.name)")
  assert {"CPU", "CPU:1", "CPU/copy", "CPU:1/copy"} <= set(names), names
  pg.wait_for_function(f"{TL}.debug.model.flows.length > 0", timeout=15000)
  arrows = pg.evaluate(f"{TL}.debug.model.flows.map(a => a.pts.map(p => {TL}.debug.model.byId.get(p.track).name))")
  assert ["CPU", "CPU:1/copy"] in arrows and ["CPU:1", "CPU/copy"] in arrows, arrows[:8]
  pg.keyboard.press("f")  # fit: the whole run in view
  pg.wait_for_timeout(200)
  assert pg.evaluate(f"{TL}.debug.stats.draws.at(-1).flows") == 0, "flows are drawn for the selected span only"
  pg.locator("#view-timeline .tl-allflows").check()  # or all of them, on the toggle
  pg.wait_for_function(f"({TL}.debug.stats.draws.at(-1) || {{}}).flows > 0", timeout=15000)
  assert pg.evaluate(f"{TL}.debug.stats.draws.at(-1).rects") > 0
  pg.locator("#view-timeline").screenshot(path=str(artifacts / "multi_timeline.png"))
