"""tinygrad scripts run unchanged: tests/scripts/mnist_tinygrad_style.py is written the way tinygrad's MNIST
quickstart is (nn.datasets.mnist, @TinyJit @Tensor.train() step, @Tensor.test() evaluation, Tensor.randint batches
indexed out of the dataset, trange/colored from tinygrad.helpers). It runs as a user would run it, on real
handwritten digits (scikit-learn's, scaled to MNIST's 28x28 and written as MNIST's IDX files into MNIST_DIR), and
again under VIZ=-1, whose trace must hold its kernels and rewrites."""
import json, os, pathlib, subprocess, sys
import numpy as np, pytest
from tinygrad.terminal import ansistrip
from digits_mnist import write_digits_as_mnist

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "scripts" / "mnist_tinygrad_style.py"

@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory) -> pathlib.Path:
  return write_digits_as_mnist(tmp_path_factory.mktemp("mnist"))

def run(mnist_dir: pathlib.Path, **env) -> subprocess.CompletedProcess:
  e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG")}
  return subprocess.run([sys.executable, str(SCRIPT)], env={**e, "MNIST_DIR": str(mnist_dir), "STEPS": "40", **env},
                        capture_output=True, text=True, timeout=600, cwd=ROOT)

def accuracy(res: subprocess.CompletedProcess) -> float:
  assert res.returncode == 0, res.stderr[-3000:]
  line = ansistrip(res.stdout.strip().splitlines()[-1])
  assert line.startswith("test accuracy "), res.stdout
  return float(line.split()[-1].rstrip("%"))

def test_the_tinygrad_style_script_trains(mnist_dir):
  res = run(mnist_dir)
  assert accuracy(res) >= 90
  # trange drew its bar on stderr, with the description the script set
  assert "40/40" in res.stderr and "test_accuracy:" in res.stderr

def test_the_same_script_under_viz_records_its_kernels_and_rewrites(mnist_dir, tmp_path):
  trace = tmp_path / "mnist.tinyviz.jsonl"
  res = run(mnist_dir, VIZ="-1", TINYVIZ_TRACE=str(trace))
  assert accuracy(res) >= 90
  events = [json.loads(line) for line in trace.read_text().splitlines()[1:]]
  kinds = {e["type"] for e in events}
  assert {"kernel", "rewrite", "span", "context_begin"} <= kinds, kinds
  kernels = {e["name"] for e in events if e["type"] == "kernel"}
  # the jitted step's replays: each replayed kernel is a span on the CPU track, 38 replays of the train step
  spans = [e for e in events if e["type"] == "span" and e.get("cat") == "kernel"]
  assert len(spans) > 38 * 10 and {s["name"] for s in spans} <= kernels

def test_mnist_without_data_or_network_names_the_fix(tmp_path):
  code = "from tinygrad.nn.datasets import mnist; mnist()"
  env = {k: v for k, v in os.environ.items() if k != "MNIST_DIR"}
  res = subprocess.run([sys.executable, "-c", code], env={**env, "MNIST_DIR": str(tmp_path)}, capture_output=True, text=True, timeout=60)
  assert res.returncode != 0 and f"MNIST_DIR={tmp_path} has no train-images-idx3-ubyte" in res.stderr

def test_mnist_reads_idx_files_as_uint8_tensors(mnist_dir, tmp_path, monkeypatch):
  import gzip
  from tinygrad import dtypes
  from tinygrad.nn.datasets import mnist, read_idx
  monkeypatch.setenv("MNIST_DIR", str(mnist_dir))
  X_train, Y_train, X_test, Y_test = mnist()
  assert X_train.shape == (1500, 1, 28, 28) and Y_train.shape == (1500,) and X_test.shape == (297, 1, 28, 28)
  assert X_train.dtype == dtypes.uint8 and Y_test.dtype == dtypes.uint8 and set(Y_train.tolist()) == set(range(10))
  raw = (mnist_dir / "t10k-labels-idx1-ubyte").read_bytes()
  np.testing.assert_array_equal(read_idx(gzip.compress(raw)), Y_test.numpy())  # gzipped files read the same
  with pytest.raises(ValueError, match="not an IDX file"): read_idx(b"PK\x03\x04 a zip")
  with pytest.raises(ValueError, match="header says"): read_idx(raw[:-3], "labels")

def test_context_takes_tinygrads_settings_and_names_unknown_ones():
  from tinygrad import Tensor
  from tinygrad.helpers import Context, DEBUG
  with Context(BEAM=2, DEBUG=0):  # a tinygrad script's kernel search setting: accepted, the plans are searched anyway
    np.testing.assert_allclose((Tensor([1.0, 2.0]) * 2).numpy(), [2.0, 4.0])
    assert DEBUG == 0
  with pytest.raises(KeyError, match="unknown setting BEEM; known: .*BEAM"):
    with Context(BEEM=2): pass

def test_from_url_downloads_once_and_reads_files_as_bytes(tmp_path, monkeypatch):
  """Tensor.from_url (how tinygrad's datasets load): the file comes from a real HTTP server on loopback, is cached, and a
  second call needs no server; Tensor(pathlib.Path) is a file's bytes."""
  import gzip, http.server, threading
  from tinygrad import Tensor
  monkeypatch.setenv("TINYVIZ_CACHE", str(tmp_path / "cache"))
  (tmp_path / "www").mkdir()
  payload = bytes(range(256)) * 3
  (tmp_path / "www" / "data.gz").write_bytes(gzip.compress(payload))
  handler = lambda *a, **kw: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path / "www"), **kw)  # noqa: E731
  srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
  th = threading.Thread(target=srv.serve_forever, daemon=True)
  th.start()
  url = f"http://127.0.0.1:{srv.server_address[1]}/data.gz"
  try: t = Tensor.from_url(url, gunzip=True)
  finally: srv.shutdown(); srv.server_close(); th.join()
  assert t.shape == (768,) and t.numpy().tobytes() == payload
  assert Tensor.from_url(url, gunzip=True).numpy().tobytes() == payload  # the server is gone: from the cache
  (tmp_path / "f.bin").write_bytes(b"\x01\x02\x03")
  assert Tensor(tmp_path / "f.bin").tolist() == [1, 2, 3]

def test_a_tinygrad_style_transformer_trains():
  """Embedding, causal attention, LayerNorm, gelu and AdamW under TinyJit: the loss of a counting task falls from
  ~log(16) to a small fraction of it in 40 steps."""
  e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG")}
  res = subprocess.run([sys.executable, str(ROOT / "tests" / "scripts" / "gpt_tinygrad_style.py")], env={**e, "STEPS": "40"},
                       capture_output=True, text=True, timeout=600, cwd=ROOT)
  assert res.returncode == 0, res.stderr[-3000:]
  losses = [float(line.split()[1]) for line in res.stdout.splitlines() if line[:1].isdigit()]
  final = float(res.stdout.split("final loss")[1].split()[0])
  assert losses[0] > 2.0 and final < 0.5 and final < losses[0] / 4, res.stdout
