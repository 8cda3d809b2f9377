"""Render a linear program as C. The ALU spellings are a table; CUDA reuses it with its own prefix and index names."""
from __future__ import annotations
import math
from collections import Counter
from typing import Callable
from tinygrad.dtype import DType, dtypes
from tinygrad.uop.ops import UOp, Ops, GroupOp
from tinygrad.codegen.linearize import Program
from tinygrad.codegen.upcast import MAX_UPCAST

def _fn(name: str) -> Callable[[DType, list[str]], str]:
  def f(dt: DType, a: list[str]) -> str:
    if dt == dtypes.float64: return f"{name}({a[0]})"
    if dt == dtypes.float16: return f"(_Float16){name}f((float){a[0]})"
    return f"{name}f({a[0]})"
  return f

def _select(dt: DType, mask: str, a: str, b: str) -> str:
  """Lane by lane `mask ? a : b` on vectors (GCC's C has no ?: on them): a mask lane is all ones or all zeros, and
  casting a vector to another of the same size keeps its bits."""
  m = dtypes.bool.vec(dt.count).cname
  return f"(({dt.cname})((({m}){a}&{mask})|(({m}){b}&~{mask})))"

def _max(dt: DType, a: list[str]) -> str:
  return _select(dt, f"({a[0]}<{a[1]})", a[1], a[0]) if dt.count > 1 else f"(({a[0]}<{a[1]})?{a[1]}:{a[0]})"

code_for_op: dict[Ops, Callable[[DType, list[str]], str]] = {
  Ops.EXP2: _fn("exp2"), Ops.LOG2: _fn("log2"), Ops.SIN: _fn("sin"), Ops.SQRT: _fn("sqrt"), Ops.TRUNC: _fn("trunc"),
  Ops.RECIP: lambda dt, a: f"(1/{a[0]})", Ops.NEG: lambda dt, a: f"(!{a[0]})" if dt == dtypes.bool else f"(-{a[0]})",
  Ops.ADD: lambda dt, a: f"({a[0]}+{a[1]})", Ops.SUB: lambda dt, a: f"({a[0]}-{a[1]})", Ops.MUL: lambda dt, a: f"({a[0]}*{a[1]})",
  Ops.FDIV: lambda dt, a: f"({a[0]}/{a[1]})", Ops.IDIV: lambda dt, a: f"({a[0]}/{a[1]})", Ops.MOD: lambda dt, a: f"({a[0]}%{a[1]})",
  Ops.MAX: _max, Ops.POW: lambda dt, a: f"pow{'' if dt == dtypes.float64 else 'f'}({a[0]},{a[1]})",
  Ops.CMPLT: lambda dt, a: f"({a[0]}<{a[1]})", Ops.CMPNE: lambda dt, a: f"({a[0]}!={a[1]})", Ops.CMPEQ: lambda dt, a: f"({a[0]}=={a[1]})",
  Ops.AND: lambda dt, a: f"({a[0]}&{a[1]})", Ops.OR: lambda dt, a: f"({a[0]}|{a[1]})", Ops.XOR: lambda dt, a: f"({a[0]}^{a[1]})",
  Ops.SHL: lambda dt, a: f"({a[0]}<<{a[1]})", Ops.SHR: lambda dt, a: f"({a[0]}>>{a[1]})",
  Ops.WHERE: lambda dt, a: f"({a[0]}?{a[1]}:{a[2]})", Ops.MULACC: lambda dt, a: f"(({a[0]}*{a[1]})+{a[2]})",
}

def render_const(v, dt: DType) -> str:
  if dt.count > 1: return render_const(v, dt.scalar)  # type: ignore[arg-type]  # with vectors, C broadcasts a scalar
  if dt == dtypes.bool: return "1" if v else "0"
  if dtypes.is_float(dt):
    if math.isnan(v): s = "NAN"
    elif math.isinf(v): s = "INFINITY" if v > 0 else "-INFINITY"
    else: s = repr(float(v)) + ("" if dt == dtypes.float64 else "f")
    return s if dt != dtypes.float16 else f"((_Float16){s})"
  if dt == dtypes.int64: return f"{v}ll" if v != dtypes.min(dt) else "(-9223372036854775807ll-1)"
  if dt == dtypes.uint64: return f"{v}ull"
  if dt == dtypes.uint32: return f"{v}u"
  if dt == dtypes.int32 and v == dtypes.min(dt): return "(-2147483647-1)"
  return str(v)

VEC_SELECT = {Ops.MAX, Ops.WHERE, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ}

def _typedef(d: DType) -> str:
  """A GCC vector type. A bool vector is a lane mask: int lanes, the size of the float32 lanes that were compared."""
  scalar, size = ("int", 4 * d.count) if d.scalar == dtypes.bool else (d.scalar.cname, d.itemsize)  # type: ignore[union-attr]
  return f"typedef {scalar} {d.cname} __attribute__((vector_size({size})));\n"

class CStyleRenderer:
  kernel_prefix = "void"
  buffer_qualifier = "restrict"
  code_for_op = code_for_op  # a subclass may respell ops (CUDA: half arithmetic)
  max_upcast = MAX_UPCAST  # copies of a loop body the optimizer may make (GPU renderers want fewer)
  parallel_threshold = 1 << 20  # below this much work, waking the other threads costs more than it saves
  parallel_stream_bytes = 1 << 25  # a memory-bound kernel moving more than this gains from a second core
  def param(self, p: UOp, written: bool) -> str:
    return f"{'' if written else 'const '}{p.dtype.cname}* {self.buffer_qualifier} data{p.arg[0]}"
  def loop_open(self, r: UOp, name: str) -> str: return f"for (int {name} = 0; {name} < {r.src[0].arg}; {name}++) {{"
  def bitcast(self, to: DType, frm: DType, x: str) -> str: return f"((union {{{frm.cname} a; {to.cname} b;}}){{.a={x}}}).b"

  def render(self, p: Program) -> str:
    uops = p.uops
    users = Counter(s for u in uops for s in u.src)
    written = {u.src[0] for u in uops if u.op is Ops.STORE}
    r: dict[UOp, str] = {s: render_const(s.arg, s.dtype) for u in uops for s in u.src if s.op is Ops.CONST}
    lines: list[str] = []
    owners: list[list[UOp]] = []  # per emitted line, the uops it renders: the line's own and those inlined into it
    folded: dict[UOp, list[UOp]] = {}  # an inlined uop's text holds these uops
    depth, counts = 1, Counter()
    acc_ops: dict[UOp, Ops] = {u.src[0]: u.arg for u in uops if u.op is Ops.ACC_UPDATE}
    first_loop = next((u for u in uops if u.op is Ops.RANGE), None)
    last_acc: UOp | None = None
    cur_accs: list[UOp] = []  # the accumulators of the reduction whose loops open next
    inlined: set[UOp] = set()
    def name(prefix: str) -> str:
      counts[prefix] += 1
      return f"{prefix}{counts[prefix] - 1}"
    def parts(u: UOp) -> list[UOp]:
      return [u] + [x for s in u.src if s in inlined for x in folded.get(s, ())]
    def emit(s: str, own: list[UOp] | None = None) -> None:
      o = own if own is not None else parts(u)
      for piece in ("  " * depth + s).split("\n"): lines.append(piece); owners.append(o)  # a renderer may emit two lines at once
    for i, u in enumerate(uops):
      op, dt = u.op, u.dtype
      prev_op = uops[i - 1].op if i else None
      if op in (Ops.DEFINE_GLOBAL, Ops.SINK): r[u] = f"data{u.arg[0]}" if op is Ops.DEFINE_GLOBAL else ""; continue
      if op is Ops.CONST: r[u] = render_const(u.arg, dt); continue
      if op is Ops.DEFINE_VAR: r[u] = u.arg[0]; continue
      if op is Ops.RANGE:
        r[u] = name("gidx" if u.arg[1] == "global" else "ridx")
        nxt = uops[i + 1]
        red_op = acc_ops.get(last_acc) if u.arg[1] == "reduce" and len(cur_accs) == 1 else None
        red = f" reduction({'+' if red_op is Ops.ADD else '*' if red_op is Ops.MUL else 'max'}:{r[last_acc]})" if red_op else ""
        simd = " simd" if red_op in (Ops.ADD, Ops.MAX) and dtypes.is_float(last_acc.dtype) and nxt.op is not Ops.RANGE else ""
        if u is first_loop and p.parallel: emit(f"#pragma omp parallel for{simd}{red}", [u])
        elif simd: emit(f"#pragma omp simd{red}", [u])
        emit(self.loop_open(u, r[u])); depth += 1; continue
      if op is Ops.ENDRANGE: depth -= 1; emit("}"); continue
      if op is Ops.DEFINE_ACC:
        cur_accs = cur_accs + [u] if prev_op is Ops.DEFINE_ACC else [u]
        last_acc, r[u] = u, f"acc{u.arg}"
        init = r[u.src[0]] if dt.count == 1 else f"{{{', '.join([r[u.src[0]]] * dt.count)}}}"
        emit(f"{dt.cname} {r[u]} = {init};"); continue
      if op is Ops.ACC_UPDATE:
        a, v = r[u.src[0]], r[u.src[1]]
        upd = self.code_for_op[Ops.MAX](dt, [a, v]) if u.arg is Ops.MAX else f"{a} {'+' if u.arg is Ops.ADD else '*'} {v}"
        emit(f"{a} = {upd};"); continue
      if op is Ops.REDUCE: r[u] = r[p.acc_of[u]]; continue
      if op is Ops.LOAD and dt.count > 1:  # a vector load: count consecutive scalars from base
        r[u] = name("val")
        emit(f"{dt.cname} {r[u]} = {{0}};")
        copy = f"__builtin_memcpy(&{r[u]}, {r[u.src[0]]}+{r[u.src[1]]}, sizeof({r[u]}));"
        emit(copy if len(u.src) == 2 else f"if ({r[u.src[2]]}) {copy}"); continue
      if op is Ops.STORE and u.src[2].dtype.count > 1:
        if u.src[2] in inlined:
          nm = name("alu"); emit(f"{u.src[2].dtype.cname} {nm} = {r[u.src[2]]};", folded.get(u.src[2], [u.src[2]])); r[u.src[2]] = nm
          inlined.discard(u.src[2])
        emit(f"__builtin_memcpy({r[u.src[0]]}+{r[u.src[1]]}, &{r[u.src[2]]}, sizeof({r[u.src[2]]}));"); continue
      if op is Ops.LOAD:
        buf, idx = r[u.src[0]], r[u.src[1]]
        expr = f"{buf}[{idx}]" if len(u.src) == 2 else f"({r[u.src[2]]}?{buf}[{idx}]:{render_const(0, dt)})"
        r[u] = name("val"); emit(f"{dt.cname} {r[u]} = {expr};"); continue
      if op is Ops.STORE: emit(f"{r[u.src[0]]}[{r[u.src[1]]}] = {r[u.src[2]]};"); continue
      if op is Ops.CAST: expr = f"(({dt.cname})({r[u.src[0]]}))"
      elif op is Ops.GEP: expr = f"{r[u.src[0]]}[{u.arg}]"
      elif op is Ops.VECTORIZE:  # a lane mask from scalar bools: true is all ones
        expr = f"(({dt.cname}){{{', '.join(f'-{r[s]}' if dt.scalar == dtypes.bool else r[s] for s in u.src)}}})"
      elif op is Ops.BITCAST: expr = self.bitcast(dt, u.src[0].dtype, r[u.src[0]])
      elif op in GroupOp.ALU:
        spread = dt.count > 1 and op in VEC_SELECT  # scalar operands of a vector select or compare: one copy per lane
        if op is Ops.MAX or spread:  # operands that appear twice in the expression: name them, or nested maxes grow exponentially
          for s in u.src:
            if s in inlined: nm = name("alu"); emit(f"{s.dtype.cname} {nm} = {r[s]};", folded.get(s, [s])); inlined.discard(s); r[s] = nm
        args = [f"(({s.dtype.vec(dt.count).cname}){{{', '.join([r[s]] * dt.count)}}})" if spread and s.dtype.count == 1 and s.dtype != dtypes.bool
                else r[s] for s in u.src]
        expr = _select(dt, *args) if op is Ops.WHERE and u.src[0].dtype.count > 1 else self.code_for_op[op](dt, args)
      else: raise NotImplementedError(f"the C renderer has no rule for {op}")
      if users[u] <= 1 and dt != dtypes.bool and op is not Ops.BITCAST: r[u] = expr; folded[u] = parts(u); inlined.add(u)  # used once: inline it
      else: r[u] = name("alu"); emit(f"{dt.cname} {r[u]} = {expr};")
    params = ", ".join(self.param(pp, pp in written) for pp in p.params)
    # each float vector type and its lane mask type (int lanes of the same size: what GCC's vector compares return)
    vec_types = sorted({d.cname: d for u in uops if u.dtype.count > 1 for d in (u.dtype, dtypes.bool.vec(u.dtype.count))}.values(), key=lambda d: d.name)
    p.line_uops = [[] for _ in vec_types] + [list(p.params)] + [list(dict.fromkeys(o)) for o in owners] + [[]]
    return "".join(map(_typedef, vec_types)) + f"{self.kernel_prefix} {p.name}({params}) {{\n" + "\n".join(lines) + "\n}"

PRELUDE = "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n"
