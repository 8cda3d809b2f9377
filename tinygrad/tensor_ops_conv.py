"""Tensor methods that slide a window over the trailing dims: pooling, convolution and its transpose, unfold, and the
edge-copying pad modes (reflect, replicate, circular). Any number of spatial dims (1-d, 2-d, 3-d, ...), as tinygrad's
conv2d and max_pool2d take them. Windows are movement ops only; the lowering turns them back into index arithmetic."""
from __future__ import annotations
from typing import TYPE_CHECKING, Any
from tinygrad.dtype import dtypes
from tinygrad.helpers import prod, ceildiv, normalize_axis
if TYPE_CHECKING: from tinygrad.tensor import Tensor

def _tuple(v: Any, n: int) -> tuple[int, ...]: return (v,) * n if isinstance(v, int) else tuple(v)

def pool_pads(padding: Any, n: int) -> tuple[int, ...]:
  """A conv/pool padding (an int, one per spatial dim as (h, w, ...), or torch's flat (left, right, top, bottom, ...)) as
  the flat torch order: the last dim's pair first."""
  if isinstance(padding, int): return (padding,) * (2 * n)
  p = tuple(padding)
  if len(p) == 2 * n: return p
  if len(p) == n: return tuple(v for v in reversed(p) for _ in range(2))
  raise ValueError(f"padding must be an int or a sequence of {n} or {2 * n} ints for {n} spatial dims, got {padding!r}")

def grouped(flat: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
  """Flat torch-order pads as (before, after) per dim, first dim first."""
  return tuple((flat[i], flat[i + 1]) for i in range(len(flat) - 2, -1, -2))

def _flat(pairs) -> tuple[int, ...]: return tuple(v for pr in reversed(pairs) for v in pr)

class ConvOps:
  """Mixed into Tensor (see tensor.py)."""
  __slots__ = ()

  # ----- windows
  def _pool(self: Tensor, k: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...]) -> Tensor:
    """Sliding windows of the last len(k) dims as movement ops only: (..., H, W) -> (..., oh, ow, kh, kw).
    Repeat each row e times and re-read it with rows of length H+d: row r then starts r*d further along, so
    element (r, c*s) is x[r*d + c*s]. The lowering turns this back into plain index arithmetic."""
    nk = len(k)
    pre, spatial = self.shape[:-nk], self.shape[-nk:]
    o = [(n - d * (kk - 1) - 1) // s + 1 for n, kk, s, d in zip(spatial, k, stride, dilation)]
    if any(x <= 0 for x in o) or any(d * (kk - 1) + 1 > n for n, kk, d in zip(spatial, k, dilation)):
      raise RuntimeError(f"kernel {tuple(k)} with dilation {tuple(dilation)} is larger than the input's spatial size {tuple(spatial)}")
    x, n_pre = self, len(pre)
    for axis, (n, kk, s, d, oo) in enumerate(zip(spatial, k, stride, dilation, o)):
      ax = n_pre + 2 * axis  # the dim being windowed: earlier windowed dims became (o, k) pairs
      shp = x.shape
      if kk == 0:  # an empty window: nothing to read, just the shape
        x = x.shrink(tuple((0, 0) if i == ax else None for i in range(x.ndim))).reshape(shp[:ax] + (oo, 0) + shp[ax + 1:])
        continue
      e = ceildiv(kk * (n + d), n)
      x = x.reshape(shp[:ax] + (1, n) + shp[ax + 1:]).expand(shp[:ax] + (e, n) + shp[ax + 1:]).reshape(shp[:ax] + (e * n,) + shp[ax + 1:])
      x = x.shrink(tuple((0, kk * (n + d)) if i == ax else None for i in range(x.ndim))).reshape(shp[:ax] + (kk, n + d) + shp[ax + 1:])
      row = x.shape[ax + 1]
      x = x.pad(tuple((0, oo * s - row) if i == ax + 1 and oo * s > row else None for i in range(x.ndim)))
      x = x.shrink(tuple((0, oo * s) if i == ax + 1 else None for i in range(x.ndim)))
      x = x.reshape(x.shape[:ax + 1] + (oo, s) + x.shape[ax + 2:]).shrink(tuple((0, 1) if i == ax + 2 else None for i in range(x.ndim + 1)))
      x = x.reshape(x.shape[:ax + 2] + x.shape[ax + 3:])  # (..., k, o, ...)
      x = x.transpose(ax, ax + 1)                           # (..., o, k, ...)
    # (..., o1, k1, o2, k2, ...) -> (..., o1, o2, ..., k1, k2, ...)
    return x.permute(tuple(range(n_pre)) + tuple(n_pre + 2 * i for i in range(nk)) + tuple(n_pre + 2 * i + 1 for i in range(nk)))
  def unfold(self: Tensor, dim: int, size: int, step: int) -> Tensor:
    """Windows of `size` elements every `step` along `dim`: that dim becomes the window count, the window is a new last dim."""
    if size < 0: raise RuntimeError(f"unfold: size must be >= 0, got {size}")
    if step <= 0: raise RuntimeError(f"unfold: step must be > 0, got {step}")
    d = normalize_axis(dim, self.ndim)
    if size > self.shape[d]: raise RuntimeError(f"unfold: size {size} is larger than dim {d} of size {self.shape[d]}")
    order = tuple(i for i in range(self.ndim) if i != d) + (d,)
    w = self.permute(order)._pool((size,), (step,), (1,))  # (..rest, o, size)
    back = [0] * self.ndim
    for pos, i in enumerate(order): back[i] = pos
    return w.permute(tuple(back) + (self.ndim,))
  def _pool_args(self: Tensor, kernel_size, stride, dilation, padding) -> tuple[tuple[int, ...], ...]:
    k = _tuple(kernel_size, 2)
    if len(k) > self.ndim: raise ValueError(f"a {len(k)}-d window does not fit a tensor of shape {self.shape}")
    s, d = _tuple(stride if stride is not None else k, len(k)), _tuple(dilation, len(k))
    if not len(k) == len(s) == len(d): raise ValueError(f"kernel {k}, stride {s} and dilation {d} need one entry per spatial dim")
    return k, s, d, pool_pads(padding, len(k))
  @staticmethod
  def _check_pool_pads(name: str, k, d, pads) -> None:
    for (pb, pa), kk, dd in zip(grouped(pads), k, d):
      if max(pb, pa) > (dd * (kk - 1) + 1) // 2:
        raise ValueError(f"{name}: padding {max(pb, pa)} is more than half the window ({kk} with dilation {dd}); every window must hold input")
  def _ceil_pads(self: Tensor, pads, k, s, d) -> tuple[int, ...]:
    """Padding after that makes the floor-mode window count equal ceil mode's: a last partial window is kept, unless it
    would start in the padding after the input (torch's rule)."""
    out = []
    for (pb, pa), n, kk, ss, dd in zip(grouped(pads), self.shape[-len(k):], k, s, d):
      eff = dd * (kk - 1) + 1
      o = ceildiv(n + pb + pa - eff, ss) + 1
      if (o - 1) * ss >= n + pb: o -= 1
      out.append((pb, (o - 1) * ss + eff - n - pb))
    return _flat(out)
  def _pad_spatial(self: Tensor, pads: tuple[int, ...], value: Any = 0.0) -> Tensor:
    return self if not any(pads) else self.pad(pads, value=value)

  # ----- pooling
  def max_pool2d(self: Tensor, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode: bool = False, return_indices: bool = False):
    """Max over windows of the last len(kernel_size) dims (any number). return_indices also gives each max's index into
    the flattened spatial dims (the first one of a tie), for max_unpool2d."""
    k, s, d, pads = self._pool_args(kernel_size, stride, dilation, padding)
    type(self)._check_pool_pads("max_pool2d", k, d, pads)
    if ceil_mode: pads = self._ceil_pads(pads, k, s, d)
    axes = tuple(range(-len(k), 0))
    spatial = self.shape[-len(k):]
    x = self._pad_spatial(pads, value=dtypes.min(self.dtype))
    if not return_indices and s == k and all(v == 1 for v in d) and all(n % kk == 0 for n, kk in zip(x.shape[-len(k):], k)):
      # non-overlapping windows: one reduction over a reshape
      shp = x.shape[:-len(k)] + tuple(v for n, kk in zip(x.shape[-len(k):], k) for v in (n // kk, kk))
      return x.reshape(shp).max(tuple(-2 * len(k) + 2 * i + 1 for i in range(len(k))))
    w = x._pool(k, s, d)
    out = w.max(axes)
    if not return_indices: return out
    n = prod(spatial)
    # n - i for each position i (0 in the padding, so it never wins): the first max is where this is largest
    rev = (n - type(self).arange(n, device=self.device)).reshape(spatial)._pad_spatial(pads, value=0)._pool(k, s, d)
    hit = w == out.reshape(out.shape + (1,) * len(k))
    return out, (n - hit.where(rev, 0).max(axes)).cast(dtypes.int32)
  def max_unpool2d(self: Tensor, indices: Tensor, kernel_size=(2, 2), stride=None, dilation=1, padding=0, output_size=None) -> Tensor:
    """Undo max_pool2d(return_indices=True): each value goes back to where its index says, everything else is 0."""
    if self.ndim < 3 or indices.shape != self.shape: raise ValueError(f"max_unpool2d: values {self.shape} and indices {indices.shape} must match, (N, C, *spatial)")
    bs, c, *spatial = self.shape
    if output_size is None:
      k = _tuple(kernel_size, len(spatial))
      s, d = _tuple(stride if stride is not None else k, len(spatial)), _tuple(dilation, len(spatial))
      out = tuple((i - 1) * ss - (pb + pa) + dd * (kk - 1) + 1 for i, kk, ss, dd, (pb, pa) in zip(spatial, k, s, d, grouped(pool_pads(padding, len(spatial)))))
    else: out = tuple(output_size)[-len(spatial):]
    n = prod(out)
    hit = indices.reshape(bs, c, -1, 1) == type(self).arange(n, device=self.device)  # (N, C, L, n)
    # overlapping windows can name one place twice, always with the same value: take it once (max), not their sum
    picked = hit.where(self.reshape(bs, c, -1, 1), dtypes.min(self.dtype)).max(2)
    return hit.any(2).where(picked, 0).reshape(bs, c, *out)
  def avg_pool2d(self: Tensor, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """Mean over windows of the last len(kernel_size) dims (any number). count_include_pad=False divides by the input
    elements in each window only; ceil_mode's extra windows never count the padding they add."""
    k, s, d, pads = self._pool_args(kernel_size, stride, dilation, padding)
    type(self)._check_pool_pads("avg_pool2d", k, d, pads)
    full = self._ceil_pads(pads, k, s, d) if ceil_mode else pads
    axes = tuple(range(-len(k), 0))
    w = self._pad_spatial(full)._pool(k, s, d)
    if count_include_pad and not ceil_mode: return w.mean(axes)
    ones = type(self).ones(*self.shape[-len(k):], device=self.device)
    if count_include_pad: ones = ones._pad_spatial(pads, value=1.0)._pad_spatial(tuple(f - p for f, p in zip(full, pads)))
    else: ones = ones._pad_spatial(full)
    return w.sum(axes) / ones._pool(k, s, d).sum(axes)

  # ----- convolutions
  def conv2d(self: Tensor, weight: Tensor, bias: Tensor | None = None, groups: int = 1, stride=1, dilation=1, padding=0, dtype=None) -> Tensor:
    """Convolution over the trailing dims (N, C, *spatial) with weight (cout, C // groups, *kernel): 1-d, 2-d, 3-d, ...
    padding: an int, one per spatial dim, or torch's flat (left, right, top, bottom, ...); negative values crop."""
    nd = weight.ndim - 2
    if nd < 1 or self.ndim != weight.ndim: raise ValueError(f"conv2d needs input (N, C, *spatial) and weight (cout, cin, *kernel) of the same rank, got {self.shape} and {weight.shape}")
    (N, cin), (cout, cin_g), K = self.shape[:2], weight.shape[:2], weight.shape[2:]
    if cin != cin_g * groups or cout % groups: raise ValueError(f"conv2d: input has {cin} channels, weight {weight.shape} with groups={groups} expects {cin_g * groups}")
    s, d, pads = _tuple(stride, nd), _tuple(dilation, nd), pool_pads(padding, nd)
    # the padded input is its own buffer: the convolution (and its weight gradient) then reads whole rows with no
    # per-element bounds check, which lets the CPU renderer load them as vectors
    xp = self._pad_spatial(pads)
    x = (xp.contiguous() if xp is not self else xp)._pool(K, s, d)  # (N, cin, *o, *K)
    o = x.shape[2:2 + nd]
    x = x.reshape(N, groups, 1, cin_g, *o, *K)
    w = weight.reshape(1, groups, cout // groups, cin_g, *(1,) * nd, *K)
    out = (x * w).sum((3,) + tuple(range(4 + nd, 4 + 2 * nd)), dtype=dtype).reshape(N, cout, *o)  # one reduction over channels and window
    if groups == 1 and all(v == 1 for v in s + d): out._conv_vjp(self, weight, x, pads)
    return out + bias.reshape(1, cout, *(1,) * nd) if bias is not None else out
  def _conv_vjp(self: Tensor, inp: Tensor, weight: Tensor, windows: Tensor, pads: tuple[int, ...]) -> None:
    """Gradients of a stride-1 convolution as a whole (gradient.custom_vjp): the input's is another convolution (the
    flipped kernel over the padded gradient), not the op-by-op derivative, a windowed tensor prod(kernel) times the
    input's size then summed back into the image; the weight's is the usual sum of windows times gradient."""
    from tinygrad.gradient import custom_vjp
    nd = weight.ndim - 2
    (N, cin), cout, K = inp.shape[:2], weight.shape[0], weight.shape[2:]
    o = windows.shape[-2 * nd:-nd]
    back = _flat(tuple((kk - 1 - pb, kk - 1 - pa) for kk, (pb, pa) in zip(K, grouped(pads))))
    if min(back) < 0: return  # padding wider than the kernel: the op-by-op derivative handles it
    def vjp(g: Tensor) -> tuple[Tensor, Tensor]:
      dx = g.conv2d(weight.flip(tuple(range(2, 2 + nd))).transpose(0, 1), padding=back)
      dw = (windows.reshape(N, 1, cin, *o, *K) * g.reshape(N, cout, 1, *o, *(1,) * nd)).sum((0,) + tuple(range(3, 3 + nd)))
      return dx, dw
    custom_vjp[self.uop] = ((inp.uop, weight.uop), vjp)  # holds the inputs, not self.uop: the entry dies with the graph
  def conv_transpose2d(self: Tensor, weight: Tensor, bias: Tensor | None = None, groups: int = 1, stride=1, dilation=1, padding=0, output_padding=0) -> Tensor:
    """The gradient of conv2d with respect to its input, as a layer: weight is (cin, cout // groups, *kernel); any
    number of spatial dims."""
    nd = weight.ndim - 2
    if nd < 1 or self.ndim != weight.ndim: raise ValueError(f"conv_transpose2d needs input and weight of the same rank, got {self.shape} and {weight.shape}")
    (N, cin, *S), (cin_w, cout_g, *K) = self.shape, weight.shape
    if cin != cin_w or cin % groups: raise ValueError(f"conv_transpose2d: input has {cin} channels, weight {weight.shape} with groups={groups} expects {cin_w}")
    s, d, op = _tuple(stride, nd), _tuple(dilation, nd), _tuple(output_padding, nd)
    p = grouped(pool_pads(padding, nd))
    x = self
    for i, (n, si) in enumerate(zip(S, s)):  # stride - 1 zeros between input elements: (n) -> (n, 1) -> pad to (n, s) -> (n*s) -> drop the trailing zeros
      if si == 1 or n == 0: continue
      ax = 2 + i
      x = x.unsqueeze(ax + 1).pad(tuple((0, si - 1) if j == ax + 1 else None for j in range(x.ndim + 1))).flatten(ax, ax + 1)
      x = x.shrink(tuple((0, (n - 1) * si + 1) if j == ax else None for j in range(x.ndim)))
    # a plain convolution with the kernel flipped and its in/out channels swapped within each group
    w = weight.reshape(groups, cin // groups, cout_g, *K).transpose(1, 2).flip(tuple(range(3, 3 + nd))).reshape(groups * cout_g, cin // groups, *K)
    pads = _flat(tuple(((kk - 1) * dd - pb, (kk - 1) * dd - pa + o) for kk, dd, (pb, pa), o in zip(K, d, p, op)))
    return x.conv2d(w, bias, groups=groups, dilation=d, padding=pads)

  # ----- pad modes that copy the edges
  def _pad_mode(self: Tensor, pairs: list[tuple[int, int]], mode: str) -> Tensor:
    if mode == "circular":
      if any(b < 0 or a < 0 for b, a in pairs): raise NotImplementedError("pad mode 'circular' with negative padding is not supported")
      for (b, a), n in zip(pairs, self.shape):
        if b > n or a > n: raise ValueError(f"circular padding ({b}, {a}) wraps around more than once for a dim of size {n}")
    x = self
    for dim, (b, a) in enumerate(pairs):
      b, a, n = max(b, 0), max(a, 0), x.shape[dim]
      if not b and not a: continue
      def part(lo: int, hi: int, flip: bool = False, t=x, dim=dim) -> Tensor:
        y = t.shrink(tuple((lo, hi) if i == dim else None for i in range(t.ndim)))
        return y.flip(dim) if flip else y
      if mode == "reflect":
        if b >= n or a >= n: raise ValueError(f"reflect padding ({b}, {a}) must be less than the dim's size {n}")
        before, after = part(1, b + 1, True), part(n - 1 - a, n - 1, True)
      elif mode == "replicate":
        def edge(i: int, cnt: int, t=x, dim=dim) -> Tensor:
          e = t.shrink(tuple((i, i + 1) if j == dim else None for j in range(t.ndim)))
          return e.expand(tuple(cnt if j == dim else s for j, s in enumerate(e.shape)))
        before, after = edge(0, b), edge(n - 1, a)
      else: before, after = part(n - b, n), part(0, a)
      x = type(self).cat(*[t for t, cnt in ((before, b), (x, 1), (after, a)) if cnt], dim=dim)
    # negative pads crop afterwards: reflection and replication see the whole input first
    return x.shrink(tuple((-min(b, 0), s + min(a, 0)) for (b, a), s in zip(pairs, x.shape)))
