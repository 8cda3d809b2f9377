"""What each ALU op computes on Python values, with C semantics and the dtype's wrap-around.
Shared by constant folding and the PYTHON device, so both agree with the generated C."""
from __future__ import annotations
import math, struct
from typing import Any, Callable
from tinygrad.dtype import DType, dtypes, _bf16_truncate, truncate as _truncate
from tinygrad.uop.ops import Ops

def _cdiv(a: int, b: int) -> int: return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
def _safe(f: Callable[[float], float], x: float) -> float:
  try: return f(x)
  except (ValueError, OverflowError): return math.nan
def _exp2(x: float) -> float:
  try: return 2.0 ** x
  except OverflowError: return math.inf
def _log2(x: float) -> float:
  if math.isnan(x) or x < 0: return math.nan
  return -math.inf if x == 0 else (math.inf if math.isinf(x) else math.log2(x))
def _fdiv(a: float, b: float) -> float:
  if b == 0: return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
  return a / b
def _pow(a: float, b: float) -> float:
  """C's pow: 0 to a negative power is inf (-inf for -0.0 to an odd one), overflow is inf, a negative base to a
  non-integer power is nan (math.pow raises for all three)."""
  odd = float(b).is_integer() and int(b) % 2 == 1
  try: return math.pow(a, b)
  except OverflowError: return math.copysign(math.inf, a) if odd else math.inf
  except ValueError: return (math.copysign(math.inf, a) if odd else math.inf) if a == 0 else math.nan
def _max(a, b):
  if isinstance(a, float) and (math.isnan(a) or math.isnan(b)): return math.nan
  return max(a, b)
def _trunc(x: float) -> float: return float(math.trunc(x)) if math.isfinite(x) else x

python_alu: dict[Ops, Callable[..., Any]] = {
  Ops.EXP2: _exp2, Ops.LOG2: _log2, Ops.SIN: lambda x: _safe(math.sin, x), Ops.SQRT: lambda x: math.sqrt(x) if x >= 0 else math.nan,
  Ops.RECIP: lambda x: _fdiv(1.0, x), Ops.NEG: lambda x: (not x) if isinstance(x, bool) else -x, Ops.TRUNC: _trunc,
  Ops.ADD: lambda a, b: a + b, Ops.SUB: lambda a, b: a - b, Ops.MUL: lambda a, b: a * b, Ops.FDIV: _fdiv,
  Ops.IDIV: lambda a, b: _cdiv(a, b) if b != 0 else 0, Ops.MOD: lambda a, b: a - b * _cdiv(a, b) if b != 0 else 0,
  Ops.MAX: _max, Ops.POW: _pow,
  Ops.CMPLT: lambda a, b: a < b, Ops.CMPNE: lambda a, b: a != b, Ops.CMPEQ: lambda a, b: a == b,
  Ops.AND: lambda a, b: a & b, Ops.OR: lambda a, b: a | b, Ops.XOR: lambda a, b: a ^ b,
  Ops.SHL: lambda a, b: a << b, Ops.SHR: lambda a, b: a >> b,
  Ops.WHERE: lambda c, a, b: a if c else b, Ops.MULACC: lambda a, b, c: a * b + c,
}

def _f32(x: float) -> float: return struct.unpack("f", struct.pack("f", x))[0]
def _f16(x: float) -> float:
  try: return struct.unpack("e", struct.pack("e", x))[0]
  except OverflowError: return math.copysign(math.inf, x)
def _wrap(bits: int, signed: bool) -> Callable[[Any], int]:
  mask, half = (1 << bits) - 1, 1 << (bits - 1)
  def f(x):
    x = int(x) & mask
    return x - (1 << bits) if signed and x >= half else x
  return f

truncate: dict[DType, Callable[[Any], Any]] = {
  dtypes.bool: bool, dtypes.float16: _f16, dtypes.bfloat16: _bf16_truncate, **{dt: _truncate[dt] for dt in dtypes.fp8s},
  dtypes.float32: _f32, dtypes.float64: float,
  **{dt: _wrap(8 * dt.itemsize, not dtypes.is_unsigned(dt)) for dt in dtypes.ints},
}

def cast_value(x: Any, dtype: DType) -> Any:
  """C's conversion: float to int truncates toward zero (out of range or nan gives 0 here instead of C's undefined value)."""
  if dtypes.is_int(dtype) and isinstance(x, float): x = math.trunc(x) if math.isfinite(x) else 0
  if dtypes.is_float(dtype): x = float(x)
  return truncate[dtype](x)

def exec_alu(op: Ops, dtype: DType, operands: list[Any]) -> Any:
  if op is Ops.CAST: return cast_value(operands[0], dtype)
  return truncate[dtype](python_alu[op](*operands))
