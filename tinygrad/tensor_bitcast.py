"""Tensor.bitcast between dtypes of different sizes, as tinygrad: the bytes of the last dimension are reinterpreted
(little-endian, as the CPU stores them), so it grows or shrinks by the size ratio ((2, 8) int8 -> (2, 2) float32).
Built from same-size bitcasts to unsigned ints, shifts and masks: the same kernels on every device."""
from __future__ import annotations
from typing import TYPE_CHECKING
from tinygrad.dtype import DType, dtypes
if TYPE_CHECKING: from tinygrad.tensor import Tensor

class BitcastShapeError(ValueError, RuntimeError):
  """The last dimension's bytes don't make whole items of the new dtype (a ValueError, and tinygrad's RuntimeError)."""

_UINT = {1: dtypes.uint8, 2: dtypes.uint16, 4: dtypes.uint32, 8: dtypes.uint64}

def bitcast_resize(t: Tensor, dt: DType) -> Tensor:
  a, b = t.dtype.itemsize, dt.itemsize
  if t.ndim == 0 or (t.shape[-1] * a) % b:
    raise BitcastShapeError(f"bitcast of shape {t.shape} {t.dtype} to {dt}: the last dimension's {t.shape[-1] if t.ndim else 0} x {a} bytes "
                            f"don't make whole {b}-byte items")
  u, lead, n = t.bitcast(_UINT[a]), t.shape[:-1], t.shape[-1]
  if a > b:  # each item splits into a // b pieces, the lowest bits first
    r, mask = a // b, (1 << (8 * b)) - 1
    pieces = [((u >> (8 * b * k)) & mask).cast(_UINT[b]) for k in range(r)]
    out = pieces[0].unsqueeze(-1).cat(*[p.unsqueeze(-1) for p in pieces[1:]], dim=-1).reshape(*lead, n * r)
  else:  # every b // a consecutive items join into one
    r = b // a
    v = u.reshape(*lead, n // r, r).cast(_UINT[b])
    out = v[..., 0]
    for k in range(1, r): out = out | (v[..., k] << (8 * a * k))  # the pieces' bits don't overlap
  return out.bitcast(dt)
