"""scikit-learn's handwritten digits written as MNIST's four IDX files (8x8 scaled to 24x24, padded to 28x28), for
tests that run tinygrad-style MNIST scripts with MNIST_DIR pointing at them (no download)."""
from __future__ import annotations
import pathlib
import numpy as np

def write_digits_as_mnist(out: pathlib.Path, n_train: int = 1500, total: int | None = None) -> pathlib.Path:
  """The first `total` digits (all by default) in a fixed shuffled order: n_train to train on, the rest to test."""
  from sklearn.datasets import load_digits
  d = load_digits()
  X = np.round(d.images * (255 / 16)).astype(np.uint8).repeat(3, 1).repeat(3, 2)
  X, Y = np.pad(X, ((0, 0), (2, 2), (2, 2))), d.target.astype(np.uint8)
  order = np.random.default_rng(0).permutation(len(X))[:total]
  X, Y = X[order], Y[order]
  for name, a in (("train-images-idx3-ubyte", X[:n_train]), ("train-labels-idx1-ubyte", Y[:n_train]),
                  ("t10k-images-idx3-ubyte", X[n_train:]), ("t10k-labels-idx1-ubyte", Y[n_train:])):
    (out / name).write_bytes(bytes([0, 0, 8, a.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in a.shape) + a.tobytes())
  return out
