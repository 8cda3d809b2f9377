"""Runs the frontend's pure-module tests (tests/js, `node --test`) as part of pytest."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_node_tests_pass():
  node = shutil.which("node")
  if node is None: pytest.skip("node is not installed: the tests/js suites (node --test) were not run")
  proc = subprocess.run([node, "--test", "tests/js/"], cwd=ROOT, capture_output=True, text=True, timeout=600)
  if proc.returncode != 0: pytest.fail(f"node --test tests/js/ failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}", pytrace=False)
