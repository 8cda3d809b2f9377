"""Layers, as tinygrad users write them: plain classes holding Tensors, called like functions."""
from __future__ import annotations
import math
from tinygrad.tensor import Tensor
from tinygrad.dtype import dtypes
from tinygrad.helpers import prod
from tinygrad.nn import optim, state  # noqa: F401  (tinygrad exposes nn.optim and nn.state)

class Linear:
  def __init__(self, in_features: int, out_features: int, bias: bool = True):
    bound = 1 / math.sqrt(in_features)
    self.weight = Tensor.uniform(out_features, in_features, low=-bound, high=bound)
    self.bias = Tensor.uniform(out_features, low=-bound, high=bound) if bias else None
  def __call__(self, x: Tensor) -> Tensor: return x.linear(self.weight.transpose(), self.bias)

def _same_padding(padding: str, kernel_size: tuple[int, ...], stride, dilation) -> tuple[int, ...]:
  """padding='same' (as torch and tinygrad): the output keeps the input's size; an odd total pad puts the extra one after.
  Flat torch order, the last dim's (before, after) first."""
  if padding.lower() != "same": raise ValueError(f"padding {padding!r}: the only padding string is 'same'")
  if any(s != 1 for s in ((stride,) * len(kernel_size) if isinstance(stride, int) else stride)):
    raise ValueError(f"padding='same' needs stride 1, got stride={stride!r}")
  dil = (dilation,) * len(kernel_size) if isinstance(dilation, int) else tuple(dilation)
  return tuple(v for d, k in zip(reversed(dil), reversed(kernel_size)) for v in (d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2))

class Conv2d:
  def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1, bias: bool = True):
    self.kernel_size = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    if isinstance(padding, str): padding = _same_padding(padding, self.kernel_size, stride, dilation)
    self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
    bound = 1 / math.sqrt(in_channels // groups * prod(self.kernel_size))
    self.weight = Tensor.uniform(out_channels, in_channels // groups, *self.kernel_size, low=-bound, high=bound)
    self.bias = Tensor.uniform(out_channels, low=-bound, high=bound) if bias else None
  def __call__(self, x: Tensor) -> Tensor:
    return x.conv2d(self.weight, self.bias, groups=self.groups, stride=self.stride, dilation=self.dilation, padding=self.padding)

def Conv1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding=0, dilation=1, groups: int = 1, bias: bool = True) -> Conv2d:
  """A Conv2d with a 1-d kernel: weight (out, in // groups, k), input (N, C, L)."""
  return Conv2d(in_channels, out_channels, (kernel_size,) if isinstance(kernel_size, int) else tuple(kernel_size), stride, padding, dilation, groups, bias)

class ConvTranspose2d(Conv2d):
  """weight is (in, out // groups, kh, kw), as in torch and tinygrad."""
  def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, dilation=1, groups: int = 1, bias: bool = True):
    super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)
    bound = 1 / math.sqrt(out_channels // groups * prod(self.kernel_size))
    self.weight = Tensor.uniform(in_channels, out_channels // groups, *self.kernel_size, low=-bound, high=bound)
    self.output_padding = output_padding
  def __call__(self, x: Tensor) -> Tensor:
    return x.conv_transpose2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding, self.output_padding)

def ConvTranspose1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding=0, output_padding=0, dilation=1, groups: int = 1,
                    bias: bool = True) -> ConvTranspose2d:
  return ConvTranspose2d(in_channels, out_channels, (kernel_size,) if isinstance(kernel_size, int) else tuple(kernel_size), stride, padding, output_padding,
                         dilation, groups, bias)

class BatchNorm:
  """Batch normalisation over dim 1. Tensor.training (or Context(TRAINING=1)) picks batch statistics and updates the
  running ones; otherwise the running statistics are used."""
  def __init__(self, sz: int, eps: float = 1e-5, affine: bool = True, track_running_stats: bool = True, momentum: float = 0.1):
    self.eps, self.track_running_stats, self.momentum = eps, track_running_stats, momentum
    # requires_grad=True: a constant init is a UOp every same-shaped constant shares; a parameter needs its own buffer
    self.weight: Tensor | None = Tensor.ones(sz, requires_grad=True) if affine else None
    self.bias: Tensor | None = Tensor.zeros(sz, requires_grad=True) if affine else None
    self.num_batches_tracked = Tensor.zeros(1, dtype=dtypes.int32, requires_grad=False)
    if track_running_stats: self.running_mean, self.running_var = Tensor.zeros(sz, requires_grad=False), Tensor.ones(sz, requires_grad=False)
  def __call__(self, x: Tensor) -> Tensor:
    axes = tuple(i for i in range(x.ndim) if i != 1)
    if Tensor.training or not self.track_running_stats:
      mean = x.mean(axes)
      var = (x - mean.reshape(1, -1, *[1] * (x.ndim - 2))).square().mean(axes)
      if Tensor.training and self.track_running_stats:
        n = prod(x.shape) // x.shape[1]
        self.running_mean.assign((1 - self.momentum) * self.running_mean + self.momentum * mean.detach())
        self.running_var.assign((1 - self.momentum) * self.running_var + self.momentum * var.detach() * (n / max(n - 1, 1)))
        self.num_batches_tracked.assign(self.num_batches_tracked + 1)
    else: mean, var = self.running_mean, self.running_var
    return x.batchnorm(self.weight, self.bias, mean, (var + self.eps).rsqrt())
BatchNorm2d = BatchNorm1d = BatchNorm3d = BatchNorm

class LayerNorm:
  def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True):
    self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    self.axis, self.eps = tuple(-1 - i for i in range(len(self.normalized_shape))), eps
    self.weight = Tensor.ones(*self.normalized_shape, requires_grad=True) if elementwise_affine else None
    self.bias = Tensor.zeros(*self.normalized_shape, requires_grad=True) if elementwise_affine else None
  def __call__(self, x: Tensor) -> Tensor:
    if x.shape[-len(self.normalized_shape):] != self.normalized_shape: raise ValueError(f"LayerNorm{self.normalized_shape} got input of shape {x.shape}")
    x = x.layernorm(self.axis, self.eps)
    return x if self.weight is None else x * self.weight + self.bias

class LayerNorm2d(LayerNorm):
  """LayerNorm over the channels of an (N, C, H, W) input."""
  def __call__(self, x: Tensor) -> Tensor: return super().__call__(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

class GroupNorm:
  """Normalise each group of channels (and the spatial dims) of an (N, C, ...) input, then scale and shift per channel."""
  def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True):
    self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
    self.weight: Tensor | None = Tensor.ones(num_channels, requires_grad=True) if affine else None
    self.bias: Tensor | None = Tensor.zeros(num_channels, requires_grad=True) if affine else None
  def __call__(self, x: Tensor) -> Tensor:
    if x.ndim < 2 or x.shape[1] != self.num_channels: raise ValueError(f"GroupNorm({self.num_channels}) got input of shape {x.shape}")
    # as tinygrad: a group is a 1/num_groups slice of each sample's channels*spatial values (part of a channel if need be)
    if prod(x.shape[1:]) % self.num_groups: raise ValueError(f"GroupNorm: {x.shape[1:]} (channels, spatial) doesn't split into {self.num_groups} groups")
    x = x.reshape(x.shape[0], self.num_groups, -1).layernorm(eps=self.eps).reshape(x.shape)
    if self.weight is None: return x
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return x * self.weight.reshape(shape) + self.bias.reshape(shape)  # type: ignore[union-attr]

class InstanceNorm(GroupNorm):
  """GroupNorm with one channel per group."""
  def __init__(self, num_features: int, eps: float = 1e-5, affine: bool = True): super().__init__(num_features, num_features, eps, affine)

class RMSNorm:
  def __init__(self, dim: int, eps: float = 1e-6, elementwise_affine: bool = True):
    self.eps = eps
    self.weight: Tensor | None = Tensor.ones(dim, requires_grad=True) if elementwise_affine else None
  def __call__(self, x: Tensor) -> Tensor:
    y = x * (x.square().mean(-1, keepdim=True) + self.eps).rsqrt()
    return y if self.weight is None else y * self.weight

class LSTMCell:
  """One step of an LSTM: (x, (h, c)) -> (h', c'); the gates are stacked i, f, g, o as in torch."""
  def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
    bound = 1 / math.sqrt(hidden_size)
    self.weight_ih = Tensor.uniform(hidden_size * 4, input_size, low=-bound, high=bound)
    self.weight_hh = Tensor.uniform(hidden_size * 4, hidden_size, low=-bound, high=bound)
    self.bias_ih: Tensor | None = Tensor.zeros(hidden_size * 4, requires_grad=True) if bias else None
    self.bias_hh: Tensor | None = Tensor.zeros(hidden_size * 4, requires_grad=True) if bias else None
  def __call__(self, x: Tensor, hc: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
    if hc is None: hc = (Tensor.zeros(x.shape[0], self.weight_hh.shape[1], dtype=x.dtype, device=x.device),) * 2
    gates = x.linear(self.weight_ih.T, self.bias_ih) + hc[0].linear(self.weight_hh.T, self.bias_hh)
    i, f, g, o = gates.chunk(4, dim=1)
    c = f.sigmoid() * hc[1] + i.sigmoid() * g.tanh()
    return (o.sigmoid() * c.tanh()).contiguous(), c.contiguous()

class Embedding:
  def __init__(self, vocab_size: int, embed_size: int):
    self.vocab_sz, self.embed_sz = vocab_size, embed_size
    self.weight = Tensor.glorot_uniform(vocab_size, embed_size)
  def __call__(self, idx: Tensor) -> Tensor:
    if not idx.shape: return self(idx.reshape(1)).reshape(self.embed_sz)
    onehot = (idx.unsqueeze(-1) == Tensor.arange(self.vocab_sz, device=idx.device)).cast(self.weight.dtype)
    return onehot @ self.weight
