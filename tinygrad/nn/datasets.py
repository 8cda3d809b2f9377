"""Datasets as tinygrad's `tinygrad.nn.datasets` gives them. `mnist()` returns X_train, Y_train, X_test, Y_test as
uint8 tensors (images (N, 1, 28, 28), labels (N,)), read from MNIST_DIR when set (a folder with the four IDX files,
plain or gzipped: no network needed), else downloaded once into TINYVIZ_CACHE/downloads."""
from __future__ import annotations
import gzip, os, pathlib, struct
from tinygrad.tensor import Tensor
from tinygrad.helpers import fetch

MNIST_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
FASHION_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")

def read_idx(raw: bytes, what: str = "IDX data"):
  """An IDX file (MNIST's format: zero, zero, a type byte, ndim, big-endian dims, then the values) as a numpy array
  of unsigned bytes; gzipped input is unpacked first."""
  import numpy as np
  if raw[:2] == b"\x1f\x8b": raw = gzip.decompress(raw)
  if len(raw) < 4 or raw[:2] != b"\0\0" or raw[2] != 0x08:
    raise ValueError(f"{what} is not an IDX file of unsigned bytes (it starts {raw[:4]!r}, expected 00 00 08 <ndim>)")
  ndim = raw[3]
  shape = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
  if len(raw) - 4 - 4 * ndim != (n := int(np.prod(shape))):
    raise ValueError(f"{what}: its header says {shape} ({n} bytes of values) but {len(raw) - 4 - 4 * ndim} follow")
  return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)

def _mnist_file(stem: str, fashion: bool) -> tuple[bytes, str]:
  if (d := os.environ.get("MNIST_DIR")):
    for p in (pathlib.Path(d) / stem, pathlib.Path(d) / f"{stem}.gz"):
      if p.exists(): return p.read_bytes(), str(p)
    raise FileNotFoundError(f"MNIST_DIR={d} has no {stem}[.gz]")
  url = (FASHION_URL if fashion else MNIST_URL) + stem + ".gz"
  try: path = fetch(url, f"{'fashion-' if fashion else ''}{stem}.gz")
  except OSError as e: raise OSError(f"could not download {url} ({e}); with no network, set MNIST_DIR to a folder with the IDX files") from None
  return path.read_bytes(), str(path)

def mnist(device: str | None = None, fashion: bool = False) -> tuple[Tensor, Tensor, Tensor, Tensor]:
  """MNIST (or Fashion-MNIST): X_train (60000, 1, 28, 28), Y_train (60000,), X_test, Y_test, all uint8."""
  x_train, y_train, x_test, y_test = (read_idx(*_mnist_file(stem, fashion)) for stem in FILES)
  img = lambda a: Tensor(a.reshape(-1, 1, *a.shape[1:]), device=device)  # noqa: E731
  return img(x_train), Tensor(y_train, device=device), img(x_test), Tensor(y_test, device=device)
