"""tinygrad 0.14's random stream, bit for bit: Threefry-2x32 (20 rounds) of a per-device counter. A seeded script
draws the very numbers tinygrad draws (Tensor.manual_seed(0); Tensor.rand(3) is tinygrad's).

How tinygrad derives a draw: each device gets a key (sha256 of the order it was first drawn on, the seed) and a
count of the 32-bit words drawn on it so far. A draw of n words hashes its starting count under the device key into a
new key, then hashes the pairs (i, i + n/2) for i < n/2 under that key; the words are the low halves, then the high
halves. The first hash is done here on the host (one pair): its result is data the kernels read, so every draw of a
size runs the same compiled kernels (the pairs' chain, then the reader of its words: pair_words) and a TinyJit replay only rewrites the key (engine/jit.py)."""
from __future__ import annotations
import hashlib
from typing import Any
from tinygrad.uop.ops import UOp, Ops

M32 = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))

def threefry2x32(x0: Any, x1: Any, k0: Any, k1: Any, wrap=lambda v: v) -> tuple[Any, Any]:
  """Threefry-2x32 of the pair (x0, x1) under key (k0, k1), as tinygrad's THREEFRY: on Python ints (wrap masks to 32
  bits) or on uint32 tensors (which wrap by themselves)."""
  if isinstance(x0, int): return _rounds(x0, x1, k0, k1, wrap)
  # ~125 ops a chain, each a Tensor made and checked (its int graph searched for a bound variable): on _Words, the
  # very UOps those Tensor ops make (hash-consed: the same nodes, so the same kernels), without the Tensors
  from tinygrad.tensor import Tensor
  if len(kinds := {(t.dtype, t.device) for t in (x0, x1, k0, k1)}) != 1:
    raise TypeError(f"threefry2x32: words of one dtype on one device, got {sorted(map(str, kinds))}")
  ctx = _Graph(x0.dtype, x0.device)
  a, b = _rounds(*(_Words(t.uop, t.shape, ctx) for t in (x0, x1, k0, k1)), wrap)
  return Tensor(a.u), Tensor(b.u)

class _Graph:
  """What the words of one chain share: their dtype and device, and the broadcast views made so far (a key's or a
  constant's, used again in every round)."""
  def __init__(self, dtype: Any, device: Any): self.dtype, self.device, self.views, self.consts = dtype, device, {}, {}
  def view(self, u: Any, shape: tuple[int, ...]) -> Any:
    """Tensor._broadcast_to: a RESHAPE adding the missing leading dims, then an EXPAND, each where the shape changes."""
    if (got := self.views.get((u, shape))) is None:
      from tinygrad.tensor import _broadcast_uop
      got = self.views[(u, shape)] = _broadcast_uop(u, shape)
    return got
  def const(self, v: int, shape: tuple[int, ...]) -> Any:
    """A Python int as Tensor's binary ops take it: a constant of the words' dtype on their device, broadcast."""
    if (got := self.consts.get((v, shape))) is None:
      from tinygrad.tensor import _const
      got = self.consts[(v, shape)] = self.view(_const(v, self.dtype, self.device), shape)
    return got

class _Words:
  """A graph of uint32 words under the ops of Threefry's rounds (+, ^, <<, >> with words or a Python int), building
  what Tensor's binary ops build from it (its shape kept here, not asked of each new node)."""
  __slots__ = ("u", "shape", "g")
  def __init__(self, u: Any, shape: tuple[int, ...], g: _Graph): self.u, self.shape, self.g = u, shape, g
  def _bin(self, op: Any, y: Any) -> _Words:
    g, shape = self.g, self.shape
    if not isinstance(y, _Words): src = (self.u, g.const(y, shape))
    elif y.shape == shape: src = (self.u, y.u)
    else:
      from tinygrad.tensor import _broadcast_shape
      shape = _broadcast_shape(shape, y.shape)
      src = (g.view(self.u, shape), g.view(y.u, shape))
    u = UOp(op, g.dtype, src)
    # the node's shape and device, as UOp.shape and .device would find them (a draw's reader asks its last node: one
    # walk of the whole chain otherwise)
    u._shape, u._dev = shape, g.device
    return _Words(u, shape, g)
  def __add__(self, y: Any) -> _Words: return self._bin(Ops.ADD, y)
  def __xor__(self, y: Any) -> _Words: return self._bin(Ops.XOR, y)
  def __lshift__(self, y: Any) -> _Words: return self._bin(Ops.SHL, y)
  def __rshift__(self, y: Any) -> _Words: return self._bin(Ops.SHR, y)

def _rounds(x0: Any, x1: Any, k0: Any, k1: Any, wrap) -> tuple[Any, Any]:
  ks = (k1, wrap(k0 ^ k1 ^ 0x1BD11BDA), k0)
  a, b = wrap(x0 + ks[2]), wrap(x1 + ks[0])
  for i in range(5):
    for r in _ROTATIONS[i % 2]:
      a = wrap(a + b)
      b = a ^ wrap(wrap(b << r) + (b >> (32 - r)))
    a, b = wrap(a + ks[i % 3]), wrap(b + ks[(i + 1) % 3] + i + 1)
  return a, b

def pair_words(lo: Any, hi: Any) -> Any:
  """The draw's words from the chain's two halves (n/2 each): the low halves, then the high ones. Each pair is one
  chain, computed once into one 64-bit word (hi << 32 | lo) of a buffer of its own, that the reader splits: a `cat`
  of the two halves fused into its reader computes the whole chain twice per word, once for each half (twice the C,
  twice the work). One word per chain, as each store of a kernel is its own element's: a (n/2, 2) buffer of the two
  words would still compute the chain once per store, the C compiler vectorizing only its 2-long inner loop."""
  from tinygrad.dtype import dtypes
  pair = ((hi.cast(dtypes.uint64) << 32) | lo.cast(dtypes.uint64)).contiguous()
  return (pair & 0xFFFFFFFF).cast(dtypes.uint32).cat((pair >> 32).cast(dtypes.uint32))

def draw_key(seed: int, device_index: int, counter: int) -> tuple[int, int]:
  """The key of a draw that starts at word `counter` on the device first drawn on as number `device_index`."""
  k0 = int.from_bytes(hashlib.sha256(device_index.to_bytes(4, "big")).digest(), "big") & M32
  return threefry2x32(counter & M32, (counter >> 32) & M32, k0, seed & M32, wrap=lambda v: v & M32)

def unit_values(words: Any, n: int, dtype: Any) -> Any:
  """n values in [0, 1) of dtype from uint32 words, as tinygrad's _bits_to_rand: the words' bytes read as n
  little-endian elements of dtype's size, each one's top mantissa-many bits over 2**mantissa (exact in dtype)."""
  from tinygrad.dtype import dtypes
  nmant = dtypes.finfo(dtype)[1]
  size = dtype.itemsize
  if size == 8:  # two words, low one first, per element
    w = words[:2 * n].reshape(n, 2).cast(dtypes.uint64)
    top = ((w[:, 1] << 32) | w[:, 0]) >> (64 - nmant)
    return (top.cast(dtypes.float64) * 2.0 ** -nmant).cast(dtype)
  if size == 4: elems = words[:n]
  else:  # 2 or 1 byte elements: each word holds 4 // size of them, lowest bytes first
    per, mask = 4 // size, (1 << (8 * size)) - 1
    parts = [(words >> (8 * size * j)) & mask if j else words & mask for j in range(per)]
    elems = parts[0].stack(*parts[1:], dim=-1).flatten()[:n]
  top = elems >> (8 * size - nmant)
  return (top.cast(dtypes.float32) * 2.0 ** -nmant).cast(dtype)
