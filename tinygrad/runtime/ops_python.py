"""The PYTHON device: interprets the same linear program the C renderer prints, one scalar at a time. Slow, but it
needs no compiler, and because it shares `exec_alu` with constant folding it is the reference for the others."""
from __future__ import annotations
import struct
from typing import Any
from tinygrad.dtype import DType, dtypes, f32_to_bf16_bits, bf16_bits_to_f32, float_to_fp8, fp8_to_float
from tinygrad.uop.ops import UOp, Ops, GroupOp
from tinygrad.uop.alu import exec_alu, truncate
from tinygrad.codegen.linearize import Program
from tinygrad.renderer.cstyle import CStyleRenderer
from tinygrad.device import Buffer, host_allocator

class _HalfView:
  """memoryview cannot cast to half: read and write float16 through struct."""
  def __init__(self, mv: memoryview): self.mv = mv
  def __getitem__(self, i: int) -> float: return struct.unpack_from("e", self.mv, 2 * i)[0]
  def __setitem__(self, i: int, v: float) -> None: struct.pack_into("e", self.mv, 2 * i, truncate[dtypes.float16](v))

class _BF16View:
  """bfloat16 as its 16 bits: a value read is the float it stands for, a value written is rounded to nearest even."""
  def __init__(self, mv: memoryview): self.mv = mv.cast("H")
  def __getitem__(self, i: int) -> float: return bf16_bits_to_f32(self.mv[i])
  def __setitem__(self, i: int, v: float) -> None: self.mv[i] = f32_to_bf16_bits(v)

class _FP8View:
  """fp8 as its 8 bits, converted on each read and write."""
  def __init__(self, mv: memoryview, dt: DType): self.mv, self.dt = mv.cast("B"), dt
  def __getitem__(self, i: int) -> float: return fp8_to_float(self.mv[i], self.dt)
  def __setitem__(self, i: int, v: float) -> None: self.mv[i] = float_to_fp8(v, self.dt)

def _bits(v: Any, dt: DType) -> bytes:
  if dt == dtypes.bfloat16: return struct.pack("H", f32_to_bf16_bits(v))
  return bytes([float_to_fp8(v, dt)]) if dt in dtypes.fp8s else struct.pack(dt.fmt, v)
def _from_bits(b: bytes, dt: DType) -> Any:
  if dt == dtypes.bfloat16: return bf16_bits_to_f32(struct.unpack("H", b)[0])
  return fp8_to_float(b[0], dt) if dt in dtypes.fp8s else struct.unpack(dt.fmt, b)[0]

def _view(b: Buffer) -> Any:
  mv = b.as_memoryview()
  if b.dtype == dtypes.float16: return _HalfView(mv)
  if b.dtype == dtypes.bfloat16: return _BF16View(mv) if b.nbytes else []
  if b.dtype in dtypes.fp8s: return _FP8View(mv, b.dtype) if b.nbytes else []
  return mv.cast(b.dtype.fmt) if b.nbytes else []

class _ShownC(CStyleRenderer): source_only = True

class PythonDevice:
  graph = None  # no graph runner (engine/jit.py graph_class)
  allocator = host_allocator  # its buffers are host memory (tinygrad's Device[d].allocator)
  renderer = _ShownC()  # the source shown for a PYTHON kernel is the C of the same program (shown, never compiled)
  def __init__(self, name: str): self.name = name
  def compile(self, progs: list[Program]) -> float: return 0.0
  def synchronize(self) -> None: pass
  def run(self, p: Program, bufs: list[Buffer]) -> None:
    uops = p.uops
    views = {u: _view(b) for u, b in zip(p.params, bufs)}
    # where each loop starts and ends, to jump without searching
    end_of: dict[UOp, int] = {}
    start_of: dict[UOp, int] = {}
    for i, u in enumerate(uops):
      if u.op is Ops.RANGE: start_of[u] = i
      elif u.op is Ops.ENDRANGE: end_of[u.src[0]] = i
    vals: dict[UOp, Any] = {}
    pc, n = 0, len(uops)
    while pc < n:
      u = uops[pc]
      op = u.op
      if op in GroupOp.ALU or op is Ops.CAST:
        vals[u] = exec_alu(op, u.dtype, [vals[s] for s in u.src])
      elif op is Ops.LOAD:
        if len(u.src) == 3 and not vals[u.src[2]]: vals[u] = truncate[u.dtype](0)
        else:
          idx = vals[u.src[1]]
          if not 0 <= idx < u.src[0].arg[1]: raise IndexError(f"{p.name}: load of index {idx} out of bounds of a buffer of {u.src[0].arg[1]}")
          vals[u] = views[u.src[0]][idx]
      elif op is Ops.STORE:
        if len(u.src) < 4 or vals[u.src[3]]: views[u.src[0]][vals[u.src[1]]] = vals[u.src[2]]  # src[3]: a gate (codegen/scatter.py)
      elif op is Ops.CONST: vals[u] = u.arg  # a narrow float's arg is already rounded to it (UOp.const)
      elif op is Ops.RANGE:
        if u.src[0].arg <= 0: pc = end_of[u] + 1; continue
        vals[u] = 0
      elif op is Ops.ENDRANGE:
        r = u.src[0]
        vals[r] += 1
        if vals[r] < r.src[0].arg: pc = start_of[r] + 1; continue
      elif op is Ops.DEFINE_ACC: vals[u] = u.src[0].arg
      elif op is Ops.ACC_UPDATE: vals[u.src[0]] = exec_alu(u.arg, u.dtype, [vals[u.src[0]], vals[u.src[1]]])
      elif op is Ops.REDUCE: vals[u] = vals[p.acc_of[u]]
      elif op is Ops.BITCAST:
        src = u.src[0]
        vals[u] = _from_bits(_bits(vals[src], src.dtype), u.dtype)
      elif op in (Ops.DEFINE_GLOBAL, Ops.SINK, Ops.DEFINE_VAR, Ops.AFTER): pass  # AFTER: its loop of stores ran (codegen/scatter.py)
      else: raise NotImplementedError(f"the PYTHON device cannot run {op}")
      pc += 1
