"""Runs the frontend's pure-module tests (tests/js, `node --test`) as part of pytest: each file its own case, so a
failure names its file. Node is required (CI's image has it): a missing node fails, it does not skip."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(p.name for p in (ROOT / "tests" / "js").glob("*.test.mjs"))

def test_there_are_node_tests():
  assert len(FILES) >= 10, FILES

@pytest.mark.parametrize("name", FILES)
def test_node_file(name):
  node = shutil.which("node")
  if node is None: pytest.fail("node is not installed: the tests/js suites (node --test) cannot run", pytrace=False)
  proc = subprocess.run([node, "--test", f"tests/js/{name}"], cwd=ROOT, capture_output=True, text=True, timeout=600)
  if proc.returncode != 0: pytest.fail(f"node --test tests/js/{name} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}", pytrace=False)
