"""Data-parallel training on two CPU devices, as a user runs it: tests/scripts/mnist_multigpu_style.py (tinygrad's
multi-GPU MNIST idioms) on scikit-learn's digits written as MNIST files, and again under VIZ=-1, whose trace must
show the two devices' kernels running side by side, the copies between them on copy queues, and an arrow from the
kernel that made each copied value to the copy."""
import os, pathlib, subprocess, sys
import pytest
from tinygrad.terminal import ansistrip
from profiler.events import Span, Flow
from profiler.tracefile import read_jsonl
from digits_mnist import write_digits_as_mnist

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "scripts" / "mnist_multigpu_style.py"

@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory) -> pathlib.Path:
  """Digits scaled to 28x28, 1500 to train on and 296 (an even number: the script shards it over 2) to test on."""
  return write_digits_as_mnist(tmp_path_factory.mktemp("mnist"), total=1796)

def run(mnist_dir: pathlib.Path, **env) -> subprocess.CompletedProcess:
  e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG", "DEV")}
  return subprocess.run([sys.executable, str(SCRIPT)], env={**e, "MNIST_DIR": str(mnist_dir), "DEV": "CPU", **env},
                        capture_output=True, text=True, timeout=900, cwd=ROOT)

def accuracy(res: subprocess.CompletedProcess) -> float:
  assert res.returncode == 0, res.stderr[-3000:]
  lines = [ansistrip(x) for x in res.stdout.strip().splitlines()]
  assert lines[-2] == "devices CPU,CPU:1", res.stdout  # the loss came back as a tensor on both devices
  assert lines[-1].startswith("test accuracy "), res.stdout
  return float(lines[-1].split()[-1].rstrip("%"))

def test_the_multigpu_style_script_trains_on_two_devices(mnist_dir):
  res = run(mnist_dir, STEPS="50")
  assert accuracy(res) >= 95
  assert "50/50" in res.stderr and "test_accuracy:" in res.stderr

def _overlap(a: list[Span], b: list[Span]) -> int:
  """How many spans of a overlap some span of b in time."""
  b = sorted(b, key=lambda s: s.start_ns)
  starts = [s.start_ns for s in b]
  import bisect
  n = 0
  for s in a:
    i = bisect.bisect_left(starts, s.end_ns)  # spans of b that start before s ends
    if any(t.end_ns > s.start_ns for t in b[max(0, i - 64):i]): n += 1
  return n

def test_under_viz_the_timeline_shows_devices_side_by_side_with_copies_and_flows(mnist_dir, tmp_path):
  trace = tmp_path / "multi.tinyviz.jsonl"
  res = run(mnist_dir, STEPS="12", TARGET="0", VIZ="-1", TINYVIZ_TRACE=str(trace))
  assert res.returncode == 0, res.stderr[-3000:]
  events = read_jsonl(trace.read_bytes()).events
  spans = [e for e in events if isinstance(e, Span)]
  kernels = {d: [s for s in spans if s.cat == "kernel" and s.track == d] for d in ("CPU", "CPU:1")}
  assert all(len(k) > 100 for k in kernels.values()), {d: len(k) for d, k in kernels.items()}
  # the devices worked at the same time: many kernels on CPU:1 ran while one ran on CPU
  assert _overlap(kernels["CPU:1"], kernels["CPU"]) > 20
  copies = [s for s in spans if s.cat == "copy"]
  tracks = {s.track for s in copies}
  assert {"CPU/copy", "CPU:1/copy"} <= tracks, tracks  # the all-reduce's copies, each on its receiving device's copy queue
  # every flow is a pair: its start inside a span that wrote the data, its finish at the start of a copy
  flows: dict[str, dict[str, Flow]] = {}
  for f in (e for e in events if isinstance(e, Flow)): flows.setdefault(f.id, {})[f.phase] = f
  assert len(flows) > 20
  copy_starts = {(s.track, s.start_ns) for s in copies}
  by_track: dict[str, list[Span]] = {}
  for s in spans: by_track.setdefault(s.track, []).append(s)
  for pair in flows.values():
    assert set(pair) == {"s", "f"}
    assert (pair["f"].track, pair["f"].ts_ns) in copy_starts
    s = pair["s"]
    assert any(p.start_ns <= s.ts_ns <= p.end_ns for p in by_track[s.track]), s
    assert s.ts_ns <= pair["f"].ts_ns
  # arrows go both ways between the devices (each device gets the other's partial sums)
  assert {("CPU", "CPU:1/copy"), ("CPU:1", "CPU/copy")} <= {(p["s"].track, p["f"].track) for p in flows.values()}
