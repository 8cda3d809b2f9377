# A draw computes Threefry's 20-round chain once per pair of words (tensor_random.pair_words), not once per word: the
# kernels of a draw hold one chain, and the words are still tinygrad's (checked against the chain on Python ints).
import numpy as np
from tinygrad import Tensor, dtypes, Device
from tinygrad.engine import realize as R
from tinygrad.tensor_random import threefry2x32, draw_key, M32

KEY_CONST = "466688986u"  # Threefry's key-schedule parity constant 0x1BD11BDA: one per chain in the C source

def reference_words(n: int, seed: int, device: str, counter: int) -> np.ndarray:
  k0, k1 = draw_key(seed, Tensor._dev_seeds[device], counter)
  half = (n + 1) // 2
  pairs = [threefry2x32(i, i + half, k0, k1, wrap=lambda v: v & M32) for i in range(half)]
  return np.array([a for a, _ in pairs] + [b for _, b in pairs], dtype=np.uint32)[:n]

def test_a_draw_computes_each_chain_once_and_draws_tinygrads_words(monkeypatch):
  import tinygrad.tensor as T
  dev = Device.canonicalize(None)
  scheduled: list = []
  real = T.run_schedule
  monkeypatch.setattr(T, "run_schedule", lambda items: (scheduled.extend(it for it in items if it.kind == "kernel"), real(items))[1])
  Tensor.manual_seed(7)
  Tensor.rand(1).realize()  # the device has its key index
  for shape, dt in (((7, 9), dtypes.float32), ((5, 3), dtypes.float16), ((11,), dtypes.float64)):
    counter = Tensor._dev_counts.get(dev, 0)
    scheduled.clear()
    x = Tensor.rand(*shape, dtype=dt).numpy()
    srcs = [R.get_program(it.params_ast or it.ast, dev).src for it in scheduled]
    # the draw's kernels: one computes the chain, once (one 64-bit word per pair), the other splits and scales it
    assert sum(s.count(KEY_CONST) for s in srcs) == 1, srcs
    assert any("unsigned long long* restrict data0" in s and KEY_CONST in s for s in srcs)
    n = int(np.prod(shape))
    words = reference_words((n * dt.itemsize + 3) // 4, 7, dev, counter)
    nmant = {dtypes.float32: 23, dtypes.float16: 10, dtypes.float64: 52}[dt]
    if dt == dtypes.float32: want = (words >> (32 - nmant)).astype(np.float32) * np.float32(2.0 ** -nmant)
    elif dt == dtypes.float16: want = ((words.view(np.uint16)[:n] >> (16 - nmant)).astype(np.float32) * 2.0 ** -nmant).astype(np.float16)
    else: want = (words.view(np.uint64)[:n] >> (64 - nmant)).astype(np.float64) * 2.0 ** -nmant
    np.testing.assert_array_equal(x.reshape(-1), want)

def test_the_chain_built_on_uops_is_the_graph_tensor_ops_build():
  # threefry2x32 builds a chain's UOps directly (no Tensor per op): the very nodes its rounds make on Tensors
  # (hash-consed: the same objects), so every draw's kernels and words stay what they were
  from tinygrad.tensor_random import _rounds
  from tinygrad.uop.ops import _compute_shape, _compute_device
  for half in (1, 2, 3, 100):
    c0 = Tensor.arange(half, dtype=dtypes.uint32)
    key = Tensor([5, 9], dtype=dtypes.uint32)
    for args in ((c0, c0 + half, key[0:1], key[1:2]), (c0.reshape(1, half), c0, key[0], key[1:2])):  # broadcasts both ways
      got, want = threefry2x32(*args), _rounds(*args, lambda v: v)
      assert all(g.uop is w.uop for g, w in zip(got, want))
      # the shapes and devices it records on the nodes are the ones UOp computes
      assert all(u.shape == _compute_shape(u) and u.device == _compute_device(u) for u in got[0].uop.toposort())
  import pytest
  with pytest.raises(TypeError, match="one dtype on one device"): threefry2x32(c0, c0, key.cast(dtypes.int32), key)
