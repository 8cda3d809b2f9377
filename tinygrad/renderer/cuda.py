"""Render a linear program as CUDA C: the C renderer's rules, with CUDA's own in front for what it spells differently
(half math, bit casts, the threads that stand for the global loops), one thread per point of the global loops.
All global loops become one flat thread index `gid = blockIdx.x*blockDim.x+threadIdx.x` (a 1-D grid of THREADS-wide
blocks, guarded by `gid < prod(global_size)`), split into the loops' indices with the innermost fastest, so
neighbouring threads touch neighbouring elements. Reduction loops stay `for` loops inside the thread."""
from __future__ import annotations
from tinygrad.dtype import dtypes
from tinygrad.helpers import prod, ceildiv
from tinygrad.uop.ops import UOp, Ops, UPat, PatternMatcher
from tinygrad.codegen.linearize import Program
from tinygrad.renderer.cstyle import CStyleRenderer, RenderCtx, code_for_op, string_rewrite, for_loop

THREADS = 256  # threads per block: every kernel is launched with blocks this wide (fewer when it has fewer points)

# NVRTC has no math.h and no cuda_fp16.h on its include path: the prelude defines what the kernels use, so NVRTC and
# `nvcc --ptx` compile the same text. `half` converts through float with one PTX instruction each way and rounds every
# operation's result to half, as the PYTHON device does.
PRELUDE = r"""#ifndef INFINITY
#define INFINITY (__int_as_float(0x7f800000))
#endif
#ifndef NAN
#define NAN (__int_as_float(0x7fffffff))
#endif
template <class T, class F> __device__ __forceinline__ T tg_bitcast(F x) { union { F f; T t; } u; u.f = x; return u.t; }
"""
HALF = r"""struct half {
  unsigned short x;
  half() = default;
  __device__ __forceinline__ half(float f) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(x) : "f"(f)); }
  __device__ __forceinline__ operator float() const { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x)); return f; }
};
__device__ __forceinline__ half operator+(half a, half b) { return half((float)a + (float)b); }
__device__ __forceinline__ half operator-(half a, half b) { return half((float)a - (float)b); }
__device__ __forceinline__ half operator*(half a, half b) { return half((float)a * (float)b); }
__device__ __forceinline__ half operator/(half a, half b) { return half((float)a / (float)b); }
__device__ __forceinline__ half operator-(half a) { return half(-(float)a); }
"""

# bfloat16 as in the C renderer (its 16 bits in an unsigned short): the same two conversions, spelled for CUDA
BF16 = r"""__device__ __forceinline__ float tg_bf2f(unsigned short b) { return __uint_as_float((unsigned int)b << 16); }
__device__ __forceinline__ unsigned short tg_f2bf(float f) {
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)(((u >> 16) & 0x8000u) | 0x7fc0u);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
"""

def prelude(srcs: list[str]) -> str:
  """What a batch of kernel sources needs in front of it (the half type, the bfloat16 conversions only where a kernel uses them)."""
  return PRELUDE + (HALF if any("half" in s for s in srcs) else "") + (BF16 if any("tg_bf2f" in s or "tg_f2bf" in s for s in srcs) else "")

def launch_dims(global_size: tuple[int, ...]) -> tuple[int, int]:
  """(blocks, threads per block) for a kernel: one thread per point of its global loops."""
  n = prod(global_size)
  return (ceildiv(n, THREADS), THREADS) if n > THREADS else (1, max(n, 1))

def _half_math(ctx: RenderCtx, x: UOp) -> str:
  """A function C spells for float, on half: computed in float and rounded back, like the PYTHON device."""
  return f"((half){code_for_op[x.op](dtypes.float32, [f'(float){a}' for a in ctx.args(x)])})"

def _thread(ctx: RenderCtx, x: UOp) -> str | None:
  """A global loop is no loop: its index comes from the flat thread index (the `{` stands where a loop's would: the
  ENDRANGE that closes the loop closes it)."""
  if x.arg[1] != "global": return None
  first, index = _thread_index_lines(ctx.global_ranges)[x]
  return (first + "\n" if first else "") + f"int {ctx[x]} = {index}; {{"

# the C rules CUDA changes, in front of C's
cuda_rewrite = PatternMatcher([
  (UPat((Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.TRUNC, Ops.POW), dtype=dtypes.float16, name="x"), _half_math),
  # `1/x` on a half is ambiguous in C++ (int/float or half/half): spell the one in x's type
  (UPat(Ops.RECIP, dtype=dtypes.float16, src=(UPat.var("a"),)), lambda ctx, a: f"(((half)1.0f)/{ctx[a]})"),
  (UPat(Ops.BITCAST, src=(UPat.var("a"),), name="x"), lambda ctx, x, a: f"tg_bitcast<{ctx.tname(x.dtype)}>({ctx[a]})"),
  (UPat(Ops.RANGE, name="x"), _thread),
  (UPat(Ops.RANGE, src=(UPat.cvar("n"),), name="x"), for_loop),  # no OpenMP pragmas: they mean nothing to a CUDA thread
]) + string_rewrite

class CUDARenderer(CStyleRenderer):
  kernel_prefix = f'extern "C" __global__ void __launch_bounds__({THREADS})'
  buffer_qualifier = "__restrict__"
  string_rewrite = cuda_rewrite
  type_names = {dtypes.float16: "half", dtypes.bfloat16: "unsigned short"}  # half: the type the prelude defines
  max_upcast = 16  # a 4x4 register tile per thread: 128 accumulators would spill and leave room for few threads
  def local_size(self, p: Program) -> tuple[int, ...]: return (launch_dims(p.global_size)[1],)
  def render(self, p: Program) -> str:
    if (vec := next((u for u in p.uops if u.dtype.count > 1), None)) is not None:
      raise NotImplementedError(f"the CUDA renderer has no vector types ({vec.op} of {vec.dtype} in {p.name}): optimize with vector=False")
    if prod(p.global_size) >= 2**31: raise NotImplementedError(f"{p.name}: {prod(p.global_size)} threads do not fit the int thread index")
    return super().render(p)

def _thread_index_lines(granges: list[UOp]) -> dict[UOp, tuple[str, str]]:
  """For each global range: the line declaring gid and its guard (first range only), and the range's index from gid."""
  sizes = [g.src[0].arg for g in granges]
  out: dict[UOp, tuple[str, str]] = {}
  for i, g in enumerate(granges):
    inner = prod(sizes[i + 1:])
    idx = f"gid/{inner}" if inner > 1 else "gid"
    if i > 0: idx = f"({idx})%{sizes[i]}" if inner > 1 else f"gid%{sizes[i]}"
    first = f"int gid = blockIdx.x*blockDim.x+threadIdx.x; if (gid >= {prod(sizes)}) return;" if i == 0 else ""
    out[g] = (first, idx)
  return out
