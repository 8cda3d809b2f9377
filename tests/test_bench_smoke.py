"""Every benchmark still runs (bench/smoke.py, each at its smallest size): exit 0 and its figure printed. Speed is
never asserted here; the figures themselves are read in docs/performance.md."""
import sys
from pathlib import Path
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from smoke import SMOKE, run  # noqa: E402

@pytest.mark.parametrize("name,cmd,want", SMOKE, ids=[s[0] for s in SMOKE])
def test_benchmark_runs(name, cmd, want):
  ok, msg = run(name, cmd, want)
  assert ok, f"{name}: {msg}"
