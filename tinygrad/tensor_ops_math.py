"""Tensor math beyond the ALU ops: inverse trig and hyperbolic functions, erf, sign tricks, log-space sums, closeness
tests, cumulative min and log-cum-sum-exp. Each is a composition of the few ALU ops the devices implement, written
so that its forward and its autograd derivative stay finite where the function is (large |x|, zeros)."""
from __future__ import annotations
import math
from typing import TYPE_CHECKING, Any
from tinygrad.dtype import dtypes
from tinygrad.helpers import normalize_axis
if TYPE_CHECKING: from tinygrad.tensor import Tensor

def _poly(x: Tensor, coeffs: list[float]) -> Tensor:
  """coeffs[0]*x^(n-1) + ... + coeffs[-1], by Horner's rule."""
  acc: Any = coeffs[0]
  for c in coeffs[1:]: acc = acc * x + c
  return acc

def _odd(x: Tensor, f) -> Tensor:
  """f(|x|) carrying x's sign, for an odd f. |x| is taken with where, not x*sign(x), so the derivative at 0 is f'(0)
  (sign's derivative would zero it), and neither branch is evaluated outside f's domain."""
  neg = x < 0
  y = f(neg.where(-x, x))
  return neg.where(-y, y)

class MathOps:
  """Mixed into Tensor (see tensor.py)."""
  __slots__ = ()

  # ----- logs and exponentials
  def log10(self: Tensor) -> Tensor: return self.log2() * math.log10(2)
  def logaddexp(self: Tensor, other) -> Tensor:
    """log(exp(self) + exp(other)) without overflow: the larger term is factored out."""
    a, b = self._broadcasted(other)
    a, b = a._float(), b._float()
    m = a.maximum(b)
    return ((a - m).exp() + (b - m).exp()).log() + m
  def logsigmoid(self: Tensor) -> Tensor: return -(-self).softplus()

  # ----- inverse trig and hyperbolic functions
  def asin(self: Tensor) -> Tensor:
    # Abramowitz & Stegun 4.4.46 on [0, 1] (|error| < 2e-8); nan outside [-1, 1], as sqrt of a negative is
    coeffs = [-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810, -0.0501743046, 0.0889789874, -0.2145988016, 1.5707963050]
    return _odd(self._float(), lambda a: math.pi / 2 - (1.0 - a).sqrt() * _poly(a, coeffs))
  def acos(self: Tensor) -> Tensor: return math.pi / 2 - self.asin()
  def atan(self: Tensor) -> Tensor:
    x = self._float()
    return (x / (1 + x * x).sqrt()).asin()
  def asinh(self: Tensor) -> Tensor:
    # log(|x| + sqrt(x^2 + 1)) with the sign put back: no cancellation for large negative x
    return _odd(self._float(), lambda a: (a + (a * a + 1).sqrt()).log())
  def acosh(self: Tensor) -> Tensor:
    x = self._float()
    return (x + (x * x - 1).sqrt()).log()
  def atanh(self: Tensor) -> Tensor:
    x = self._float()
    return ((1 + x) / (1 - x)).log() / 2
  def erf(self: Tensor) -> Tensor:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7)
    coeffs = [1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592]
    def pos(a: Tensor) -> Tensor:
      t = 1.0 / (1.0 + 0.3275911 * a)
      return 1.0 - t * _poly(t, coeffs) * (-(a * a)).exp()
    return _odd(self._float(), pos)

  # ----- sign and remainder
  def copysign(self: Tensor, other) -> Tensor:
    """|self| with the sign of other (-0.0 counts as negative, as in C's copysign)."""
    a, b = self._broadcasted(other)
    neg = (b < 0) | (b._float().reciprocal() < 0) if dtypes.is_float(b.dtype) else b < 0
    return neg.where(-a.abs(), a.abs())
  def fmod(self: Tensor, x) -> Tensor:
    """C's remainder: the sign follows the dividend (`%` follows the divisor)."""
    a, b = self._broadcasted(x)
    return a - a.div(b, rounding_mode="trunc") * b

  # ----- closeness
  def isclose(self: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan=False) -> Tensor:
    """|self - other| <= atol + rtol * |other| elementwise; infinities are close only to themselves, nan to nan only
    with equal_nan."""
    a, b = self._broadcasted(other)
    finite = a.isfinite() & b.isfinite() & ((a - b).abs() <= atol + rtol * b.abs())
    out = finite | ((a.isinf() | b.isinf()) & (a == b))
    return out | (a.isnan() & b.isnan()) if equal_nan else out
  def allclose(self: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan=False) -> Tensor:
    """A 0-d bool Tensor (as tinygrad 0.14): .item() for the Python bool."""
    return self.isclose(other, rtol, atol, equal_nan).all()

  # ----- normalizations
  def softmin(self: Tensor, axis=-1, dtype=None) -> Tensor: return (-self).softmax(axis, dtype)
  def normalize(self: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """self divided by its p-norm along dim (at least eps), as torch.nn.functional.normalize."""
    norm = (self != 0).sum(dim, keepdim=True) if p == 0 else self.abs().pow(p).sum(dim, keepdim=True).pow(1 / p)
    return self / norm.maximum(eps)

  # ----- cumulative
  def cummin(self: Tensor, axis: int = 0) -> tuple[Tensor, Tensor]:
    """The running min along `axis` and where it was found (the last index of a tie, as torch.cummin gives)."""
    inv = (lambda t: t.logical_not()) if self.dtype == dtypes.bool else (lambda t: -t) if dtypes.is_float(self.dtype) else (lambda t: ~t)
    vals, idx = inv(self).cummax(axis)
    return inv(vals), idx
  def logcumsumexp(self: Tensor, axis=0) -> Tensor:
    """log(cumsum(exp(self))) along axis; each prefix is shifted by its own max, so neither end overflows."""
    if self.ndim == 0:
      normalize_axis(axis, 0)
      return self._float()
    a = normalize_axis(axis, self.ndim)
    if self.shape[a] == 0: return self._float()
    w, a = self._float()._cum_window(a, -math.inf)  # (..., i, j): x[j] for j <= i, -inf after
    m = w.max(-1, keepdim=True).detach()
    return ((w - m).exp().sum(-1, keepdim=True).log() + m).squeeze(-1).transpose(a, -1)

  # ----- matrix functions
  def newton_schulz(self: Tensor, steps: int, params: tuple[float, ...], eps: float = 1.0e-7) -> Tensor:
    """An approximately orthogonal matrix with self's singular vectors (Muon's update): self scaled to norm 1, then
    `steps` times X <- p0*X + p1*(XX^T)X + p2*(XX^T)^2 X + ... for params (p0, p1, ...), over the last two dims."""
    if self.ndim < 2: raise ValueError(f"newton_schulz needs a matrix (two or more dims), got shape {self.shape}")
    if self.shape[-2] > self.shape[-1]: return self.transpose(-2, -1).newton_schulz(steps, params, eps).transpose(-2, -1)
    x = self / (self.square().sum(axis=(-2, -1), keepdim=True).sqrt() + eps)
    for _ in range(steps):
      gram, term = x @ x.transpose(-2, -1), x
      acc = params[0] * x
      for p in params[1:]:
        term = gram @ term
        acc = acc + p * term
      x = acc
    return x
