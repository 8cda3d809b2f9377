"""bfloat16 end to end, checked against torch's bfloat16: storage (the top 16 bits of a float32, rounded to nearest
even), casts both ways, arithmetic computed in float and rounded, reductions, a matmul and a training step, on the
CPU device (C with bit conversions, no compiler bf16 support needed) and the PYTHON device; CUDA's source compiles."""
import json, struct
import numpy as np
import pytest
import torch
from tinygrad import Tensor, dtypes, nn
from tinygrad.device import is_dtype_supported
from tinygrad.dtype import least_upper_dtype, can_lossless_cast, _to_np_dtype, _to_torch_dtype, truncate

DEVICES = ["CPU", "PYTHON"]

def _nan_as_one(b: list[int]) -> list[int]: return [0x7fc0 if (v & 0x7fff) > 0x7f80 else v for v in b]  # a nan's sign and payload vary (torch: 0xffff)
def bits(t: torch.Tensor) -> list[int]: return _nan_as_one(t.reshape(-1).view(torch.int16).numpy().astype(np.uint16).tolist())
def our_bits(t: Tensor) -> list[int]: return _nan_as_one(t.reshape(-1).bitcast(dtypes.uint16).numpy().tolist())

# ties (both ways), values just either side of a tie, subnormals, signed zero, the largest finite, overflow, inf, nan
SPECIAL = [struct.unpack("<f", struct.pack("<I", u))[0] for u in
           (0x3f808000, 0x3f818000, 0x3f808001, 0x3f817fff, 0x00010000, 0x00008000, 0x80018000, 0x80000000, 0x7f7f0000,
            0x7f7f8000, 0x7f7fffff, 0xff7fffff)] + [0.0, 1.0, -2.5, 1e-40, 65504.0, 3.4e38, float("inf"), float("-inf"), float("nan")]

@pytest.fixture(scope="module")
def values() -> np.ndarray:
  rng = np.random.default_rng(0)
  return np.concatenate([rng.standard_normal(500).astype(np.float32) * np.float32(10) ** rng.integers(-30, 30, 500).astype(np.float32),
                         np.array(SPECIAL, dtype=np.float32)])

@pytest.mark.parametrize("device", DEVICES)
def test_rounding_matches_torch_bit_for_bit(device, values):
  ref = bits(torch.from_numpy(values).bfloat16())
  assert our_bits(Tensor(values, device=device).bfloat16()) == ref  # a cast in a kernel
  assert our_bits(Tensor(values.tolist(), dtype=dtypes.bfloat16, device=device)) == ref  # packed on the host
  assert our_bits(Tensor(values, dtype=dtypes.bfloat16, device=device)) == ref

@pytest.mark.parametrize("device", DEVICES)
def test_a_constant_holds_the_rounded_value(device):
  # a cast of a constant folds at graph level: it must fold the value the narrow type holds
  ref = torch.tensor([1.3, 1.3]).bfloat16().float().tolist()
  assert Tensor.full((2,), 1.3, dtype=dtypes.bfloat16, device=device).tolist() == ref
  assert (Tensor.ones(2, device=device).bfloat16() * 1.3).tolist() == ref
  assert Tensor.full((2,), 1.3, dtype=dtypes.float16, device=device).float().tolist() == torch.tensor([1.3, 1.3]).half().float().tolist()

def test_python_side_rounding_matches_torch(values):
  ref = torch.from_numpy(values).bfloat16().float().numpy()
  np.testing.assert_array_equal(np.array([truncate[dtypes.bfloat16](float(v)) for v in values], dtype=np.float32), ref)

@pytest.mark.parametrize("device", DEVICES)
def test_values_come_out_as_tinygrad_hands_them(device):
  t = Tensor([1.1, 2.5, -3.3, 1e30], dtype=dtypes.bfloat16, device=device)
  ref = torch.tensor([1.1, 2.5, -3.3, 1e30]).bfloat16().float()
  n = t.numpy()
  assert n.dtype == np.float32 and t.dtype == dtypes.bfloat16  # numpy has no bfloat16: float32, as tinygrad 0.14
  np.testing.assert_array_equal(n, ref.numpy())
  assert t.tolist() == ref.tolist() and all(type(v) is float for v in t.tolist())
  assert t[1].item() == 2.5 and type(t[0].item()) is float
  assert t.reshape(2, 2).tolist() == ref.reshape(2, 2).tolist()
  assert bytes(t.data()) == ref.bfloat16().view(torch.int16).numpy().tobytes()  # data(): its bytes (memoryview has no bf16)

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", [dtypes.int8, dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.bool, dtypes.float16, dtypes.float32, dtypes.float64])
def test_casts_both_ways(device, dt):
  vals = [0.0, 1.0, -1.0, 2.75, -3.5, 100.6, -120.2, 0.3]
  src = torch.tensor(vals).bfloat16()
  got = Tensor(vals, device=device).bfloat16().cast(dt)
  assert got.dtype == dt
  np.testing.assert_array_equal(got.numpy(), src.to(_to_torch_dtype(dt)).numpy())
  back = torch.tensor(vals).to(_to_torch_dtype(dt))
  assert our_bits(Tensor(back.numpy(), device=device).cast(dtypes.bfloat16)) == bits(back.bfloat16())

@pytest.mark.parametrize("device", DEVICES)
def test_bitcast_both_ways(device):
  x = torch.tensor([1.5, -2.0, 3.140625, 0.0]).bfloat16()
  assert Tensor([1.5, -2.0, 3.140625, 0.0], device=device).bfloat16().bitcast(dtypes.int16).numpy().tolist() == x.view(torch.int16).tolist()
  back = Tensor(x.view(torch.int16).numpy(), device=device).bitcast(dtypes.bfloat16)
  assert back.dtype == dtypes.bfloat16 and back.tolist() == x.float().tolist()

@pytest.mark.parametrize("device", DEVICES)
def test_arithmetic_is_float_math_rounded_once(device):
  rng = np.random.default_rng(1)
  a, b = (rng.standard_normal(64).astype(np.float32) * 5 for _ in range(2))
  ta, tb = torch.from_numpy(a).bfloat16(), torch.from_numpy(b).bfloat16()
  xa, xb = Tensor(a, device=device).bfloat16(), Tensor(b, device=device).bfloat16()
  for ours, ref in [(xa + xb, ta + tb), (xa - xb, ta - tb), (xa * xb, ta * tb), (xa / xb, ta / tb), (-xa, -ta), (xa.abs().sqrt(), ta.abs().sqrt()),
                    (xa.maximum(xb), ta.maximum(tb)), ((xa < xb).where(xa, xb), torch.where(ta < tb, ta, tb)), (xa * 3, ta * 3), (xa + 0.1, ta + 0.1)]:
    assert ours.dtype == dtypes.bfloat16
    assert our_bits(ours) == bits(ref)
  np.testing.assert_array_equal((xa < xb).numpy(), (ta < tb).numpy())
  np.testing.assert_array_equal((xa == xb.maximum(xa)).numpy(), (ta == tb.maximum(ta)).numpy())

@pytest.mark.parametrize("device", DEVICES)
def test_promotion_and_transcendentals(device):
  x = Tensor([0.5, 1.1015625, 3.0, -2.0], device=device).bfloat16()
  assert (x * Tensor([1.0, 2, 3, 4], device=device)).dtype == dtypes.float32 and (x + 1).dtype == dtypes.bfloat16
  assert (x + Tensor([1, 2, 3, 4], device=device)).dtype == dtypes.bfloat16 and (x + x.half()).dtype == dtypes.float32
  ref = torch.tensor([0.5, 1.1015625, 3.0, -2.0]).bfloat16()
  # computed through bfloat16 intermediates as tinygrad does (exp = exp2(x*log2(e))): within a few bfloat16 steps of torch's
  for ours, theirs in [(x.exp(), ref.exp()), (x.sigmoid(), ref.sigmoid()), (x.tanh(), ref.tanh()), (x.abs().log(), ref.abs().log())]:
    assert ours.dtype == dtypes.bfloat16
    np.testing.assert_allclose(ours.numpy(), theirs.float().numpy(), rtol=2e-2, atol=1e-2)

@pytest.mark.parametrize("device", DEVICES)
def test_reductions(device):
  rng = np.random.default_rng(2)
  a = rng.standard_normal((16, 33)).astype(np.float32)
  x, t = Tensor(a, device=device).bfloat16(), torch.from_numpy(a).bfloat16()
  assert x.sum().dtype == dtypes.bfloat16 and x.max().dtype == dtypes.bfloat16
  assert our_bits(x.max(1)) == bits(t.amax(1)) and our_bits(x.min(0)) == bits(t.amin(0))
  # summed in float32 and rounded once, as torch does
  assert our_bits(x.sum(1)) == bits(t.sum(1)) and our_bits(x.sum()) == bits(t.sum())
  np.testing.assert_allclose(x.mean(0).numpy(), t.mean(0).float().numpy(), rtol=1e-2, atol=1e-2)

def test_matmul_matches_torch():
  rng = np.random.default_rng(3)
  a, b = rng.standard_normal((24, 40)).astype(np.float32), rng.standard_normal((40, 16)).astype(np.float32)
  ours = Tensor(a).bfloat16() @ Tensor(b).bfloat16()
  ref = torch.from_numpy(a).bfloat16() @ torch.from_numpy(b).bfloat16()
  assert ours.dtype == dtypes.bfloat16
  # float32 accumulation on both sides; torch may round partial sums differently: within one bfloat16 step
  np.testing.assert_allclose(ours.numpy(), ref.float().numpy(), rtol=8e-3, atol=2e-2)
  f32 = a.astype(np.float64) @ b.astype(np.float64)
  assert np.abs(ours.numpy() - f32).max() < 0.1 * np.abs(f32).max()

def test_training_step_with_bfloat16_weights():
  rng = np.random.default_rng(4)
  w0, x, y = (rng.standard_normal(s).astype(np.float32) for s in ((8, 4), (32, 8), (32, 4)))
  lin = nn.Linear(8, 4, bias=False)
  lin.weight = Tensor(w0.T.copy()).bfloat16().contiguous().realize()
  opt = nn.optim.SGD([lin.weight], lr=0.05)
  tw = torch.nn.Parameter(torch.from_numpy(w0.T.copy()).bfloat16())
  topt = torch.optim.SGD([tw], lr=0.05)
  losses = []
  with Tensor.train():
    for _ in range(3):
      opt.zero_grad()
      loss = ((lin(Tensor(x).bfloat16()) - Tensor(y).bfloat16()) ** 2).mean()
      loss.backward()
      loss.realize()  # before the step: a lazy loss read afterwards would see the new weights (as in tinygrad)
      opt.step()
      topt.zero_grad()
      tloss = ((torch.from_numpy(x).bfloat16() @ tw.T - torch.from_numpy(y).bfloat16()) ** 2).mean()
      tloss.backward()
      topt.step()
      assert lin.weight.dtype == dtypes.bfloat16 and lin.weight.grad is not None and lin.weight.grad.dtype == dtypes.bfloat16
      losses.append(loss.item())
      np.testing.assert_allclose(loss.item(), tloss.item(), rtol=3e-2)
  assert losses[-1] < losses[0]
  np.testing.assert_allclose(lin.weight.numpy(), tw.detach().float().numpy(), rtol=3e-2, atol=3e-2)

def test_dtype_facts():
  bf = dtypes.bfloat16
  assert bf.itemsize == 2 and dtypes.is_float(bf) and bf in dtypes.floats and repr(bf) == "dtypes.bfloat16"
  assert Tensor([1.0], dtype="bfloat16").dtype == bf and Tensor.ones(2).bfloat16().dtype == bf
  assert least_upper_dtype(bf, dtypes.float16) == dtypes.float32 and least_upper_dtype(bf, dtypes.int64) == bf
  assert can_lossless_cast(bf, dtypes.float32) and not can_lossless_cast(bf, dtypes.float16) and not can_lossless_cast(dtypes.float16, bf)
  assert not can_lossless_cast(dtypes.uint8, bf) and can_lossless_cast(dtypes.bool, bf)  # as tinygrad 0.14: none into bfloat16
  assert _to_np_dtype(bf) is np.float32 and _to_torch_dtype(bf) is torch.bfloat16
  assert (bf.min, bf.max) == (-float("inf"), float("inf"))
  for dev in ("CPU", "PYTHON", "CUDA"): assert is_dtype_supported(bf, dev)
  r = Tensor.rand(1000, dtype=bf)
  assert r.dtype == bf and 0 <= r.numpy().min() and r.numpy().max() < 1

def test_rendered_c_needs_no_compiler_bfloat16():
  from tinygrad.engine import realize as R
  before = set(R._programs)
  (Tensor([1.0, 2.0]).bfloat16() * 3).realize()
  srcs = [p.src for k, p in R._programs.items() if k not in before]
  assert srcs and all("__bf16" not in s and "tg_f2bf" in s for s in srcs), srcs

def test_safetensors_bf16_round_trip(tmp_path):
  from tinygrad.nn.state import safe_load, safe_save
  t = torch.tensor([1.5, -0.3, 1e20]).bfloat16()
  raw = t.view(torch.int16).numpy().tobytes()
  h = json.dumps({"w": {"dtype": "BF16", "shape": [3], "data_offsets": [0, len(raw)]}}).encode()
  (tmp_path / "a.safetensors").write_bytes(struct.pack("<Q", len(h)) + h + raw)
  w = safe_load(tmp_path / "a.safetensors")["w"]
  assert w.dtype == dtypes.bfloat16 and w.tolist() == t.float().tolist()
  safe_save({"w": w}, tmp_path / "b.safetensors")
  assert (tmp_path / "b.safetensors").read_bytes().endswith(raw) and b'"BF16"' in (tmp_path / "b.safetensors").read_bytes()

def test_torch_checkpoint_keeps_bfloat16(tmp_path):
  from tinygrad.nn.state import torch_load
  w = torch.randn(4, 3).bfloat16()
  torch.save({"w": w, "v": w.t()[1:]}, tmp_path / "ckpt.pth")
  got = torch_load(str(tmp_path / "ckpt.pth"))
  assert got["w"].dtype == dtypes.bfloat16 and got["w"].tolist() == w.float().tolist()
  assert got["v"].dtype == dtypes.bfloat16 and got["v"].tolist() == w.t()[1:].float().tolist()

def test_cuda_source_compiles_to_ptx(tmp_path):
  from tinygrad.runtime.cuda_compiler import find_nvcc, nvcc_ptx, DEFAULT_ARCH
  from tinygrad.renderer.cuda import prelude
  if find_nvcc() is None: pytest.skip("needs nvcc (CUDA toolkit) on PATH or NVCC set")
  from test_cuda import cuda_sources
  # from host data, not randn: random draws realize in a float buffer of their own (tinygrad 0.14's rand), a kernel with no bf16
  b = Tensor(np.random.default_rng(0).standard_normal((8, 8), dtype=np.float32)).bfloat16()
  srcs = cuda_sources(b + 1, (b * b).exp(), b.max(1), b.sum(0), b @ b, b.cast(dtypes.int8), b.bitcast(dtypes.uint16), (b < 0).where(b, 0),
                      b.half(), b.float() * 2, Tensor.arange(6).cast(dtypes.bfloat16))
  assert all("__bf16" not in s for s in srcs) and all("tg_f2bf" in s or "tg_bf2f" in s for s in srcs)
  src = prelude(srcs) + "\n\n".join(srcs)
  (tmp_path / "bf16.cu").write_text(src)
  ptx = nvcc_ptx(src, DEFAULT_ARCH)
  assert ptx.count(b".entry") == len(srcs)
