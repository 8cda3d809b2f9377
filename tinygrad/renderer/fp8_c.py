"""fp8 in C kernels (the CPU device), as bfloat16 is done there: a value is its 8 bits in an unsigned char, widened to
float exactly (tg_fp82f) and narrowed with rounding to nearest even and tinygrad's saturation (tg_f2fp8, the same rule
as dtype.float_to_fp8); arithmetic and compares on it happen in float, each result rounded back to the fp8."""
from __future__ import annotations
from typing import TYPE_CHECKING
from tinygrad.dtype import DType, dtypes, float_to_fp8, _FP8
from tinygrad.uop.ops import UOp, Ops, UPat, PatternMatcher
if TYPE_CHECKING: from tinygrad.renderer.cstyle import RenderCtx

# per format: (mantissa bits, exponent bias, largest finite, kind: 0 e4m3 (no inf, 0x7f nan), 1 e5m2 (IEEE-like), 2 fnuz)
def _fmt(dt: DType) -> str:
  m, bias, top = _FP8[dt]
  return f"{m}, {bias}, {top!r}f, {0 if dt == dtypes.fp8e4m3 else 1 if dt == dtypes.fp8e5m2 else 2}"

def _to_float(ctx: RenderCtx, s: UOp) -> str:
  if s.dtype == dtypes.bfloat16: return f"tg_bf2f({ctx[s]})"
  if s.dtype not in dtypes.fp8s: return ctx[s]
  m, bias, _, kind = _fmt(s.dtype).split(", ")
  return f"tg_fp82f({ctx[s]}, {m}, {bias}, {kind})"
def _narrow(dt: DType, f: str) -> str: return f"tg_f2fp8((float)({f}), {_fmt(dt)})"

def _alu(ctx: RenderCtx, x: UOp) -> str:
  from tinygrad.renderer.cstyle import code_for_op
  out = code_for_op[x.op](dtypes.float32, [_to_float(ctx, s) for s in x.src])
  return _narrow(x.dtype, out) if x.dtype in dtypes.fp8s else out
def _acc(ctx: RenderCtx, x: UOp, a: UOp, v: UOp) -> str:
  from tinygrad.renderer.cstyle import _max
  fa, fv = _to_float(ctx, a), _to_float(ctx, v)
  out = _max(dtypes.float32, [fa, fv]) if x.arg is Ops.MAX else f"{fa} {'+' if x.arg is Ops.ADD else '*'} {fv}"
  return f"{ctx[a]} = {_narrow(a.dtype, out)};"

def fp8_rewrite(alu_ops: tuple[Ops, ...]) -> PatternMatcher:
  return PatternMatcher([
    (UPat(Ops.CONST, dtype=dtypes.fp8s, name="x"), lambda ctx, x: f"((unsigned char){hex(float_to_fp8(float(x.arg), x.dtype))})"),
    (UPat(Ops.CAST, dtype=dtypes.fp8s, src=(UPat.var("a"),), name="x"), lambda ctx, x, a: _narrow(x.dtype, _to_float(ctx, a))),
    (UPat(Ops.CAST, dtype=dtypes.bfloat16, src=(UPat.var("a", dtypes.fp8s),)), lambda ctx, a: f"tg_f2bf({_to_float(ctx, a)})"),
    (UPat(Ops.CAST, src=(UPat.var("a", dtypes.fp8s),), name="x"), lambda ctx, x, a: f"(({ctx.tname(x.dtype)}){_to_float(ctx, a)})"),
    (UPat(alu_ops, dtype=dtypes.fp8s, name="x"), _alu),
    (UPat((Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ), src=(UPat(dtype=dtypes.fp8s), UPat()), name="x"), _alu),
    (UPat(Ops.ACC_UPDATE, src=(UPat.var("a", dtypes.fp8s), UPat.var("v")), name="x"), _acc),
  ])

# the C side of dtype.float_to_fp8 / fp8_to_float (nearbyintf rounds half to even in the default rounding mode)
FP8_C = r"""
static inline float tg_fp82f(unsigned char b, int m, int bias, int kind) {
  int e = (b & 0x7f) >> m, mant = b & ((1 << m) - 1); float s = (b & 0x80) ? -1.0f : 1.0f;
  if (kind == 2 && b == 0x80) return NAN;
  if (kind == 0 && (b & 0x7f) == 0x7f) return NAN;
  if (kind == 1 && e == 0x1f) return mant ? NAN : s * INFINITY;
  return s * (e == 0 ? ldexpf((float)mant, 1 - bias - m) : ldexpf((float)((1 << m) + mant), e - bias - m));
}
static inline unsigned char tg_f2fp8(float x, int m, int bias, float top, int kind) {
  unsigned char sign = signbit(x) ? 0x80 : 0, out;
  if (kind == 2) { if (!isfinite(x)) return 0x80; }
  else if (isnan(x) || (isinf(x) && kind == 0)) return sign | 0x7f;
  else if (isinf(x)) return sign | 0x7c;
  float a = fabsf(x), r; int emin = 1 - bias, e = emin;
  if (a != 0.0f) { frexpf(a, &e); e -= 1; if (e < emin) e = emin; }
  r = ldexpf(nearbyintf(ldexpf(a, m - e)), e - m);  /* a's binade: subnormals share the lowest one; scaling is exact */
  if (r > top) r = top;
  if (r == 0.0f) return kind == 2 ? 0 : sign;
  frexpf(r, &e); e -= 1;
  if (e < emin) out = (unsigned char)ldexpf(r, m - emin);  /* subnormal: exponent field 0 */
  else out = (unsigned char)(((e + bias) << m) | (int)((ldexpf(r, -e) - 1.0f) * (float)(1 << m)));
  out |= sign;
  return (kind == 2 && out == 0x80) ? 0 : out;  /* fnuz has no -0 */
}
"""
