"""Matrix factorizations made of tensor ops, batched over leading dims (tinygrad 0.14's `Tensor.qr` / `Tensor.svd`):
QR by Householder reflections, SVD by one-sided Jacobi rotations of QR's R. Every step is a matmul or an elementwise
op, so they run on any device and their kernels are ordinary ones."""
from __future__ import annotations
from typing import TYPE_CHECKING
from tinygrad.dtype import dtypes, least_upper_float
if TYPE_CHECKING: from tinygrad.tensor import Tensor

# a pair's columns count as orthogonal when |a_p . a_q| <= tol * |a_p| |a_q|: a few ulps of the dtype
_TOL = {dtypes.float64: 1e-15, dtypes.float32: 1e-7, dtypes.float16: 1e-3, dtypes.bfloat16: 1e-2}
_MAX_SWEEPS = 40  # one-sided Jacobi converges quadratically: float32 matrices take well under 10 sweeps

def _matrix(t: Tensor, name: str) -> Tensor:
  from tinygrad.tensor import ArgumentAssertionError
  if t.ndim < 2: raise ArgumentAssertionError(f"{name}: expected two or more dimensions, got {t.ndim} (shape {t.shape})")
  return t if dtypes.is_float(t.dtype) else t.cast(least_upper_float(t.dtype))

def _eye(t: Tensor, batch: tuple[int, ...], n: int) -> Tensor:
  return type(t).eye(n, dtype=t.dtype, device=t.device).reshape((1,) * len(batch) + (n, n)).expand(batch + (n, n))

def _round_robin(n: int) -> list[list[tuple[int, int]]]:
  """Rounds of disjoint column pairs covering every pair once (the circle method; an odd n gets a resting column)."""
  N = n + n % 2
  arr, rounds = list(range(N)), []
  for _ in range(N - 1):
    rounds.append([(min(a, b), max(a, b)) for a, b in ((arr[i], arr[N - 1 - i]) for i in range(N // 2)) if max(a, b) < n])
    arr = [arr[0], arr[-1]] + arr[1:-1]
  return rounds

def _jacobi(W: Tensor, V: Tensor) -> tuple[Tensor, Tensor]:
  """Rotates column pairs of W, and the same of V, until W's columns are orthogonal (one-sided Jacobi). W and V are
  stacked as one matrix [W; V] so one rotation moves both. Each round first permutes the columns so that the round's
  pairs sit side by side, [firsts | seconds | resting] (an exact one-hot matmul); the columns come back in some
  order, the permutation kept in `layout`."""
  m, n = W.shape[-2], W.shape[-1]
  if n < 2: return W, V
  T, tol = type(W), _TOL.get(W.dtype, 1e-7)
  X, layout = W.cat(V, dim=-2), list(range(n))  # layout[position] = the column now there
  for _ in range(_MAX_SWEEPS):
    worst = None
    for pairs in _round_robin(n):
      used = {c for pq in pairs for c in pq}
      order = [p for p, _ in pairs] + [q for _, q in pairs] + [c for c in range(n) if c not in used]
      pos = {c: i for i, c in enumerate(layout)}
      perm = T([[1.0 if pos[c] == i else 0.0 for c in order] for i in range(n)], dtype=X.dtype, device=X.device)
      X, layout, h = X @ perm, order, len(pairs)
      xp, xq, rest = X[..., :, :h], X[..., :, h:2 * h], X[..., :, 2 * h:]
      wp, wq = xp[..., :m, :], xq[..., :m, :]
      alpha, beta, gamma = (wp * wp).sum(-2, keepdim=True), (wq * wq).sum(-2, keepdim=True), (wp * wq).sum(-2, keepdim=True)
      scale = (alpha * beta).sqrt()
      off = (scale > 0).where(gamma.abs() / (scale > 0).where(scale, 1), 0).max()
      worst = off if worst is None else worst.maximum(off)
      # the rotation that zeroes the pair's dot product: t = tan(angle), the smaller root of t^2 + 2 zeta t - 1 = 0
      rot = gamma != 0
      zeta = (beta - alpha) / (2 * rot.where(gamma, 1))
      tan = rot.where((zeta >= 0).where(1.0, -1.0) / (zeta.abs() + (1 + zeta * zeta).sqrt()), 0)
      c = 1 / (1 + tan * tan).sqrt()
      s = c * tan
      X = (c * xp - s * xq).cat(s * xp + c * xq, rest, dim=-1).contiguous()
    assert worst is not None
    T.realize(X, worst)
    if worst.item() <= tol: break
  # back to the original column order
  pos = {c: i for i, c in enumerate(layout)}
  X = X @ T([[1.0 if pos[c] == i else 0.0 for c in range(n)] for i in range(n)], dtype=X.dtype, device=X.device)
  return X[..., :m, :], X[..., m:, :]

class LinalgOps:
  """Mixed into Tensor (see tensor.py)."""
  __slots__ = ()

  def qr(self: Tensor) -> tuple[Tensor, Tensor]:
    """A = Q @ R over the last two dims: Q (m, m) orthogonal, R (m, n) upper triangular (numpy's mode='complete')."""
    A = _matrix(self, "qr")
    batch, (m, n) = A.shape[:-2], A.shape[-2:]
    R, Q = A, _eye(A, batch, m)
    rows = type(A).arange(m, device=A.device).reshape(m, 1)
    for k in range(min(m - 1, n)):
      # the reflection I - u u^T that maps column k's part from row k down onto row k
      x = (rows >= k).where(R[..., :, k:k + 1], 0)
      norm = (x * x).sum(-2, keepdim=True).sqrt()
      sign = (R[..., k:k + 1, k:k + 1] < 0).where(-1.0, 1.0)
      v = x + (rows == k).where(sign * norm, 0)
      vv = (v * v).sum(-2, keepdim=True)
      u = (vv > 0).where(v * (2 / (vv > 0).where(vv, 1)).sqrt(), 0)
      R = (R - u @ (u.transpose(-2, -1) @ R)).contiguous()
      Q = (Q - (Q @ u) @ u.transpose(-2, -1)).contiguous()
    return Q, R.triu()

  def svd(self: Tensor, full_matrices: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """A = U @ diag(S) @ Vh over the last two dims, S descending and >= 0 (numpy's / torch.linalg.svd's order).
    full_matrices: U (m, m) and Vh (n, n); else U (m, k) and Vh (k, n) with k = min(m, n)."""
    A = _matrix(self, "svd")
    batch, (m, n) = A.shape[:-2], A.shape[-2:]
    if m < n:  # A^T = Vh^T S U^T
      U, S, Vh = A.transpose(-2, -1).svd(full_matrices)
      return Vh.transpose(-2, -1), S, U.transpose(-2, -1)
    Q, R = A.qr()
    W, V = _jacobi(R[..., :n, :], _eye(A, batch, n))
    S = (W * W).sum(-2).sqrt()
    S, order = S.sort(-1, descending=True)
    cols = order.unsqueeze(-2).expand(batch + (n, n))
    W, V = W.gather(-1, cols), V.gather(-1, cols)
    # U's columns are W's normalized; a QR of them completes the basis where a singular value is 0 (a zero column)
    U1, R1 = (W / (S > 0).where(S, 1).unsqueeze(-2)).qr()
    diag = (R1 * _eye(R1, batch, n)).sum(-1).unsqueeze(-2)
    U1 = U1 * (diag < 0).where(-1.0, 1.0)
    U = Q[..., :, :n] @ U1
    if full_matrices and m > n: U = U.cat(Q[..., :, n:], dim=-1)
    return U, S, V.transpose(-2, -1)
