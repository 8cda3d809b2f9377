"""examples/beautiful_digits.py reads MNIST's IDX files (plain or gzipped) when MNIST_DIR is set."""
import gzip, struct, sys, pathlib
import numpy as np, pytest
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "examples"))
import beautiful_digits

def write_idx(path: pathlib.Path, arr: np.ndarray, gz: bool) -> None:
  raw = struct.pack(">HBB", 0, 0x08, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape) + arr.astype(np.uint8).tobytes()
  path.write_bytes(gzip.compress(raw) if gz else raw)

@pytest.mark.parametrize("gz", [False, True])
def test_mnist_dir_is_read(tmp_path, monkeypatch, gz):
  rng = np.random.default_rng(0)
  imgs, labels = rng.integers(0, 256, (12, 28, 28)), rng.integers(0, 10, 12)
  for stem, arr in (("train-images-idx3-ubyte", imgs), ("train-labels-idx1-ubyte", labels), ("t10k-images-idx3-ubyte", imgs[:5]), ("t10k-labels-idx1-ubyte", labels[:5])):
    write_idx(tmp_path / (stem + (".gz" if gz else "")), arr, gz)
  monkeypatch.setenv("MNIST_DIR", str(tmp_path))
  X_train, Y_train, X_test, Y_test = beautiful_digits.load_data()
  assert X_train.shape == (12, 1, 28, 28) and X_test.shape == (5, 1, 28, 28)
  np.testing.assert_allclose(X_train.numpy()[:, 0], imgs / 255.0 - 0.5, atol=1e-6)
  assert Y_test.tolist() == labels[:5].tolist()

def test_missing_mnist_file_is_named(tmp_path, monkeypatch):
  monkeypatch.setenv("MNIST_DIR", str(tmp_path))
  with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"): beautiful_digits.load_data()

def test_sklearn_digits_by_default(monkeypatch):
  monkeypatch.delenv("MNIST_DIR", raising=False)
  X_train, Y_train, X_test, Y_test = beautiful_digits.load_data()
  assert X_train.shape[1:] == (1, 8, 8) and X_train.shape[0] + X_test.shape[0] == 1797
  assert set(Y_train.tolist()) == set(range(10))

def test_sklearn_digits_read_without_importing_sklearn_are_load_digits():
  """The example reads the digits file inside sklearn's package (importing sklearn takes seconds); the arrays must be
  the ones sklearn's own loader gives, dtypes included."""
  from sklearn.datasets import load_digits
  X, Y = beautiful_digits._sklearn_digits()
  d = load_digits()
  assert X.dtype == d.images.dtype and Y.dtype == d.target.dtype
  np.testing.assert_array_equal(X, d.images)
  np.testing.assert_array_equal(Y, d.target)
