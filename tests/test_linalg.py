"""Tensor.qr and Tensor.svd (tinygrad 0.14's names and shapes), checked against numpy.linalg: the factors rebuild the
input, Q / U / Vh are orthogonal, R is upper triangular, singular values are numpy's (descending), batched inputs
factor per matrix, and a rank-deficient input still gets an orthogonal U."""
import numpy as np
import pytest
from tinygrad import Tensor

def _sdiag(S, m, n):
  out = np.zeros(S.shape[:-1] + (m, n), S.dtype)
  k = min(m, n)
  out[..., np.arange(k), np.arange(k)] = S
  return out

def _eye_err(M): return np.abs(M @ np.swapaxes(M, -1, -2) - np.eye(M.shape[-2])).max()

@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 3, 5, 4)])
def test_qr_matches_numpy(shape):
  a = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
  Q, R = Tensor(a).qr()
  q, r = Q.numpy(), R.numpy()
  m, n = shape[-2:]
  assert q.shape == shape[:-2] + (m, m) and r.shape == shape
  np.testing.assert_allclose(q @ r, a, atol=1e-5)
  assert _eye_err(q) < 1e-5
  np.testing.assert_equal(r, np.triu(r))
  # R is unique up to the sign of each row: its diagonal's magnitudes are numpy's
  rn = np.linalg.qr(a, mode="complete")[1]
  k = min(m, n)
  np.testing.assert_allclose(np.abs(r[..., np.arange(k), np.arange(k)]), np.abs(rn[..., np.arange(k), np.arange(k)]), rtol=1e-4)

@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("shape", [(2, 2), (5, 3), (3, 5), (2, 2, 2, 3), (12, 9)])
def test_svd_matches_numpy(shape, full):
  a = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
  U, S, Vh = (x.numpy() for x in Tensor(a).svd(full_matrices=full))
  m, n = shape[-2:]
  k = min(m, n)
  assert U.shape == shape[:-2] + ((m, m) if full else (m, k)) and S.shape == shape[:-2] + (k,)
  assert Vh.shape == shape[:-2] + ((n, n) if full else (k, n))
  np.testing.assert_allclose(S, np.linalg.svd(a, compute_uv=False), rtol=1e-5, atol=1e-5)
  assert np.all(np.diff(S, axis=-1) <= 0) and np.all(S >= 0)
  np.testing.assert_allclose(U @ (_sdiag(S, m, n) if full else _sdiag(S, k, k)) @ Vh, a, atol=1e-5)
  if full: assert _eye_err(U) < 1e-5 and _eye_err(Vh) < 1e-5
  else: assert np.abs(np.swapaxes(U, -1, -2) @ U - np.eye(k)).max() < 1e-5 and _eye_err(Vh) < 1e-5

def test_svd_rank_deficient_and_float64():
  a = np.outer(np.arange(1, 5), np.arange(1, 4)).astype(np.float32)  # rank 1
  U, S, Vh = (x.numpy() for x in Tensor(a).svd())
  np.testing.assert_allclose(S, np.linalg.svd(a, compute_uv=False), atol=1e-4)
  assert _eye_err(U) < 1e-5 and _eye_err(Vh) < 1e-5  # the zero singular values' columns complete the basis
  np.testing.assert_allclose(U @ _sdiag(S, 4, 3) @ Vh, a, atol=1e-4)
  b = np.random.default_rng(3).standard_normal((5, 4))
  U, S, Vh = Tensor(b).svd(full_matrices=False)
  assert S.dtype == Tensor(b).dtype
  np.testing.assert_allclose(S.numpy(), np.linalg.svd(b, compute_uv=False), rtol=1e-12)
  # an int matrix factors as the default float, as tinygrad's float ops do
  np.testing.assert_allclose(Tensor([[1, 2], [3, 4]]).svd()[1].numpy(), np.linalg.svd(np.array([[1, 2], [3, 4.]]), compute_uv=False), rtol=1e-5)

def test_qr_svd_need_a_matrix():
  with pytest.raises(ValueError, match="svd: expected two or more dimensions, got 1"): Tensor([1.0, 2.0]).svd()
  with pytest.raises(AssertionError, match="qr: expected two or more dimensions"): Tensor(3.0).qr()
