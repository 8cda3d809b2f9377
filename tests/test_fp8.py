"""fp8 (dtypes.fp8e4m3, dtypes.fp8e5m2, OCP formats): stored as their 8 bits, rounded to nearest even; a finite value
beyond the range saturates to the largest finite (tinygrad 0.14's rule). They compute on the PYTHON device and in the
CPU's C kernels (the same conversions in C: renderer/fp8_c.py); CUDA's renderer refuses them. Values are checked
against torch's float8."""
import numpy as np
import pytest
import torch
from tinygrad import Tensor, dtypes
from tinygrad.device import is_dtype_supported
from tinygrad.dtype import float_to_fp8, fp8_to_float, least_upper_dtype
from tinygrad.uop.ops import UOp, Ops

# torch's float8 types (tinygrad's _to_torch_dtype gives an fp8's storage, uint8)
def TORCH_F8(dt):
  return {dtypes.fp8e4m3: torch.float8_e4m3fn, dtypes.fp8e5m2: torch.float8_e5m2, dtypes.fp8e4m3fnuz: torch.float8_e4m3fnuz,
          dtypes.fp8e5m2fnuz: torch.float8_e5m2fnuz}[dt]

FP8 = [dtypes.fp8e4m3, dtypes.fp8e5m2]
TOP = {dtypes.fp8e4m3: 448.0, dtypes.fp8e5m2: 57344.0}

@pytest.mark.parametrize("dt", FP8)
def test_rounding_matches_torch_within_range(dt):
  x = torch.cat([torch.linspace(-TOP[dt], TOP[dt], 4001), torch.logspace(-12, 0, 500, base=2.0), -torch.logspace(-20, 0, 500, base=2.0)])
  ref = x.to(TORCH_F8(dt))
  assert [float_to_fp8(v, dt) for v in x.tolist()] == ref.view(torch.uint8).tolist()
  ours = Tensor(x.numpy(), device="PYTHON").cast(dt)
  assert ours.bitcast(dtypes.uint8).numpy().tolist() == ref.view(torch.uint8).tolist()
  np.testing.assert_array_equal(ours.numpy(), ref.float().numpy())

@pytest.mark.parametrize("dt", FP8)
def test_every_bit_pattern_decodes_as_torch(dt):
  ref = torch.arange(256, dtype=torch.uint8).view(TORCH_F8(dt)).float().tolist()
  ours = [fp8_to_float(b, dt) for b in range(256)]
  assert [(a != a and b != b) or a == b for a, b in zip(ours, ref)] == [True] * 256

def test_saturation_and_specials_as_tinygrad():
  # tinygrad 0.14's own expectations (its test/unit/test_dtype.py TestDtypeTolist)
  assert Tensor([-30000, 1.5, 3.1, 30000], device="PYTHON", dtype=dtypes.fp8e4m3).tolist() == [-448.0, 1.5, 3.0, 448.0]
  assert Tensor([-30000, 1.5, 3.1, 30000], device="PYTHON", dtype=dtypes.fp8e5m2).tolist() == [-28672.0, 1.5, 3.0, 28672.0]
  e4 = Tensor([500.0, -1e9, float("inf"), float("nan")], device="PYTHON", dtype=dtypes.fp8e4m3).numpy()
  assert e4[:2].tolist() == [448.0, -448.0] and np.isnan(e4[2:]).all()  # e4m3 has no inf
  e5 = Tensor([1e9, float("inf"), float("nan"), 1e-6], device="PYTHON", dtype=dtypes.fp8e5m2).numpy()
  assert e5[0] == 57344.0 and e5[1] == np.inf and np.isnan(e5[2]) and e5[3] == 0.0

def test_arithmetic_on_python_device_rounds_each_result():
  a, b = torch.tensor([1.5, -2.0, 0.3125, 10.0]), torch.tensor([0.75, 3.0, 0.5, 20.0])
  for dt in FP8:
    ta, tb = a.to(TORCH_F8(dt)).float(), b.to(TORCH_F8(dt)).float()
    xa, xb = Tensor(a.numpy(), device="PYTHON").cast(dt), Tensor(b.numpy(), device="PYTHON").cast(dt)
    for ours, ref in [(xa + xb, ta + tb), (xa * xb, ta * tb), (xa - xb, ta - tb), (xa.maximum(xb), ta.maximum(tb))]:
      assert ours.dtype == dt
      np.testing.assert_array_equal(ours.numpy(), ref.to(TORCH_F8(dt)).float().numpy())
    assert xa.sum().dtype == dt and xa.cast(dtypes.int32).tolist() == [1, -2, 0, 10]

def test_support_and_promotion():
  for dt in FP8:
    assert is_dtype_supported(dt, "PYTHON") and is_dtype_supported(dt, "CPU") and not is_dtype_supported(dt, "CUDA")
    assert dt.itemsize == 1 and dtypes.is_float(dt) and dt in dtypes.fp8s
    assert least_upper_dtype(dt, dtypes.float16) == dtypes.float16 and least_upper_dtype(dt, dtypes.bfloat16) == dtypes.bfloat16
  assert least_upper_dtype(dtypes.fp8e4m3, dtypes.fp8e5m2) == dtypes.float16

def test_cuda_renderer_refuses_fp8_clearly():
  from tinygrad.runtime.ops_cuda import CUDADevice
  from tinygrad.codegen.linearize import Program
  p = Program("k", [UOp(Ops.CONST, dtypes.fp8e4m3, arg=1.0)], {}, [], (), (), 0, 0)
  with pytest.raises(NotImplementedError, match="fp8e4m3 computes only on the PYTHON device"): CUDADevice.renderer.render(p)

@pytest.mark.parametrize("dt", dtypes.fp8s)
def test_cpu_kernels_compute_fp8_as_the_python_device(dt):
  # the C conversions (renderer/fp8_c.py) against the Python ones, every bit pattern and rounding near each value
  x = torch.cat([torch.linspace(-1.2 * TOP.get(dt, 240.0), 1.2 * TOP.get(dt, 240.0), 8001), torch.logspace(-20, 0, 300, base=2.0),
                 -torch.logspace(-20, 0, 300, base=2.0), torch.tensor([0.0, -0.0, 1e9, -1e9])]).numpy()
  cpu, py = Tensor(x, device="CPU").cast(dt), Tensor(x, device="PYTHON").cast(dt)
  assert cpu.bitcast(dtypes.uint8).tolist() == py.bitcast(dtypes.uint8).tolist() == [float_to_fp8(float(v), dt) for v in x]
  bits = list(range(256))
  np.testing.assert_array_equal(Tensor(bits, dtype=dtypes.uint8, device="CPU").bitcast(dt).float().numpy(),
                                np.array([fp8_to_float(b, dt) for b in bits], np.float32))
  a, b = Tensor([1.5, 2.0, -0.3, 7.0], device="CPU").cast(dt), Tensor([3.0, 0.7, 0.5, -9.0], device="CPU").cast(dt)
  pa, pb = Tensor([1.5, 2.0, -0.3, 7.0], device="PYTHON").cast(dt), Tensor([3.0, 0.7, 0.5, -9.0], device="PYTHON").cast(dt)
  for f in (lambda u, v: u * v, lambda u, v: u + v, lambda u, v: u.maximum(v), lambda u, v: (u * v).sum(), lambda u, v: u < v):
    assert f(a, b).tolist() == f(pa, pb).tolist()
