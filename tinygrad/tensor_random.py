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

M32 = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))

def threefry2x32(x0: Any, x1: Any, k0: Any, k1: Any, wrap=lambda v: v) -> tuple[Any, Any]:
  """Threefry-2x32 of the pair (x0, x1) under key (k0, k1), as tinygrad's THREEFRY: on Python ints (wrap masks to 32
  bits) or on uint32 tensors (which wrap by themselves)."""
  from tinygrad.uop.ops import rewrite_memo
  # each tensor op walks its whole graph (an int tensor looks for a bound variable in it): inside rewrite_memo every
  # walk is kept, and the next op's walk reuses its sources' (the same graph; the digits CNN's 8 draws 0.17 -> 0.12 s of CPU)
  with rewrite_memo(): return _rounds(x0, x1, k0, k1, wrap)

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
