"""The fnuz fp8s (dtypes.fp8e4m3fnuz, fp8e5m2fnuz: AMD's formats, no inf, no -0, 0x80 the one nan) against torch's
float8_*fnuz; dtypes.finfo; EMULATED_DTYPES.tolist; the PTX/NIR renderer names tinygrad's tests check against."""
import math
import numpy as np
import pytest
import torch
from tinygrad import Tensor, dtypes, Device, Context
from tinygrad.dtype import float_to_fp8, fp8_to_float, least_upper_dtype, DTYPES_DICT, truncate
from tinygrad.helpers import EMULATED_DTYPES
from test_fp8 import TORCH_F8  # torch's float8 types, one map for both fp8 test files

FNUZ = [dtypes.fp8e4m3fnuz, dtypes.fp8e5m2fnuz]
TOP = {dtypes.fp8e4m3fnuz: 240.0, dtypes.fp8e5m2fnuz: 57344.0}

@pytest.mark.parametrize("dt", FNUZ)
def test_rounding_matches_torch_within_range(dt):
  x = torch.cat([torch.linspace(-TOP[dt], TOP[dt], 4001), torch.logspace(-20, 0, 500, base=2.0), -torch.logspace(-20, 0, 500, base=2.0),
                 torch.tensor([0.0, -0.0])])
  ref = x.to(TORCH_F8(dt)).view(torch.uint8).tolist()
  assert [float_to_fp8(v, dt) for v in x.tolist()] == ref
  assert Tensor(x.numpy(), device="PYTHON").cast(dt).bitcast(dtypes.uint8).tolist() == ref

@pytest.mark.parametrize("dt", FNUZ)
def test_every_bit_pattern_decodes_as_torch(dt):
  ref = torch.arange(256, dtype=torch.uint8).view(TORCH_F8(dt)).float().tolist()
  ours = [fp8_to_float(b, dt) for b in range(256)]
  assert [(a != a and b != b) or a == b for a, b in zip(ours, ref)] == [True] * 256
  assert sum(math.isnan(v) for v in ours) == 1 and math.isnan(ours[0x80])

def test_specials_and_saturation_as_tinygrad():
  for dt in FNUZ:
    assert [float_to_fp8(x, dt) for x in (math.inf, -math.inf, math.nan, -0.0, -1e-30)] == [0x80, 0x80, 0x80, 0, 0]
    assert fp8_to_float(float_to_fp8(1e9, dt), dt) == TOP[dt] and truncate[dt](-1e9) == -TOP[dt]
  got = Tensor([-30000, 1.5, 3.1, 30000], device="PYTHON", dtype=dtypes.fp8e4m3fnuz).tolist()
  assert got == [-240.0, 1.5, 3.0, 240.0]

def test_dtype_tables_and_promotion():
  assert list(DTYPES_DICT)[:15][-4:] == ["fp8e4m3", "fp8e5m2", "fp8e4m3fnuz", "fp8e5m2fnuz"]
  assert dtypes.fp8s == dtypes.fp8_ocp + dtypes.fp8_fnuz and all(dtypes.is_float(d) for d in FNUZ)
  assert least_upper_dtype(dtypes.fp8e4m3fnuz, dtypes.fp8e4m3) == dtypes.half  # as tinygrad 0.14
  assert least_upper_dtype(dtypes.fp8e5m2fnuz, dtypes.bfloat16) == dtypes.bfloat16
  assert Tensor.rand(1000, dtype=dtypes.fp8e4m3fnuz, device="PYTHON").numpy().max() < 1.0  # 4 random bits: exact, never rounds to 1

def test_finfo():
  for dt, t in [(dtypes.float16, torch.float16), (dtypes.bfloat16, torch.bfloat16), (dtypes.float32, torch.float32), (dtypes.float64, torch.float64),
                (dtypes.fp8e4m3, torch.float8_e4m3fn), (dtypes.fp8e5m2, torch.float8_e5m2)]:
    fi = torch.finfo(t)
    e, m = dtypes.finfo(dt)
    assert m == round(-math.log2(fi.eps)) and e == t.itemsize * 8 - 1 - m, dt
  assert dtypes.finfo(dtypes.fp8e4m3fnuz) == (4, 3) and dtypes.finfo(dtypes.fp8e5m2fnuz) == (5, 2)  # torch counts fnuz eps differently
  with pytest.raises(ValueError, match="float dtype"): dtypes.finfo(dtypes.int32)

def test_comma_list_setting():
  assert EMULATED_DTYPES.tolist(dtypes) == []  # nothing asked for
  from tinygrad.helpers import ContextVar
  v = ContextVar("TINYVIZ_TEST_LIST", "")
  with Context(TINYVIZ_TEST_LIST="half, bfloat16"):
    assert v.tolist() == ["half", "bfloat16"] and v.tolist(dtypes) == [dtypes.half, dtypes.bfloat16]

def test_no_ptx_or_nir_renderer():
  from tinygrad.renderer.ptx import PTXRenderer
  from tinygrad.renderer.nir import NIRRenderer
  assert not isinstance(Device[Device.DEFAULT].renderer, (PTXRenderer, NIRRenderer))
  with pytest.raises(NotImplementedError, match="no PTX renderer"): PTXRenderer()
  with pytest.raises(NotImplementedError, match="no NIR renderer"): NIRRenderer()

def test_emulated_dtypes_takes_the_dtypes_emulated_here_anyway():
  # bfloat16 and the fp8s are always stored as their bits and computed in float: asking for their emulation is fine
  with Context(EMULATED_DTYPES="bfloat16,fp8e4m3"):
    assert EMULATED_DTYPES.tolist(dtypes) == [dtypes.bfloat16, dtypes.fp8e4m3]
    assert Tensor([1.5, 300.0]).cast(dtypes.fp8e4m3).tolist() == [1.5, 288.0]
  assert EMULATED_DTYPES.tolist() == []
  for native in ("half", "long", "bfloat16,int64"):  # these run natively: there is no emulated path to switch to
    with pytest.raises(ValueError, match="run natively here"):
      with Context(EMULATED_DTYPES=native): pass

def test_torch_dtype_of_an_fp8_is_its_storage():
  from tinygrad.dtype import _to_torch_dtype
  assert all(_to_torch_dtype(d) == torch.uint8 for d in dtypes.fp8s)  # as tinygrad 0.14: tests view the bytes with it
  assert _to_torch_dtype(dtypes.bfloat16) == torch.bfloat16 and _to_torch_dtype(dtypes.float16) == torch.float16
