# tinygrad's own test files import module-level names (tinygrad.helpers' settings, dtype tables, is_dtype_supported, ...):
# every import line listed in tinygrad_test_imports.json resolves here, and the names with behaviour behave.
import ast, importlib, io, json, pathlib, tempfile, contextlib
import numpy as np
import pytest
from tinygrad import Tensor, TinyJit, dtypes, Variable
from tinygrad.helpers import (Context, ContextVar, getenv, IMAGE, NOOPT, CI, OSX, WIN, EMULATE, Timing, argfix, make_tuple,
                              all_same, merge_dicts, temp, fetch, strip_parens, DEV, fully_flatten, get_child)
from tinygrad.device import is_dtype_supported
from tinygrad.dtype import _to_np_dtype, _to_torch_dtype, truncate, DTYPES_DICT, sum_acc_dtype, can_lossless_cast

LINES = json.loads((pathlib.Path(__file__).parent / "tinygrad_test_imports.json").read_text())["lines"]

def _imported(line: str) -> tuple[str, list[str]]:
  node = ast.parse(line).body[0]
  assert isinstance(node, ast.ImportFrom), line
  return node.module, [a.name for a in node.names]  # type: ignore[return-value]

@pytest.mark.parametrize("entry", LINES, ids=[f"{e['source'].split(' ')[0]}:{e['line']}" for e in LINES])
def test_import_line_resolves(entry):
  module, names = _imported(entry["line"])
  left_out = entry.get("left_out", {})
  if module in left_out:  # a whole module we deliberately don't have: it must still be missing
    with pytest.raises(ImportError): importlib.import_module(module)
    return
  mod = importlib.import_module(module)
  for n in names:
    if n in left_out:
      assert not hasattr(mod, n), f"{module}.{n} exists now: take it off left_out in tinygrad_test_imports.json"
    else:
      assert hasattr(mod, n) or importlib.util.find_spec(f"{module}.{n}") is not None, f"{entry['source']}: {module} has no {n}"
  if not left_out: exec(entry["line"], {})  # the line itself, as the test file runs it

# ----- settings: Context takes tinygrad's names; the ones with an effect here take effect

def test_noopt_context_builds_the_kernel_as_lowered():
  from tinygrad.engine import realize
  a, b = Tensor.rand(32, 32).realize(), Tensor.rand(32, 32).realize()
  ref = a.numpy() @ b.numpy()
  np.testing.assert_allclose((a @ b).numpy(), ref, rtol=1e-5)
  srcs = lambda progs: {p.name: p.src for p in progs.values()}
  opt = srcs(realize._programs)
  with Context(NOOPT=1):
    assert NOOPT == 1 and getenv("NOOPT") == 1  # code that asks getenv sees the block's value
    np.testing.assert_allclose((a @ b).numpy(), ref, rtol=1e-5)
  plain = srcs(realize._programs_noopt)
  name = next(n for n in plain if n.startswith("r_32_32_32"))
  assert plain[name] != opt[name] and len(plain[name]) < len(opt[name])  # no upcasts or vector lanes: shorter, other code
  assert NOOPT == 0 and getenv("NOOPT") == 0

def test_jit_zero_context_runs_the_function_each_call():
  calls = []
  @TinyJit
  def f(x):
    calls.append(1)
    return (x * 2).realize()
  with Context(JIT=0):
    for i in range(4): assert f(Tensor([float(i)])).item() == 2 * i
  assert len(calls) == 4

def test_training_and_default_float_are_set_for_the_block_and_put_back():
  assert Tensor.training is False and dtypes.default_float == dtypes.float32
  with Context(TRAINING=1, DEFAULT_FLOAT="half"):
    assert Tensor.training is True and Tensor([1.5]).dtype == dtypes.half
  assert Tensor.training is False and Tensor([1.5]).dtype == dtypes.float32
  with Context(DEFAULT_FLOAT=dtypes.float64): assert Tensor([1.5]).dtype == dtypes.float64

def test_modes_this_engine_lacks_read_zero_and_refuse_to_be_set():
  assert IMAGE == 0 and not IMAGE and not EMULATE
  with pytest.raises(ValueError, match="image"): Context(IMAGE=1)
  with pytest.raises(ValueError, match="LLVM"): Context(CPU_LLVM=1)
  with Context(IMAGE=0): pass  # its own value is fine (tinygrad's tests do this)
  with pytest.raises(KeyError, match="BEEM"): Context(BEEM=1)
  with Context(BEAM=2, IGNORE_BEAM_CACHE=1, WINO=1, DEVECTORIZE=0):  # search and speed knobs: accepted, results unchanged
    np.testing.assert_allclose((Tensor([1.0, 2.0]) * 3).numpy(), [3.0, 6.0])

def test_contextvar_is_one_object_per_name_and_context_restores_what_was_set():
  a = ContextVar("_TG_IMPORTS_X", 1)
  assert ContextVar("_TG_IMPORTS_X", 2) is a and a.value == 1
  a.value = 2
  ctx = Context(_TG_IMPORTS_X=3)
  with ctx:
    assert a.value == 3
    with ctx: assert a.value == 3  # the same Context object, entered again (as a decorator inside itself)
    assert a.value == 3
  assert a.value == 2

def test_platform_and_dev():
  import sys
  assert OSX == (sys.platform == "darwin") and WIN == (sys.platform == "win32") and isinstance(CI, bool)
  assert DEV.interface == "" and DEV.device == str(DEV.value).partition(":")[0].upper()
  with pytest.raises(ValueError, match="DEV"): Context(DEV="PYTHON" if DEV.value != "PYTHON" else "CPU")

# ----- devices and dtypes

@pytest.mark.parametrize("device", ["CPU", "PYTHON"])
def test_is_dtype_supported_answers_truthfully(device):
  for dt in dtypes.all:  # fp8 too: PYTHON computes in it, the CPU's C converts its bits (renderer/fp8_c.py)
    assert is_dtype_supported(dt, device)
    vals = [0, 1] if dt == dtypes.bool else [1, 2]
    assert Tensor(vals, dtype=dt, device=device).numpy().tolist() == np.array(vals, dtype=_to_np_dtype(dt)).tolist()
  assert not is_dtype_supported(dtypes.float32.vec(4), device) and not is_dtype_supported(dtypes.void, device)
  with pytest.raises(ValueError, match="METAL"): is_dtype_supported(dtypes.float, "METAL")
  assert is_dtype_supported(dtypes.half, ("CPU", "CPU:1"))

def test_dtype_tables_match_numpy_and_torch():
  import torch
  for name, dt in DTYPES_DICT.items():
    assert dt == getattr(dtypes, name)
    # numpy has no bfloat16 or fp8: tinygrad hands them out as float32, which comes back in as float32
    assert Tensor(np.zeros(2, dtype=_to_np_dtype(dt))).dtype == (dtypes.float32 if dt in (dtypes.bfloat16, *dtypes.fp8s) else dt)
    assert torch.zeros(1, dtype=_to_torch_dtype(dt)).element_size() == dt.itemsize
  assert truncate[dtypes.int8](200) == np.array(200).astype(np.int8) and truncate[dtypes.uint16](-1) == 65535
  assert truncate[dtypes.float32](0.1) == float(np.float32(0.1)) and truncate[dtypes.half](70000.0) == float("inf")
  assert sum_acc_dtype(dtypes.uint8) == dtypes.uint32 and sum_acc_dtype(dtypes.half) == dtypes.float32
  assert can_lossless_cast(dtypes.int16, dtypes.float32) and not can_lossless_cast(dtypes.int32, dtypes.float32)

# ----- small helpers

def test_timing_prints_the_block_time():
  out = io.StringIO()
  with contextlib.redirect_stdout(out), Timing("step "): sum(range(1000))
  assert out.getvalue().startswith("step ") and out.getvalue().rstrip().endswith("ms")

def test_sequence_helpers():
  assert argfix((2, 3)) == argfix([2, 3]) == argfix(2, 3) == (2, 3)
  with pytest.raises(ValueError): argfix((2, 2), 2)
  assert make_tuple(3, 2) == (3, 3) and make_tuple([1, 2], 2) == (1, 2)
  assert all_same([]) and all_same([1, 1]) and not all_same([1, 2])
  assert fully_flatten([[1, [2]], np.array([3, 4])]) == [1, 2, 3, 4]
  assert get_child({"a": [0, {"b": 5}]}, "a.1.b") == 5
  assert merge_dicts([{"a": 1}, {"b": 2}]) == {"a": 1, "b": 2}
  with pytest.raises(AssertionError): merge_dicts([{"a": 1}, {"a": 2}])  # tinygrad's error type, also a ValueError
  assert strip_parens("(1+(2+3))") == "1+(2+3)" and strip_parens("(int)(1+2)") == "(int)(1+2)"
  assert pathlib.Path(temp("x")).parent == pathlib.Path(tempfile.gettempdir())

def test_fetch_reads_a_file_url_and_says_why_a_download_failed(tmp_path, monkeypatch):
  monkeypatch.setenv("TINYVIZ_CACHE", str(tmp_path / "cache"))
  src = tmp_path / "data.bin"; src.write_bytes(b"\x01\x02")
  assert fetch(src.as_uri(), name="d.bin").read_bytes() == b"\x01\x02"
  url = "http://127.0.0.1:9/nothing-listens-here"  # port 9 (discard): refused at once, no network needed
  with pytest.raises(OSError, match="could not download http://127.0.0.1:9/nothing-listens-here"): fetch(url)
  assert not list((tmp_path / "cache" / "downloads").glob("*.part"))  # no half-written file left behind

# ----- a bound variable stands for its value

def test_bound_variable_slices_and_indexes_as_its_value():
  i = Variable("i", 1, 10)
  ones = Tensor.ones(10).contiguous()
  for s in (2, 5):
    assert (ones[:i.bind(s)] + 1).tolist() == [2.0] * s
    assert ones[:i.bind(s)].sum().item() == s
  assert Tensor([10, 20, 30])[Variable("j", 0, 2).bind(1)].item() == 20
  assert i.bind(3).unbind() == (i, 3)
  with pytest.raises(ValueError, match="range"): i.bind(11)
  with pytest.raises(TypeError): (i + 1).bind(2)
