"""Data types and tinygrad's promotion lattice."""
from __future__ import annotations
from dataclasses import dataclass
import math, functools
from typing import Callable

@dataclass(frozen=True, eq=True)
class DType:
  priority: int   # for promotion ties
  itemsize: int
  name: str
  fmt: str        # struct/memoryview format char
  cname: str      # C type name
  count: int = 1  # > 1: a vector of `count` scalars (only inside kernels the CPU renderer vectorizes)
  scalar: DType | None = None
  def __repr__(self): return f"dtypes.{self.name}"
  # compared and hashed constantly by the pattern matcher: by name (unique per dtype, "floatx8" for vectors), not by
  # every field as a dataclass would
  def __eq__(self, other: object) -> bool: return self is other or (type(other) is DType and self.name == other.name)
  def __hash__(self) -> int: return hash(self.name)
  def vec(self, n: int) -> DType: return DType(self.priority, self.itemsize * n, f"{self.name}x{n}", "", f"{self.cname}x{n}", n, self)
  def __lt__(self, other: DType): return (self.priority, self.itemsize, self.name) < (other.priority, other.itemsize, other.name)
  @property
  def nbytes(self) -> int: return self.itemsize
  @property
  def min(self): return dtypes.min(self)
  @property
  def max(self): return dtypes.max(self)

class DTypeError(TypeError, RuntimeError):
  """An op given a dtype it doesn't take: a TypeError, and the RuntimeError tinygrad raises there."""

class UnknownDTypeError(TypeError, AttributeError):
  """A dtype name that isn't one: a TypeError, and the AttributeError tinygrad raises (`dtypes` has no such attribute)."""

class dtypes:
  void = DType(-1, 0, "void", "", "void")
  bool = DType(0, 1, "bool", "?", "bool")
  int8 = DType(1, 1, "char", "b", "signed char")
  uint8 = DType(2, 1, "uchar", "B", "unsigned char")
  int16 = DType(3, 2, "short", "h", "short")
  uint16 = DType(4, 2, "ushort", "H", "unsigned short")
  int32 = DType(5, 4, "int", "i", "int")
  uint32 = DType(6, 4, "uint", "I", "unsigned int")
  int64 = DType(7, 8, "long", "q", "long long")
  uint64 = DType(8, 8, "ulong", "Q", "unsigned long long")
  float16 = DType(10, 2, "half", "e", "_Float16")
  # no C or struct type: stored as its 16 bits (the top half of a float32), computed in float32 (see docs/engine.md)
  bfloat16 = DType(11, 2, "bfloat16", None, "__bf16")  # type: ignore[arg-type]
  # 8-bit floats (OCP: e4m3 without inf, max 448; e5m2 with inf, max 57344): stored as their bits, only the PYTHON device computes in them
  fp8e4m3 = DType(8, 1, "fp8e4m3", None, "float8_e4m3")  # type: ignore[arg-type]
  fp8e5m2 = DType(9, 1, "fp8e5m2", None, "float8_e5m2")  # type: ignore[arg-type]
  # the fnuz variants (AMD's): no inf, no negative zero, 0x80 is the one nan; e4m3fnuz max 240, e5m2fnuz max 57344
  fp8e4m3fnuz = DType(8, 1, "fp8e4m3fnuz", None, "float8_e4m3fnuz")  # type: ignore[arg-type]
  fp8e5m2fnuz = DType(9, 1, "fp8e5m2fnuz", None, "float8_e5m2fnuz")  # type: ignore[arg-type]
  float32 = DType(12, 4, "float", "f", "float")
  float64 = DType(13, 8, "double", "d", "double")
  # aliases tinygrad users write
  char, uchar, short, ushort, int, uint, long, ulong = int8, uint8, int16, uint16, int32, uint32, int64, uint64
  half, float, double = float16, float32, float64
  default_float = float32
  default_int = int32
  ints = frozenset((int8, int16, int32, int64, uint8, uint16, uint32, uint64))
  uints = frozenset((uint8, uint16, uint32, uint64))
  fp8_ocp, fp8_fnuz = (fp8e4m3, fp8e5m2), (fp8e4m3fnuz, fp8e5m2fnuz)
  fp8s = fp8_ocp + fp8_fnuz
  floats = frozenset((*fp8s, float16, bfloat16, float32, float64))
  all = (bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, *fp8s, float16, bfloat16, float32, float64)
  @staticmethod
  def finfo(dt: DType) -> tuple[int, int]:
    """(exponent bits, mantissa bits) of a float dtype, as tinygrad's dtypes.finfo."""
    bits = {dtypes.float16: (5, 10), dtypes.bfloat16: (8, 7), dtypes.float32: (8, 23), dtypes.float64: (11, 52), dtypes.fp8e4m3: (4, 3),
            dtypes.fp8e5m2: (5, 2), dtypes.fp8e4m3fnuz: (4, 3), dtypes.fp8e5m2fnuz: (5, 2)}
    if dt not in bits: raise ValueError(f"finfo needs a float dtype, got {dt}")
    return bits[dt]
  @staticmethod
  def is_float(x: DType) -> bool: return x in dtypes.floats
  @staticmethod
  def is_int(x: DType) -> bool: return x in dtypes.ints
  @staticmethod
  def is_unsigned(x: DType) -> bool: return x in dtypes.uints
  @staticmethod
  def is_bool(x: DType) -> bool: return x == dtypes.bool
  @staticmethod
  def from_py(x) -> DType:
    if isinstance(x, bool): return dtypes.bool
    # an int outside int32 makes the tensor int64, as a list holding 2**40 must keep its value
    if isinstance(x, int): return dtypes.default_int if -2**31 <= x < 2**31 else dtypes.int64
    if isinstance(x, float): return dtypes.default_float
    if isinstance(x, (list, tuple)): return max((dtypes.from_py(v) for v in x), default=dtypes.default_float)
    raise TypeError(f"cannot infer a dtype from {type(x).__name__}")
  @staticmethod
  def min(dt: DType):
    if dt == dtypes.bool: return False
    if dtypes.is_int(dt): return 0 if dtypes.is_unsigned(dt) else -(2 ** (8 * dt.itemsize - 1))
    return -math.inf
  @staticmethod
  def max(dt: DType):
    if dt == dtypes.bool: return True
    if dtypes.is_int(dt): return 2 ** (8 * dt.itemsize) - 1 if dtypes.is_unsigned(dt) else 2 ** (8 * dt.itemsize - 1) - 1
    return math.inf
  @staticmethod
  def from_np(npdtype) -> DType:
    name = {"bool": "bool", "int8": "int8", "uint8": "uint8", "int16": "int16", "uint16": "uint16", "int32": "int32", "uint32": "uint32",
            "int64": "int64", "uint64": "uint64", "float16": "float16", "float32": "float32", "float64": "float64"}.get(str(npdtype))
    if name is None: raise TypeError(f"numpy dtype {npdtype} is not supported")
    return getattr(dtypes, name)
  @staticmethod
  def to_np_name(dt: DType) -> str:
    return {"bool": "bool", "char": "int8", "uchar": "uint8", "short": "int16", "ushort": "uint16", "int": "int32", "uint": "uint32",
            "long": "int64", "ulong": "uint64", "half": "float16", "float": "float32", "double": "float64"}[dt.name]

def to_dtype(x) -> DType:
  if isinstance(x, DType): return x
  if isinstance(x, str):
    if hasattr(dtypes, x) and isinstance(getattr(dtypes, x), DType): return getattr(dtypes, x)
    raise UnknownDTypeError(f"unknown dtype {x!r}")
  try: return dtypes.from_np(x)
  except TypeError: raise UnknownDTypeError(f"dtype {x!r} is not a DType, a dtype name or a numpy dtype") from None

# tinygrad's promotion lattice: an edge a -> b means a promotes to b
_promo = {dtypes.bool: [dtypes.int8, dtypes.uint8], dtypes.int8: [dtypes.int16], dtypes.int16: [dtypes.int32], dtypes.int32: [dtypes.int64],
          dtypes.int64: [dtypes.float16, dtypes.bfloat16], dtypes.uint8: [dtypes.int16, dtypes.uint16], dtypes.uint16: [dtypes.int32, dtypes.uint32],
          dtypes.uint32: [dtypes.int64, dtypes.uint64], dtypes.uint64: [dtypes.float16, dtypes.bfloat16], dtypes.float16: [dtypes.float32],
          dtypes.bfloat16: [dtypes.float32], dtypes.float32: [dtypes.float64],
          **{f8: [dtypes.float16, dtypes.bfloat16] for f8 in dtypes.fp8s}}

@functools.cache
def _ancestors(dt: DType) -> frozenset[DType]:
  return frozenset([dt]).union(*[_ancestors(p) for p in _promo.get(dt, [])])

def least_upper_dtype(*ds: DType) -> DType:
  common = frozenset.intersection(*[_ancestors(d) for d in ds])
  return min(common)

def least_upper_float(dt: DType) -> DType: return dt if dtypes.is_float(dt) else least_upper_dtype(dt, dtypes.default_float)

# tinygrad's dtype tables and converters, as its tests and scripts import them from tinygrad.dtype
DTYPES_DICT: dict[str, DType] = {k: v for k, v in vars(dtypes).items() if isinstance(v, DType) and not k.startswith(("default", "void"))}
INVERSE_DTYPES_DICT: dict[str, str] = {**{v.cname: k for k, v in DTYPES_DICT.items() if k == v.name}, "void": "void"}
def _fields() -> dict[str, DType]: return DTYPES_DICT
dtypes.fields = staticmethod(_fields)  # type: ignore[attr-defined]

def _to_np_dtype(dt: DType | None) -> type | None:
  """The numpy scalar type holding dt's values (np.float32 for dtypes.float32); None for None."""
  import numpy as np
  if dt in NO_NUMPY: return np.float32  # numpy has no bfloat16 or fp8: tinygrad hands their values out as float32
  return None if dt is None else np.dtype(dtypes.to_np_name(dt)).type
def _from_np_dtype(npdtype) -> DType:
  import numpy as np
  return dtypes.from_np(np.dtype(npdtype))
def _to_torch_dtype(dt: DType):
  import torch
  return {dtypes.bool: torch.bool, dtypes.int8: torch.int8, dtypes.uint8: torch.uint8, dtypes.int16: torch.int16, dtypes.uint16: torch.uint16,
          dtypes.int32: torch.int32, dtypes.uint32: torch.uint32, dtypes.int64: torch.int64, dtypes.uint64: torch.uint64,
          dtypes.float16: torch.float16, dtypes.bfloat16: torch.bfloat16, **{f8: torch.uint8 for f8 in dtypes.fp8s},
          dtypes.float32: torch.float32, dtypes.float64: torch.float64}[dt]  # fp8: its storage, as tinygrad (tests view the bytes)
def _from_torch_dtype(tdt) -> DType:
  return next(dt for dt in dtypes.all if _to_torch_dtype(dt) == tdt)

def sum_acc_dtype(dt: DType) -> DType:
  """What sum() accumulates dt in: unsigned ints in at least uint32, ints and bools in at least int32, floats as they are
  (at least float32)."""
  if dtypes.is_unsigned(dt): return least_upper_dtype(dt, dtypes.uint32)
  if dtypes.is_int(dt) or dt == dtypes.bool: return least_upper_dtype(dt, dtypes.int32)
  return least_upper_dtype(dt, dtypes.float32)

def can_lossless_cast(dt0: DType, dt1: DType) -> bool:
  """Does every value of dt0 survive a cast to dt1?"""
  if dt0 == dt1 or dt0 == dtypes.bool: return True
  if dt1 == dtypes.bool: return False
  if dt1 in NO_NUMPY: return False  # tinygrad 0.14 counts no cast into bfloat16 or fp8 as lossless (conservative: no cast is dropped)
  if dtypes.is_float(dt1):
    if dtypes.is_float(dt0): return dt1.itemsize > dt0.itemsize  # half and bfloat16 hold different values: neither holds the other
    mantissa = {2: 11, 4: 24, 8: 53}[dt1.itemsize]  # an int fits if all its bits fit the mantissa
    return 8 * dt0.itemsize - (0 if dtypes.is_unsigned(dt0) else 1) <= mantissa
  if dtypes.is_float(dt0): return False
  if dtypes.is_unsigned(dt1): return dtypes.is_unsigned(dt0) and dt1.itemsize >= dt0.itemsize
  return dt1.itemsize > dt0.itemsize or (dt1.itemsize == dt0.itemsize and not dtypes.is_unsigned(dt0))

def _c_truncate(ctype):
  return lambda x: ctype(x).value
def _fp16_truncate(x: float) -> float:
  import struct
  try: return struct.unpack("e", struct.pack("e", x))[0]
  except OverflowError: return math.copysign(math.inf, x)
def f32_to_bf16_bits(x: float) -> int:
  """The bfloat16 nearest float32(x), ties to even, as its 16 bits (a nan stays a quiet nan, too large becomes inf)."""
  import struct
  try: u = struct.unpack("<I", struct.pack("<f", x))[0]
  except OverflowError: u = 0xff800000 if x < 0 else 0x7f800000
  if (u & 0x7fffffff) > 0x7f800000: return ((u >> 16) & 0x8000) | 0x7fc0
  return ((u + 0x7fff + ((u >> 16) & 1)) >> 16) & 0xffff
def bf16_bits_to_f32(b: int) -> float:
  import struct
  return struct.unpack("<f", struct.pack("<I", (b & 0xffff) << 16))[0]
def _bf16_truncate(x: float) -> float: return bf16_bits_to_f32(f32_to_bf16_bits(x))

NO_NUMPY = (dtypes.bfloat16, *dtypes.fp8s)  # dtypes numpy has no type for
# mantissa bits, exponent bias, largest finite
_FP8 = {dtypes.fp8e4m3: (3, 7, 448.0), dtypes.fp8e5m2: (2, 15, 57344.0), dtypes.fp8e4m3fnuz: (3, 8, 240.0), dtypes.fp8e5m2fnuz: (2, 16, 57344.0)}
def float_to_fp8(x: float, dt: DType) -> int:
  """The fp8 nearest x, ties to even, as its 8 bits; a finite x beyond the range saturates to the largest finite (as
  tinygrad); nan is a nan, inf is e5m2's inf and e4m3's nan (it has no inf); fnuz: nan and inf are 0x80 (its nan),
  and a zero or a value rounding to zero is +0 (it has no -0)."""
  m, bias, top = _FP8[dt]
  if dt in dtypes.fp8_fnuz:
    if not math.isfinite(x): return 0x80
    b = float_to_fp8_bits(x, m, bias, top)
    return 0 if b == 0x80 else b
  return float_to_fp8_bits(x, m, bias, top, e4m3=dt == dtypes.fp8e4m3)
def float_to_fp8_bits(x: float, m: int, bias: int, top: float, e4m3: bool = False) -> int:
  sign = 0x80 if math.copysign(1.0, x) < 0 else 0
  if math.isnan(x) or (math.isinf(x) and e4m3): return sign | 0x7f
  if math.isinf(x): return sign | 0x7c
  a, emin = abs(x), 1 - bias
  e = max(math.frexp(a)[1] - 1, emin) if a else emin  # a's binade (subnormals share the lowest one)
  r = min(round(a / 2.0 ** (e - m)) * 2.0 ** (e - m), top)  # Python's round is half to even; scaling by 2**k is exact
  if r == 0: return sign
  e = math.frexp(r)[1] - 1
  if e < emin: return sign | int(r / 2.0 ** (emin - m))  # subnormal: exponent field 0
  return sign | ((e + bias) << m) | int((r / 2.0 ** e - 1) * (1 << m))
def fp8_to_float(b: int, dt: DType) -> float:
  m, bias, _ = _FP8[dt]
  sign, e, mant = -1.0 if b & 0x80 else 1.0, (b & 0x7f) >> m, b & ((1 << m) - 1)
  if dt in dtypes.fp8_fnuz and b == 0x80: return math.nan  # fnuz: every other pattern is finite
  if dt == dtypes.fp8e4m3 and (b & 0x7f) == 0x7f: return math.nan
  if dt == dtypes.fp8e5m2 and e == 0x1f: return math.nan if mant else sign * math.inf
  return sign * (mant * 2.0 ** (1 - bias - m) if e == 0 else (1 + mant / (1 << m)) * 2.0 ** (e - bias))
# a Python value as dt would hold it: ints wrap, floats round to dt's precision (what a cast on the device gives)
import ctypes as _ct  # noqa: E402
truncate: dict[DType, Callable] = {dtypes.bool: bool, dtypes.float16: _fp16_truncate, dtypes.bfloat16: _bf16_truncate,
  **{dt: (lambda x, dt=dt: fp8_to_float(float_to_fp8(float(x), dt), dt)) for dt in dtypes.fp8s}, dtypes.float32: _c_truncate(_ct.c_float),
  dtypes.float64: _c_truncate(_ct.c_double), **{getattr(dtypes, n): _c_truncate(getattr(_ct, f"c_{n}")) for n in
  ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")}}
