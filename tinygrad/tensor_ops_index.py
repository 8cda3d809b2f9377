"""Tensor methods that order, scatter, select or rearrange elements along a dim: triangles, cumulative ops, sort/topk,
scatter, masked ops, roll, interpolate and slice assignment. Each is built from movement ops, comparisons against an
arange, where and reductions, so it lowers to ordinary fused kernels (masked_select alone realizes, as in tinygrad)."""
from __future__ import annotations
from typing import TYPE_CHECKING, Any
from tinygrad.dtype import dtypes, DTypeError
from tinygrad.helpers import normalize_axis, all_int, prod, strides_for_shape
from tinygrad.uop.ops import UOp, Ops
from tinygrad.engine.schedule import is_contiguous_view

# views that name places of one buffer, each place at most once: a setitem through them writes that buffer (N[1][2] = 5)
_PLACE_VIEWS = (Ops.RESHAPE, Ops.SHRINK, Ops.PERMUTE, Ops.FLIP)
def _buffer_view(u) -> bool:
  while u.op in _PLACE_VIEWS: u = u.src[0]
  return u.op in (Ops.BUFFER, Ops.PARAM, Ops.ASSIGN)  # an ASSIGN: the buffer with a write still pending
if TYPE_CHECKING: from tinygrad.tensor import Tensor

def _u8_weights(n: int, m: int, align_corners: bool) -> tuple[list[int], list[int], int]:
  """Resizing one axis of uint8 from n to m as torch does it: each output's two source positions and its weight in
  fixed point, computed here in float64 (a float32 weight rounds to another fixed-point value now and then), with as
  many bits as keep the largest weight under 2**15 (14 when an output sits on an input, 15 when all fall between)."""
  scale = (n - 1) / (m - 1) if align_corners and m > 1 else 0.0 if align_corners else n / m
  srcs = [min(max(j * scale if align_corners else (j + 0.5) * scale - 0.5, 0.0), n - 1.0) for j in range(m)]
  fracs = [s - int(s) for s in srcs]
  wt_max = max(max(f, 1 - f) for f in fracs)
  bits = next((p for p in range(22) if int(0.5 + wt_max * (1 << (p + 1))) >= 1 << 15), 22)
  return [int(s) for s in srcs], [int(f * (1 << bits) + 0.5) for f in fracs], bits

class OpArgumentError(ValueError, RuntimeError):
  """An argument an op can't take (a reduce name, sizes that don't fit): a ValueError, and the RuntimeError tinygrad and
  torch raise there."""

class IndexOps:
  """Mixed into Tensor (see tensor.py)."""
  __slots__ = ()

  # ----- triangles and cumulative ops
  def _tri_mask(self: Tensor, diagonal: int, upper: bool) -> Tensor:
    if self.ndim < 2: raise ValueError(f"tril/triu need at least 2 dims, got shape {self.shape}")
    r, c = self.shape[-2:]
    rows, cols = type(self).arange(r, device=self.device).reshape(r, 1), type(self).arange(c, device=self.device).reshape(1, c)
    return (rows + diagonal < cols + 1) if upper else (cols < rows + diagonal + 1)
  def triu(self: Tensor, diagonal: int = 0) -> Tensor:
    """Zero everything below the `diagonal`-th diagonal of the last two dims."""
    return self._tri_mask(diagonal, True).where(self, self.zeros_like())
  def tril(self: Tensor, diagonal: int = 0) -> Tensor:
    """Zero everything above the `diagonal`-th diagonal of the last two dims."""
    return self._tri_mask(diagonal, False).where(self, self.zeros_like())
  def _cum_window(self: Tensor, axis: int, fill: Any) -> tuple[Tensor, int]:
    """(..., i, j) = x[j] for j <= i else fill, with `axis` moved last: a reduction over j gives the cumulative op."""
    a = normalize_axis(axis, self.ndim)
    n = self.shape[a]
    x = self.transpose(a, -1)
    y = x.unsqueeze(-2).expand(x.shape[:-1] + (n, n))
    return type(self).ones(n, n, dtype=dtypes.bool, device=self.device).tril().where(y, fill), a
  def cumprod(self: Tensor, axis: int) -> Tensor:
    normalize_axis(axis, self.ndim)  # a bad axis is an IndexError, on a 0-d tensor too
    if self.ndim == 0: return self
    w, a = self._cum_window(axis, 1)
    return w.prod(-1, dtype=self.dtype).transpose(a, -1)
  def cummax(self: Tensor, axis: int = 0) -> tuple[Tensor, Tensor]:
    """The running max along `axis` and where it was found (the last index of a tie, as torch.cummax gives)."""
    normalize_axis(axis, self.ndim)
    if self.ndim == 0: return self, self.zeros_like(dtype=dtypes.int32)
    w, a = self._cum_window(axis, dtypes.min(self.dtype))
    vals = w.max(-1)
    n = self.shape[a]
    x = self.transpose(a, -1)
    # (..., i, j): x[j] equals the running max at i and j <= i; the largest such j
    hit = (x.unsqueeze(-2) == vals.unsqueeze(-1)) & type(self).ones(n, n, dtype=dtypes.bool, device=self.device).tril()
    idx = hit.where(type(self).arange(n, device=self.device).reshape(1, n), -1).max(-1).cast(dtypes.int32)
    out = vals.transpose(a, -1)
    # the gradient of out[i] goes to x[idx[i]] alone, as torch's does (the max's own rule would split it among ties)
    def vjp(g: Tensor) -> tuple[Tensor]:
      pick = idx.unsqueeze(-1) == type(self).arange(n, device=self.device)  # (..., i, j)
      return (pick.where(g.transpose(a, -1).unsqueeze(-1), 0).sum(-2).transpose(a, -1),)
    from tinygrad.gradient import custom_vjp
    custom_vjp[out.uop] = ((self.uop,), vjp)
    return out, idx.transpose(a, -1)

  # ----- sorting: each element's rank is a count of comparisons; a one-hot of ranks moves it into place
  def _ranks(self: Tensor, dim: int, descending: bool) -> Tensor:
    """Stable rank of each element along the last dim: how many come before it (smaller, or equal and earlier)."""
    n = self.shape[-1]
    xi, xj = self.unsqueeze(-1), self.unsqueeze(-2)  # (..., i, 1), (..., 1, j)
    before = (xj > xi) if descending else (xj < xi)
    earlier = type(self).arange(n, device=self.device).reshape(1, n) < type(self).arange(n, device=self.device).reshape(n, 1)
    return (before | ((xj == xi) & earlier)).sum(-1)
  def _take_ranks(self: Tensor, ranks: Tensor, k: int) -> tuple[Tensor, Tensor]:
    n = self.shape[-1]
    onehot = ranks.unsqueeze(-1) == type(self).arange(k, device=self.device)  # (..., i, r)
    vals = onehot.where(self.unsqueeze(-1), self.zeros_like().unsqueeze(-1)).sum(-2, dtype=self.dtype)
    idx = onehot.where(type(self).arange(n, device=self.device).reshape(n, 1), 0).sum(-2, dtype=dtypes.int32)
    return vals, idx
  def sort(self: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    """Sorted values and their indices along `dim`. Stable: equal elements keep their order."""
    if self.ndim == 0: return self, self.zeros_like(dtype=dtypes.int32)
    d = normalize_axis(dim, self.ndim)
    x = self.transpose(d, -1)
    vals, idx = x._take_ranks(x._ranks(-1, descending), x.shape[-1])
    return vals.transpose(d, -1), idx.transpose(d, -1)
  def argsort(self: Tensor, dim: int = -1, descending: bool = False) -> Tensor: return self.sort(dim, descending)[1]
  def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted_: bool = True) -> tuple[Tensor, Tensor]:
    """The k largest (or smallest) values along `dim`, in order, and their indices."""
    if not sorted_: raise NotImplementedError("topk with sorted_=False is not supported")
    d = normalize_axis(dim, self.ndim)
    if not 0 <= k <= self.shape[d]: raise ValueError(f"topk: k={k} is out of range for dim {d} of size {self.shape[d]}")
    x = self.transpose(d, -1)
    vals, idx = x._take_ranks(x._ranks(-1, largest), k)
    return vals.transpose(d, -1), idx.transpose(d, -1)

  # ----- scatter: a one-hot of the index along dim; the reduction over source positions picks or combines
  def _scatter_fast(self: Tensor, d: int, index: Tensor, src: Tensor, how: tuple[str | None, bool]) -> Tensor | None:
    """scatter / scatter_reduce by the scatter kernel (_scatter_copy): each index element's flat place of self (its own
    coordinates, with index's value along d; -1 out of range, as the one-hot drops it), its src value stored there in
    row-major order (the last of several stays) or combined with what is there (sum, prod, amax, amin; mean as a sum
    over a count). Realizes now. None where it can't (_can_scatter: a gradient to keep, ...): the one-hot below."""
    reduce, include_self = how
    if not self._can_scatter(src) or index.device != self.device or index.numel() > 2**31 - 1: return None
    (src, index) = self._settle_pending(src, index)
    T, dt = type(self), self.dtype
    flat = index.zeros_like(dtype=dtypes.int32)
    for a, (n, st) in enumerate(zip(index.shape, strides_for_shape(self.shape))):
      if a != d and n > 1: flat = flat + T.arange(n, dtype=dtypes.int32, device=self.device).reshape((1,) * a + (n,) + (1,) * (index.ndim - a - 1)) * st
    ok = (index >= 0) & (index < self.shape[d])
    dest = ok.where(flat + ok.where(index, 0).cast(dtypes.int32) * strides_for_shape(self.shape)[d], -1).flatten()
    vals = src.shrink(tuple((0, s) for s in index.shape)).flatten()
    if reduce is None: return self._scatter_copy(dest, vals)
    op, ident = {"sum": (Ops.ADD, 0), "mean": (Ops.ADD, 0), "prod": (Ops.MUL, 1), "amax": (Ops.MAX, dtypes.min(dt)), "amin": ("min", dtypes.max(dt))}[reduce]
    if include_self and reduce != "mean": return self._scatter_copy(dest, vals, op)
    hits = T.zeros(self.shape, dtype=dtypes.int32, device=self.device)._scatter_copy(dest, T.ones(vals.shape, dtype=dtypes.int32, device=self.device), Ops.ADD)
    if reduce != "mean": return (hits > 0).where(T.full(self.shape, ident, dt, self.device)._scatter_copy(dest, vals, op), self)
    total, cnt = (self if include_self else T.zeros(self.shape, dtype=dt, device=self.device))._scatter_copy(dest, vals, Ops.ADD), hits + int(include_self)
    out = (total / cnt.maximum(1)) if dtypes.is_float(dt) else total // cnt.maximum(1).cast(dt)
    return (hits > 0).where(out.cast(dt), self)
  def _pre_scatter(self: Tensor, dim: int, index: Tensor, src: Any, how: tuple[str | None, bool] = (None, True)) -> tuple[Tensor, Tensor]:
    """A mask of shape self.shape + (index.shape[dim],), where mask[..., p, ..., j] says src[..., j, ...] goes to p, and src
    lined up with it (size 1 at dim, broadcast). Where the scatter kernel can do it instead (_scatter_fast), its
    result and None."""
    d = normalize_axis(dim, self.ndim)
    if not dtypes.is_int(index.dtype): raise TypeError(f"scatter index must be an integer tensor, got {index.dtype}")
    if isinstance(src, type(self)) and src.dtype != self.dtype:  # as tinygrad and torch: no silent cast of the source
      raise DTypeError(f"scatter: src is {src.dtype} but self is {self.dtype}; cast one of them first")
    if not isinstance(src, type(self)): src = type(self).full(index.shape, src, self.dtype, self.device)
    if not index.ndim == self.ndim == src.ndim: raise ValueError(f"scatter: self {self.shape}, index {index.shape} and src {src.shape} need the same number of dims")
    if any((i != d and s < ix) or sr < ix for i, (s, ix, sr) in enumerate(zip(self.shape, index.shape, src.shape))):
      raise OpArgumentError(f"scatter: index {index.shape} must fit in src {src.shape} and, outside dim {d}, in self {self.shape}")
    if (fast := self._scatter_fast(d, index, src, how)) is not None: return fast, None  # type: ignore[return-value]
    src = src.shrink(tuple((0, s) for s in index.shape)).unsqueeze(-1).transpose(-1, d)  # dim d has size 1, last is index.shape[d]
    ix = index.unsqueeze(-1).transpose(-1, d)
    mask = ix == type(self).arange(self.shape[d], device=self.device).reshape((self.shape[d],) + (1,) * (self.ndim - d))
    pads = tuple((0, self.shape[i] - mask.shape[i]) if i != d else (0, 0) for i in range(self.ndim)) + ((0, 0),)
    return src.pad(pads), mask.pad(pads)
  def scatter(self: Tensor, dim: int, index: Tensor, src: Tensor | float | int, reduce: str | None = None) -> Tensor:
    """Write src[..., j, ...] to position index[..., j, ...] along `dim` (reduce='add'/'multiply' combines instead)."""
    if reduce not in (None, "add", "multiply"): raise TypeError(f"scatter reduce must be None, 'add' or 'multiply', got {reduce!r}")
    if reduce is not None and isinstance(src, type(self)):
      raise TypeError("scatter: reduce= takes a scalar src only (as in tinygrad); for a Tensor src use scatter_reduce")
    if reduce is not None: return self.scatter_reduce(dim, index, src, {"add": "sum", "multiply": "prod"}[reduce])  # type: ignore[arg-type]
    s, mask = self._pre_scatter(dim, index, src)
    if mask is None: return s
    # when several sources hit one place the last one wins (torch leaves that order undefined)
    j = type(self).arange(mask.shape[-1], device=self.device)
    last = mask.where(j, -1).max(-1, keepdim=True)
    pick = mask & (j == last)
    return mask.any(-1).where(pick.where(s, self.zeros_like().unsqueeze(-1)).sum(-1, dtype=self.dtype), self)
  def scatter_reduce(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, include_self: bool = True) -> Tensor:
    """Combine every src value sent to a position (reduce: 'sum', 'prod', 'mean', 'amax', 'amin'), with self unless
    include_self=False; positions nothing is sent to keep self."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"): raise OpArgumentError(f"scatter_reduce: reduce must be sum, prod, mean, amax or amin, got {reduce!r}")
    s, mask = self._pre_scatter(dim, index, src, (reduce, include_self))
    if mask is None: return s
    hit = mask.any(-1)
    def fill(v): return mask.where(s, type(self).full((), v, self.dtype, self.device))
    if reduce in ("sum", "mean"):
      out = fill(0).sum(-1, dtype=self.dtype)
      if include_self: out = out + self
      if reduce == "mean":
        cnt = mask.sum(-1) + int(include_self)
        out = (out / cnt.maximum(1)) if dtypes.is_float(self.dtype) else out // cnt.maximum(1).cast(self.dtype)
    elif reduce == "prod": out = fill(1).prod(-1, dtype=self.dtype) * (self if include_self else 1)
    elif reduce == "amax":
      out = fill(dtypes.min(self.dtype)).max(-1)
      if include_self: out = out.maximum(self)
    else:
      out = fill(dtypes.max(self.dtype)).min(-1)
      if include_self: out = out.minimum(self)
    return hit.where(out.cast(self.dtype), self)

  # ----- masks
  def masked_fill(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    return mask.where(value if isinstance(value, type(self)) else type(self).full((), value, self.dtype, self.device), self)
  def _select_slots(self: Tensor, m: Tensor, size: int | None) -> Tensor:
    """(k, n): slot j takes the j-th True of the flat mask m. size=None realizes m to learn k, as tinygrad does."""
    pos = m.cast(dtypes.int32).cumsum()  # the 1-based output slot of each selected element
    k = (pos[-1].item() if m.numel() else 0) if size is None else size
    return m.unsqueeze(0) & (pos.unsqueeze(0) == type(self).arange(1, k + 1, device=self.device).unsqueeze(1))
  def masked_select(self: Tensor, mask: Tensor, size: int | None = None, fill_value: Any = 0) -> Tensor:
    """The elements where mask is True, flattened. size=N gives exactly N (cut, or filled with fill_value) without
    realizing anything; otherwise the mask is realized to learn the result's length, as tinygrad does."""
    if mask.dtype != dtypes.bool: raise TypeError(f"masked_select needs a bool mask, got {mask.dtype}")
    x, m = self._broadcasted(mask, match_dtype=False)
    x, m = x.flatten(), m.flatten()
    onehot = self._select_slots(m, size)  # (k, n)
    out = onehot.where(x.unsqueeze(0), x.zeros_like().unsqueeze(0)).sum(-1, dtype=self.dtype)
    return out if size is None else onehot.any(-1).where(out, fill_value).cast(self.dtype)
  def nonzero(self: Tensor, size: int | None = None, fill_value: Any = 0) -> Tensor:
    """(count, ndim) int32 coordinates of the non-zero elements, in order; size=N pads with fill_value or cuts."""
    if self.ndim == 0: return type(self).zeros(size if size is not None else int(self.item() != 0), 0, dtype=dtypes.int32, device=self.device)
    onehot = self._select_slots((self != 0).flatten(), size)  # (k, n)
    coords = type(self).stack(*[type(self).arange(s, device=self.device).reshape((1,) * i + (s,) + (1,) * (self.ndim - i - 1))._broadcast_to(self.shape).flatten()
                               for i, s in enumerate(self.shape)], dim=-1)  # (n, ndim)
    out = onehot.unsqueeze(-1).where(coords.unsqueeze(0), 0).sum(1, dtype=dtypes.int32)
    return out if size is None else onehot.any(-1, keepdim=True).where(out, fill_value).cast(dtypes.int32)

  # ----- grids and diagonals
  def meshgrid(self: Tensor, *args: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-d (or 0-d) tensors: "ij" is matrix indexing, "xy" swaps the first two output dims."""
    if indexing not in ("ij", "xy"): raise RuntimeError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    ts = (self, *args)
    if len(ts) == 1: return ts
    order = list(range(len(ts))) if indexing == "ij" else [1, 0] + list(range(2, len(ts)))
    shape = tuple(ts[i].numel() for i in order)
    return tuple(t.reshape(tuple(-1 if i == order.index(k) else 1 for i in range(len(ts))))._broadcast_to(shape) for k, t in enumerate(ts))
  def diag(self: Tensor) -> Tensor:
    """The square matrix with this 1-d tensor on its diagonal."""
    if self.ndim != 1: raise ValueError(f"diag needs a 1-d tensor, got shape {self.shape}")
    n = self.shape[0]
    # each row padded to n+1 then read back in rows of n: element i lands at column i
    return self.unsqueeze(-1).pad((None, (0, n))).flatten().shrink(((0, n * n),)).reshape(n, n)
  def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The `offset`-th diagonal of dims dim1 and dim2 (removed), as a new last dim."""
    a, b = normalize_axis(dim1, self.ndim), normalize_axis(dim2, self.ndim)
    if a == b: raise RuntimeError(f"diagonal: dim1 and dim2 are both dim {a}")
    x = self.permute([i for i in range(self.ndim) if i not in (a, b)] + [a, b])
    r, c = x.shape[-2:]
    r0, c0 = min(max(-offset, 0), r), min(max(offset, 0), c)
    d = max(min(r - r0, c - c0), 0)
    x = x.shrink(tuple(None for _ in x.shape[:-2]) + ((r0, r0 + d), (c0, c0 + d)))
    if d == 0: return x.reshape(x.shape[:-2] + (0,))
    # rows of d read as rows of d+1: the diagonal is the first column
    return x.flatten(-2).pad(tuple(None for _ in x.shape[:-2]) + ((0, d),)).unflatten(-1, (d, d + 1))[..., 0]

  # ----- rearranging
  def repeat_interleave(self: Tensor, repeats: int, dim: int | None = None) -> Tensor:
    """Each element `repeats` times in a row along `dim` (the flattened tensor when dim is None)."""
    x = self.flatten() if dim is None else self
    d = normalize_axis(0 if dim is None else dim, x.ndim)
    return x.unsqueeze(d + 1).expand(x.shape[:d + 1] + (repeats,) + x.shape[d + 1:]).flatten(d, d + 1)
  def roll(self: Tensor, shifts: int | tuple[int, ...], dims: int | tuple[int, ...] | None = None) -> Tensor:
    """Rotate elements by `shifts` along `dims` (the flattened tensor when dims is None)."""
    if dims is None: return self.flatten().roll(shifts, 0).reshape(self.shape)
    sh, ds = (shifts,) if isinstance(shifts, int) else tuple(shifts), (dims,) if isinstance(dims, int) else tuple(dims)
    if len(sh) != len(ds): raise OpArgumentError(f"roll: {len(sh)} shifts for {len(ds)} dims")
    x = self
    for s, dim in zip(sh, ds):
      d = normalize_axis(dim, self.ndim)
      n = self.shape[d]
      if n == 0 or s % n == 0: continue
      # two copies side by side; the window starting at n - s is the rolled dim
      x = x.repeat(tuple(2 if i == d else 1 for i in range(x.ndim))).shrink(tuple((n - s % n, 2 * n - s % n) if i == d else None for i in range(x.ndim)))
    return x
  def interpolate(self: Tensor, size: tuple[int, ...], mode: str = "linear", align_corners: bool = False) -> Tensor:
    """Resize the last len(size) dims. mode: 'linear' (bilinear/trilinear for 2/3 dims), 'nearest', 'nearest-exact'."""
    if not isinstance(size, (tuple, list)) or not all_int(size) or not 0 < len(size) <= self.ndim: raise ValueError(f"interpolate: bad size {size} for shape {self.shape}")
    if mode not in ("linear", "nearest", "nearest-exact"): raise ValueError(f"interpolate: mode {mode!r} is not one of linear, nearest, nearest-exact")
    if align_corners and mode != "linear": raise ValueError("interpolate: align_corners only applies to mode='linear'")
    # uint8 stays uint8: its lerp is the fixed-point blend torch's uint8 resize uses (other ints go through float)
    x, shape = self._float() if mode == "linear" and self.dtype != dtypes.uint8 else self, list(self.shape)
    for i in range(-1, -len(size) - 1, -1):
      n, m = self.shape[i], size[i]
      scale = (n - 1) / (m - 1) if align_corners and m > 1 else 0.0 if align_corners else n / m
      j = type(self).arange(m, dtype=dtypes.float32, device=self.device)
      view = [1] * self.ndim
      view[i] = shape[i] = m
      if mode == "linear":
        src = (j * scale if align_corners else (j + 0.5) * scale - 0.5).clip(0, n - 1)
        lo, hi = src.floor(), src.ceil()
        lo_i, hi_i = (t.cast(dtypes.int32).reshape(view).expand(shape) for t in (lo, hi))
        frac = (src - lo).reshape(view)
        if x.dtype == dtypes.uint8:
          lo_l, w_l, bits = _u8_weights(n, m, align_corners)
          lo_i = type(self)(lo_l, dtype=dtypes.int32, device=self.device).reshape(view).expand(shape)
          hi_i = (lo_i + 1).minimum(n - 1)
          x = x.gather(i, lo_i)._lerp_u8(x.gather(i, hi_i), type(self)(w_l, dtype=dtypes.int32, device=self.device).reshape(view), bits)
        else: x = x.gather(i, lo_i).lerp(x.gather(i, hi_i), frac.cast(x.dtype))
      else:
        src = ((j + 0.5) * scale if mode == "nearest-exact" else j * scale).floor().clip(0, n - 1)
        x = x.gather(i, src.cast(dtypes.int32).reshape(view).expand(shape))
    return x.cast(self.dtype) if mode == "linear" else x

  # ----- advanced (tensor) indexing
  def _as_index(self: Tensor, i: Any) -> Tensor:
    if isinstance(i, type(self)):
      if not dtypes.is_int(i.dtype): raise IndexError(f"tensor indices must be integers, got {i.dtype} (a bool mask: use masked_select)")
      return i
    from tinygrad.tensor import _flat
    flat = _flat(i)
    if flat and all(isinstance(v, bool) for v in flat): raise IndexError(f"a list of bools {i!r} is not supported as an index (use masked_select)")
    if not all(isinstance(v, int) for v in flat): raise IndexError(f"index {i!r} holds something that is not an int")
    return type(self)(i, dtype=dtypes.int32, device=self.device)
  def _fancy_index(self: Tensor, idx: tuple) -> Tensor:
    """numpy/torch advanced indexing: ints, slices and None apply first; then the tensor (or list) indices, broadcast
    together to B, pick elements through one one-hot comparison over their dims flattened into one. The B dims stand
    where the tensor indices stood when those are next to each other, else first (torch's rule). Out of range reads 0."""
    from tinygrad.tensor import _broadcast_shape
    if sum(i is Ellipsis for i in idx) > 1: raise IndexError("an index can only have a single ellipsis")
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if (k := next((j for j, i in enumerate(idx) if i is Ellipsis), None)) is not None:  # `in` would compare tensors with ==
      idx = idx[:k] + (slice(None),) * (self.ndim - n_real) + idx[k + 1:]
    basic, tensors, pos = [], [], 0
    for i in idx:
      if isinstance(i, (type(self), list, tuple)): tensors.append((pos, self._as_index(i))); basic.append(slice(None)); pos += 1
      else:
        basic.append(i)
        if not isinstance(i, int) or isinstance(i, bool): pos += 1
    x = self[tuple(basic)]
    dims = [d for d, _ in tensors]
    sizes = [x.shape[d] for d in dims]
    ts = [(t < 0).where(t + n, t) for (_, t), n in zip(tensors, sizes)]
    try: B = _broadcast_shape(*(t.shape for t in ts))
    except ValueError as e: raise IndexError(f"tensor indices cannot broadcast together: {e}") from None
    if (P := prod(sizes)) > 2**31 - 1: return x._index_past_32_bits(dims, sizes, ts, B)
    if len(ts) == 1: lin = ts[0]
    else:  # one index into the indexed dims flattened; a component out of its range must not alias another element
      lin, valid = ts[0] * 0, None
      for t, n, st in zip(ts, sizes, strides_for_shape(tuple(sizes))):
        lin = lin + t * st
        ok = (t >= 0) & (t < n)
        valid = ok if valid is None else valid & ok
      lin = valid.where(lin, -1)  # type: ignore[union-attr]
    # an int64 index (numpy's default) is compared as int32, the arange's dtype: against a cast of the arange the
    # compare-and-sum would not fold into one load (lowerer._onehot_sum); out of range stays out of range, no wrap
    if lin.dtype != dtypes.int32: lin = ((lin >= 0) & (lin < P)).where(lin, -1).cast(dtypes.int32)
    rest = [d for d in range(x.ndim) if d not in dims]
    rest_shape = tuple(x.shape[d] for d in rest)
    xp = x.permute(dims + rest).reshape((P,) + rest_shape)
    onehot = lin._broadcast_to(B).unsqueeze(-1) == type(self).arange(P, device=self.device)  # (*B, P)
    out = onehot.reshape(B + (P,) + (1,) * len(rest)).where(xp.reshape((1,) * len(B) + (P,) + rest_shape), 0).sum(len(B), dtype=self.dtype)
    if dims != list(range(dims[0], dims[0] + len(dims))) or dims[0] == 0: return out  # B first
    nb = len(B)
    return out.permute([nb + j for j in range(dims[0])] + list(range(nb)) + [nb + j for j in range(dims[0], len(rest))])

  def _index_past_32_bits(self: Tensor, dims: list[int], sizes: list[int], ts: list[Tensor], B: tuple[int, ...]) -> Tensor:
    """Tensor indices into dims of more than 2**31-1 places together (tinygrad's test_tensor_index_overflow indexes
    Tensor([1]).expand(2**31 + 3)): this engine's kernels index with 32 bits. A dim that is a broadcast of size 1 reads
    its one element whatever the index: the source is indexed at 0 there (the others as given), every index out of
    range pointed out of the source's (reading 0), then broadcast back. Past 32 bits without such dims: an IndexError
    saying so, not a wrapped position."""
    u = self.uop
    src = u.src[0].shape if u.op is Ops.EXPAND else self.shape
    if prod(src[d] for d in dims) > 2**31 - 1:
      raise IndexError(f"tensor indices into dims {dims} of shape {self.shape}: {prod(sizes):,} places together, past the 2**31-1 "
                       "this engine's 32-bit kernel indices reach; index a smaller tensor (or fewer dims at once)")
    ok = None
    for t, n in zip(ts, sizes): ok = (c := (t >= 0) & (t < n)) if ok is None else ok & c
    at = {d: ok.where(0 if src[d] == 1 else t, src[d]).cast(dtypes.int32) for d, t in zip(dims, ts)}  # type: ignore[union-attr]
    out = self._new(u.src[0])._fancy_index(tuple(at.get(d, slice(None)) for d in range(self.ndim)))
    rest = tuple(s for d, s in enumerate(self.shape) if d not in dims)
    first = dims != list(range(dims[0], dims[0] + len(dims))) or dims[0] == 0  # where the B dims go, as _fancy_index
    return out.expand(B + rest if first else rest[:dims[0]] + B + rest[dims[0]:])

  # ----- slice assignment
  def _place(self: Tensor, v: Tensor, idx) -> tuple[Tensor, Tensor]:
    """v (shaped like self[idx]) moved to where self[idx] reads, and the mask of those places; movement ops only."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if Ellipsis in idx:
      k = idx.index(Ellipsis)
      idx = idx[:k] + (slice(None),) * (self.ndim - n_real) + idx[k + 1:]
    idx = idx + (slice(None),) * (self.ndim - sum(1 for i in idx if i is not None))
    # per real dim: (first position, count, step); an int is a count-1 slice, and None dims vanish from v
    plan, shape = [], []
    for i in (i for i in idx if i is not None):
      d = len(plan)
      if isinstance(i, int):
        plan.append((i + self.shape[d] if i < 0 else i, 1, 1)); shape.append(1)
      else:
        start, _, step = i.indices(self.shape[d])
        cnt = len(range(*i.indices(self.shape[d])))
        plan.append((start, cnt, step)); shape.append(cnt)
    v = v.reshape(shape)
    ones = type(self).full(tuple(shape), True, dtypes.bool, self.device)
    for d, (start, cnt, step) in enumerate(plan):
      if step < 0:  # walk the same places upwards
        v, ones = v.flip(d), ones.flip(d)
        start, step = start + (cnt - 1) * step, -step
      if step > 1 and cnt > 0:  # spread out: every step-th place
        def spread(t, d=d, cnt=cnt, step=step):
          t = t.unsqueeze(d + 1).pad(tuple((0, step - 1) if k == d + 1 else None for k in range(t.ndim + 1)))
          return t.flatten(d, d + 1).shrink(tuple((0, (cnt - 1) * step + 1) if k == d else None for k in range(t.ndim)))
        v, ones = spread(v), spread(ones)
      pad = tuple((start, self.shape[d] - start - v.shape[d]) if k == d else None for k in range(self.ndim))
      v, ones = v.pad(pad), ones.pad(pad)
    return v, ones
  def _scatter_items(self: Tensor, v: Tensor, indices) -> Tensor:
    """self with v (shaped like self[indices]) written where self[indices] reads: the same indexing applied to the
    1-based flat positions says where each value goes (0: out of range, nowhere); a one-hot over them places it."""
    n = self.numel()
    dest = (type(self).arange(1, n + 1, device=self.device).reshape(self.shape)[indices]).flatten()  # (J,)
    hit = dest.unsqueeze(1) == type(self).arange(1, n + 1, device=self.device).unsqueeze(0)  # (J, n)
    j = type(self).arange(dest.numel(), device=self.device).unsqueeze(1)
    last = hit & (j == hit.where(j, -1).max(0, keepdim=True))  # the last writer of each place
    vals = last.where(v.flatten().unsqueeze(1), v.zeros_like().flatten().unsqueeze(1)).sum(0, dtype=self.dtype)
    return hit.any(0).reshape(self.shape).where(vals.reshape(self.shape), self)
  def _can_scatter(self: Tensor, v: Tensor) -> bool:
    """A write by the scatter kernel can stand for this one: one device, sizes within 32 bits, no @function body's
    input, no gradient to keep (the one-hot write is differentiable; the scatter realizes its inputs)."""
    if not isinstance(self.device, str) or v.device != self.device or self.numel() + 1 > 2**31 - 1 or v.numel() > 2**31 - 1: return False
    graph = [u for x in (self, v) for u in x.uop.toposort()]
    if any(u.op is Ops.PARAM for u in graph): return False
    return not (dtypes.is_float(self.dtype) and (wants := {t.uop for t in type(self)._live if t.requires_grad}) and any(u in wants for u in graph))
  def _flat_dest(self: Tensor, indices) -> Tensor:
    """(J,) int32: the flat place of self that each element of self[indices] reads, -1 where it reads out of range
    (the 1-based places indexed like self read 0 there)."""
    n = self.numel()
    return type(self).arange(1, n + 1, dtype=dtypes.int32, device=self.device).reshape(self.shape)[indices].flatten() - 1
  def _scatter_in_place(self: Tensor, v: Tensor, indices) -> bool:
    """t[indices] = v as ASSIGN(t, dest, v): a pending in-place write, scheduled as one scatter kernel into t's buffer
    (engine/scatter.py) that costs the values written, no copy of t. For t a realized buffer (a pending assign of t runs
    first, as assign does) or a view of one by reshapes, slices, transposes and flips (`t.T[idx] = v`, `t[1][idx] = v`):
    then dest is the places of the buffer the view's elements are (the same view of the buffer's arange), the tensor
    holding the buffer takes the write and the view is rebuilt on it. False (nothing done) otherwise: _scatter_kernel."""
    from tinygrad.engine.schedule import is_contiguous_view
    T = type(self)
    if not self._can_scatter(v): return False
    # the tensor that holds what self views (t of t.T, t[1], t.reshape(20)): the first node down the view's chain another
    # live tensor holds; none: self itself takes the write
    held: dict[UOp, Tensor] = {}
    for t in T._live:
      if t is not self: held.setdefault(t.uop, t)
    chain, u, holder = [], self.uop, held.get(self.uop)
    while holder is None and u.op in _PLACE_VIEWS + (Ops.DETACH,):
      chain.append(u); u = u.src[0]
      holder = held.get(u)
    if holder is None and is_contiguous_view(u):  # t.reshape(20) may be t's buffer itself: the tensor of another view of it
      holder = next((t for t in held.values() if is_contiguous_view(t.uop) and t.uop.base is u.base), None)
    if holder is None: chain, u, holder = [], self.uop, self
    if u.op is Ops.ASSIGN and u is holder.uop and len(u.src) in (2, 3) and is_contiguous_view(u.src[0]):  # a write pending: it runs first, as in assign
      T.realize_all([holder], with_pending_assigns=False, share=False)
      v, u = T(v.uop.substitute({u: holder.uop})), holder.uop  # v read the write just done; left in v's graph it would run again
    if not is_contiguous_view(u) or u.base.op is not Ops.BUFFER: return False
    if holder.uop in T._shared and any(t is not holder and t.uop is holder.uop for t in T._live): return False  # see assign
    if chain:  # the places of u that self's elements are
      pos = T.arange(1, prod(u.shape) + 1, dtype=dtypes.int32, device=self.device).reshape(u.shape).uop
      for m in reversed(chain): pos = UOp(m.op, dtypes.int32, (pos,), m.arg)
      dest = T(pos)[indices].flatten() - 1
    else: dest = self._flat_dest(indices)
    holder.uop = UOp(Ops.ASSIGN, self.dtype, (holder.uop, dest.uop, v.flatten().uop))
    T._pending_assigns.add(holder)
    if holder is not self:  # the view, rebuilt on the write
      cur = holder.uop if holder.uop.shape == u.shape else UOp(Ops.RESHAPE, self.dtype, (holder.uop,), u.shape)
      for m in reversed(chain): cur = m.replace(src=(cur,))
      self.uop = cur
    return True
  def _settle_pending(self: Tensor, *vs: Tensor) -> tuple[Tensor, ...]:
    """Assigns pending in self's or vs' graphs (t[:2][idx] = v after t += 1) run now, through the tensors holding them,
    and the graphs read their buffers: realized only inside an eager scatter's graph they would run again later, and a
    view's base would no longer be the tensor that holds it (the write back through the view would miss t)."""
    T = type(self)
    inside = {u for x in (self, *vs) for u in x.uop.toposort() if u.op is Ops.ASSIGN}
    if not inside or not (holders := [t for t in T._pending_assigns if t.uop in inside]): return vs
    old = [t.uop for t in holders]
    T.realize_all(holders, with_pending_assigns=False)
    done = dict(zip(old, (t.uop for t in holders)))
    self.uop = self.uop.substitute(done)
    return tuple(T(v.uop.substitute(done)) for v in vs)
  def _scatter_copy(self: Tensor, dest: Tensor, vals: Tensor, combine: Any = None) -> Tensor:
    """A copy of self (with a spare place after its end: a fresh buffer) and, by one scatter kernel (codegen/scatter.py),
    vals[j] stored at flat place dest[j] (-1: nowhere) for each j in order, or combined with what is there (combine:
    Ops.ADD, Ops.MUL, Ops.MAX or "min"). Realizes now (as a .realize() would): a copy of self and J loads and stores."""
    T, n = type(self), self.numel()
    out, d, vals = self.flatten().pad(((0, 1),)).contiguous(), dest.cast(dtypes.int32).contiguous(), vals.flatten().contiguous()
    T.realize_all([out, d, vals], with_pending_assigns=False)
    if (ob := out.uop).op is not Ops.BUFFER: raise RuntimeError(f"scatter: the copy is {ob.op}, not a buffer (please report this)")
    if vals.numel():
      from tinygrad.engine.schedule import ScheduleItem
      from tinygrad.engine.realize import run_schedule
      run_schedule([ScheduleItem("kernel", UOp(Ops.SINK, src=(UOp(Ops.STORE, src=(ob, d.uop, vals.uop), arg=combine),)), (ob,))])
    return out.shrink(((0, n),)).reshape(self.shape)
  def _scatter_kernel(self: Tensor, v: Tensor, indices) -> Tensor | None:
    """self with v (shaped like self[indices]) written where self[indices] reads (_scatter_copy): of two values for one
    place the last stays (numpy, tinygrad); an index out of range writes nothing. None where it can't: a multi-device
    tensor, a @function body's input, sizes past 32 bits, a gradient to keep (the one-hot is differentiable)."""
    if not self._can_scatter(v): return None
    (v,) = self._settle_pending(v)
    return self._scatter_copy(self._flat_dest(indices), v)
  def __setitem__(self: Tensor, indices, v) -> None:
    """t[idx] = v with int, slice, None, ... and tensor/list indices: in place (an assign) on a realized tensor, as in
    tinygrad. With tensor indices a place named twice gets the last value written there."""
    idx = indices if isinstance(indices, tuple) else (indices,)
    if isinstance(v, type(self)) and v.dtype != self.dtype: raise RuntimeError(f"setitem dtype mismatch: tensor is {self.dtype}, value is {v.dtype}")
    view = self[indices]  # checks the indices and gives the target shape
    vt = (v if isinstance(v, type(self)) else type(self).full((), v, self.dtype, self.device))._broadcast_to(view.shape)
    if any(isinstance(i, (type(self), list, tuple)) for i in idx):
      if self._scatter_in_place(vt, indices): return
      if (out := self._scatter_kernel(vt, indices)) is None: out = self._scatter_items(vt, indices)
    else:
      placed, mask = self._place(vt, indices)
      out = mask.where(placed, self)
    # a realized tensor (or one with an assign pending) is written in place; a lazy one just gets the new graph
    base = self.uop
    while base.op is Ops.DETACH: base = base.src[0]  # a detached tensor shares its buffer: written in place too
    if (base.op is Ops.ASSIGN or is_contiguous_view(base) or _buffer_view(base)) and not self.requires_grad: self.assign(out)
    else: self.replace(out)
