"""Render a linear program as C. What each op renders as is a pattern table, `string_rewrite` (tinygrad's idiom: a
PatternMatcher of (UPat, lambda ctx, x: text)); the loop around it only names values, inlines those used once,
indents, and records which uops each line renders. CUDA's renderer puts the rules it changes in front of these.
Rendering is one traced step of the kernel's context ("render"): from the LINEAR program to PROGRAM(LINEAR, SOURCE)."""
from __future__ import annotations
import math
from collections import Counter
from typing import Callable
from tinygrad.dtype import DType, dtypes, f32_to_bf16_bits
from tinygrad.uop.ops import UOp, Ops, UPat, PatternMatcher, graph_step
from tinygrad.codegen.linearize import Program
from tinygrad.codegen.upcast import MAX_UPCAST
from tinygrad.renderer.fp8_c import fp8_rewrite, FP8_C

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

# the ALU ops' spellings from (dtype, rendered operands); the ALU rule of string_rewrite reads them
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

def render_const(v, dt: DType, half: str = "_Float16") -> str:
  if dt.count > 1: return render_const(v, dt.scalar, half)  # type: ignore[arg-type]  # with vectors, C broadcasts a scalar
  if dt == dtypes.bool: return "1" if v else "0"
  if dt == dtypes.bfloat16: return f"((unsigned short){hex(f32_to_bf16_bits(float(v)))})"  # its bits: see tg_f2bf in PRELUDE
  if dtypes.is_float(dt):
    if math.isnan(v): s = "NAN"
    elif math.isinf(v): s = "INFINITY" if v > 0 else "-INFINITY"
    else: s = repr(float(v)) + ("" if dt == dtypes.float64 else "f")
    return s if dt != dtypes.float16 else f"(({half}){s})"
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

class RenderCtx:
  """One program being rendered: the text of each uop so far (`ctx[u]`) and what the rules ask about the program."""
  def __init__(self, renderer: CStyleRenderer, p: Program):
    self.renderer, self.p, self.r = renderer, p, {}
    uops = p.uops
    self.acc_ops: dict[UOp, Ops] = {u.src[0]: u.arg for u in uops if u.op is Ops.ACC_UPDATE}
    self.first_loop = next((u for u in uops if u.op is Ops.RANGE and u.arg[1] == "global"), None) or next((u for u in uops if u.op is Ops.RANGE), None)
    # a scratch array filled before the first global loop (codegen/linearize.py): a parallel region around both, each
    # thread filling its own, the loop split by `omp for`
    self.region = p.parallel and self.first_loop is not None and any(u.op is Ops.DEFINE_LOCAL for u in uops[:uops.index(self.first_loop)])
    self.global_ranges = [u for u in uops if u.op is Ops.RANGE and u.arg[1] == "global"]
    # per reduce loop: the accumulator of the reduction it opens when that reduction has one (OpenMP's clause names
    # it), and whether another loop opens inside it (only an innermost loop is a simd loop)
    self.loop_acc: dict[UOp, UOp | None] = {}
    self.nested: set[UOp] = set()
    last_acc: UOp | None = None
    cur_accs: list[UOp] = []
    for i, u in enumerate(uops):
      if u.op is Ops.DEFINE_ACC: cur_accs, last_acc = (cur_accs + [u] if i and uops[i - 1].op is Ops.DEFINE_ACC else [u]), u
      if u.op is Ops.RANGE:
        self.loop_acc[u] = last_acc if u.arg[1] == "reduce" and len(cur_accs) == 1 else None
        if uops[i + 1].op is Ops.RANGE: self.nested.add(u)
  def __getitem__(self, u: UOp) -> str: return self.r[u]
  def tname(self, dt: DType) -> str: return self.renderer.type_names.get(dt, dt.cname)
  def const(self, v, dt: DType) -> str: return render_const(v, dt, self.tname(dtypes.float16))
  def args(self, x: UOp) -> list[str]:
    """x's operands as text; a vector select or compare takes one copy of a scalar operand per lane."""
    n = x.dtype.count
    spread = n > 1 and x.op in VEC_SELECT
    return [f"(({self.tname(s.dtype.vec(n))}){{{', '.join([self.r[s]] * n)}}})" if spread and s.dtype.count == 1 and s.dtype != dtypes.bool
            else self.r[s] for s in x.src]

def _omp(ctx: RenderCtx, x: UOp) -> str:
  """The OpenMP pragma line in front of loop x, if any: the first global loop of a parallel kernel is split over
  threads; an innermost loop reducing into one float accumulator is a simd reduction."""
  acc = ctx.loop_acc.get(x)
  if acc is not None and (acc.dtype == dtypes.bfloat16 or acc.dtype in dtypes.fp8s): acc = None  # its bits: OpenMP would reduce the bits
  red_op = ctx.acc_ops.get(acc) if acc is not None else None
  red = f" reduction({'+' if red_op is Ops.ADD else '*' if red_op is Ops.MUL else 'max'}:{ctx[acc]})" if acc is not None and red_op else ""
  simd = " simd" if acc is not None and red_op in (Ops.ADD, Ops.MAX) and dtypes.is_float(acc.dtype) and x not in ctx.nested else ""
  if x is ctx.first_loop and ctx.p.parallel: return f"#pragma omp {'for' if ctx.region else 'parallel for'}{simd}{red}\n"
  return f"#pragma omp simd{red}\n" if simd else ""

def for_loop(ctx: RenderCtx, x: UOp, n: UOp) -> str: return f"for (int {ctx[x]} = 0; {ctx[x]} < {n.arg}; {ctx[x]}++) {{"

def _vector_load(ctx: RenderCtx, x: UOp, b: UOp, i: UOp, gate: UOp | None) -> str:
  """count consecutive scalars from b+i (GCC's vector types have no gather: a copy into the lanes)"""
  copy = f"__builtin_memcpy(&{ctx[x]}, {ctx[b]}+{ctx[i]}, sizeof({ctx[x]}));"
  return f"{ctx.tname(x.dtype)} {ctx[x]} = {{0}};\n" + (copy if gate is None else f"if ({ctx[gate]}) {copy}")

def _vectorize(ctx: RenderCtx, x: UOp) -> str:  # a lane mask from scalar bools: true is all ones
  if len(x.src) == 2 and x.src[0].dtype.count == 8 and x.dtype.count == 16:  # two halves (codegen/vectorize.py's _halves) joined: PRELUDE
    return f"tg_join16({ctx[x.src[0]]}, {ctx[x.src[1]]})"
  return f"(({ctx.tname(x.dtype)}){{{', '.join(f'-{ctx[s]}' if x.dtype.scalar == dtypes.bool else ctx[s] for s in x.src)}}})"

# bfloat16 has no C type here: a value is its 16 bits in an unsigned short, widened to float exactly by a shift
# (tg_bf2f) and narrowed with rounding to nearest even (tg_f2bf); arithmetic and compares on it happen in float
BF16_ALU = tuple(op for op in code_for_op if op is not Ops.WHERE)  # a select moves bits: no conversion needed
def _as_float(ctx: RenderCtx, s: UOp) -> str: return f"tg_bf2f({ctx[s]})" if s.dtype == dtypes.bfloat16 else ctx[s]
def _bf16_alu(ctx: RenderCtx, x: UOp) -> str:
  out = code_for_op[x.op](dtypes.float32, [_as_float(ctx, s) for s in x.src])
  return f"tg_f2bf({out})" if x.dtype == dtypes.bfloat16 else out
def _bf16_acc(ctx: RenderCtx, x: UOp, a: UOp, v: UOp) -> str:
  fa, fv = _as_float(ctx, a), _as_float(ctx, v)
  out = _max(dtypes.float32, [fa, fv]) if x.arg is Ops.MAX else f"{fa} {'+' if x.arg is Ops.ADD else '*'} {fv}"
  return f"{ctx[a]} = tg_f2bf({out});"
bf16_rewrite = PatternMatcher([
  (UPat(Ops.CAST, dtype=dtypes.bfloat16, src=(UPat.var("a"),)), lambda ctx, a: f"tg_f2bf((float)({ctx[a]}))"),
  (UPat(Ops.CAST, src=(UPat.var("a", dtypes.bfloat16),), name="x"), lambda ctx, x, a: f"(({ctx.tname(x.dtype)})tg_bf2f({ctx[a]}))"),
  (UPat(BF16_ALU, dtype=dtypes.bfloat16, name="x"), _bf16_alu),
  (UPat((Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ), src=(UPat(dtype=dtypes.bfloat16), UPat()), name="x"), _bf16_alu),
  (UPat(Ops.ACC_UPDATE, src=(UPat.var("a", dtypes.bfloat16), UPat.var("v")), name="x"), _bf16_acc),
])

string_rewrite = fp8_rewrite(BF16_ALU) + bf16_rewrite + PatternMatcher([  # fp8 first: its casts to and from bfloat16
  # names: these get no line of their own
  (UPat(Ops.DEFINE_GLOBAL, name="x"), lambda x: f"data{x.arg[0]}"),
  (UPat(Ops.SINK), lambda: ""),
  (UPat(Ops.CONST, name="x"), lambda ctx, x: ctx.const(x.arg, x.dtype)),
  (UPat(Ops.DEFINE_VAR, name="x"), lambda x: x.arg[0]),
  (UPat(Ops.REDUCE, name="x"), lambda ctx, x: ctx[ctx.p.acc_of[x]]),
  (UPat(Ops.AFTER, name="x"), lambda ctx, x: ctx[x.src[0]]),  # the scratch array, once its loop of stores has run
  # statements: lines
  (UPat(Ops.RANGE, src=(UPat.cvar("n"),), name="x"), lambda ctx, x, n: _omp(ctx, x) + for_loop(ctx, x, n)),
  (UPat(Ops.ENDRANGE), lambda: "}"),
  # declared inside the parallel loop: each thread its own (codegen/pack.py keeps it small enough for a thread's stack)
  (UPat(Ops.DEFINE_LOCAL, name="x"), lambda ctx, x: f"{ctx.tname(x.dtype)} {ctx[x]}[{x.arg[1]}] __attribute__((aligned(64)));"),
  (UPat(Ops.DEFINE_ACC, src=(UPat.var("c"),), name="x"),
   lambda ctx, x, c: f"{ctx.tname(x.dtype)} {ctx[x]} = {ctx[c] if x.dtype.count == 1 else '{' + ', '.join([ctx[c]] * x.dtype.count) + '}'};"),
  (UPat(Ops.ACC_UPDATE, arg=Ops.MAX, src=(UPat.var("a"), UPat.var("v")), name="x"), lambda ctx, x, a, v: f"{ctx[a]} = {_max(x.dtype, [ctx[a], ctx[v]])};"),
  (UPat(Ops.ACC_UPDATE, src=(UPat.var("a"), UPat.var("v")), name="x"),
   lambda ctx, x, a, v: f"{ctx[a]} = {ctx[a]} {'+' if x.arg is Ops.ADD else '*'} {ctx[v]};"),
  (UPat(Ops.LOAD, src=(UPat.var("b"), UPat.var("i")), name="x"),
   lambda ctx, x, b, i: _vector_load(ctx, x, b, i, None) if x.dtype.count > 1 else f"{ctx.tname(x.dtype)} {ctx[x]} = {ctx[b]}[{ctx[i]}];"),
  (UPat(Ops.LOAD, src=(UPat.var("b"), UPat.var("i"), UPat.var("g")), name="x"),
   lambda ctx, x, b, i, g: _vector_load(ctx, x, b, i, g) if x.dtype.count > 1 else
   f"{ctx.tname(x.dtype)} {ctx[x]} = ({ctx[g]}?{ctx[b]}[{ctx[i]}]:{ctx.const(0, x.dtype)});"),
  # a gated scalar store (a scatter's, codegen/scatter.py): nothing is written where the gate is false
  (UPat(Ops.STORE, src=(UPat.var("b"), UPat.var("i"), UPat.var("v"), UPat(dtype=dtypes.bool, name="g"))),
   lambda ctx, b, i, v, g: f"if ({ctx[g]}) {ctx[b]}[{ctx[i]}] = {ctx[v]};" if v.dtype.count == 1 else None),
  # a vector stored lane by lane, its lanes `arg` apart (codegen/vectorize.py's _stride): a loop, not a statement per lane
  (UPat(Ops.STORE, src=(UPat.var("b"), UPat.var("i"), UPat.var("v")), name="x"),
   lambda ctx, x, b, i, v: f"for (int lane = 0; lane < {v.dtype.count}; lane++) {ctx[b]}[{ctx[i]}+lane*{x.arg}] = {ctx[v]}[lane];"
   if x.arg is not None else None),
  (UPat(Ops.STORE, src=(UPat.var("b"), UPat.var("i"), UPat.var("v")), allow_any_len=True),
   lambda ctx, b, i, v: f"__builtin_memcpy({ctx[b]}+{ctx[i]}, &{ctx[v]}, sizeof({ctx[v]}));" if v.dtype.count > 1 else f"{ctx[b]}[{ctx[i]}] = {ctx[v]};"),
  # values: expressions, inlined where used once, else declared
  (UPat(Ops.CAST, src=(UPat.var("a"),), name="x"), lambda ctx, x, a: f"(({ctx.tname(x.dtype)})({ctx[a]}))"),
  (UPat(Ops.BITCAST, src=(UPat.var("a"),), name="x"), lambda ctx, x, a: f"((union {{{ctx.tname(a.dtype)} a; {ctx.tname(x.dtype)} b;}}){{.a={ctx[a]}}}).b"),
  (UPat(Ops.GEP, src=(UPat.var("a"),), name="x"), lambda ctx, x, a: f"{ctx[a]}[{x.arg}]"),
  (UPat(Ops.VECTORIZE, name="x"), _vectorize),
  (UPat(Ops.WHERE, name="x"), lambda ctx, x: _select(x.dtype, *ctx.args(x)) if x.src[0].dtype.count > 1 else None),
  (UPat(tuple(code_for_op), name="x"), lambda ctx, x: code_for_op[x.op](x.dtype, ctx.args(x))),
])

NAMES = {Ops.DEFINE_GLOBAL, Ops.SINK, Ops.CONST, Ops.DEFINE_VAR, Ops.REDUCE, Ops.AFTER}
STATEMENTS = {Ops.RANGE, Ops.ENDRANGE, Ops.DEFINE_ACC, Ops.ACC_UPDATE, Ops.LOAD, Ops.STORE, Ops.DEFINE_LOCAL}

class CStyleRenderer:
  kernel_prefix = "void"
  buffer_qualifier = "restrict"
  string_rewrite = string_rewrite  # a subclass puts its own rules in front (CUDA: half arithmetic, threads for loops)
  # how a type is spelled (CUDA: half); bfloat16 and fp8: their bits
  type_names: dict[DType, str] = {dtypes.bfloat16: "unsigned short", **{f8: "unsigned char" for f8 in dtypes.fp8s}}
  source_only = False  # True: the source is only shown (the PYTHON device's), never compiled: fp8 may appear in it
  fp8 = False  # True: fp8 renders as its bits with the conversions of renderer/fp8_c.py in the prelude (the CPU's C)
  max_upcast = MAX_UPCAST  # copies of a loop body the optimizer may make (GPU renderers want fewer)
  parallel_threshold = 1 << 20  # below this much work, waking the other threads costs more than it saves
  parallel_stream_bytes = 1 << 25  # a memory-bound kernel moving more than this gains from a second core

  def supported_dtypes(self) -> list[DType]:
    """The dtypes kernels can compute in (tinygrad's tests ask the renderer): every dtype the engine has but fp8, on CPU and CUDA."""
    return [d for d in dtypes.all if d not in dtypes.fp8s]

  def render(self, p: Program) -> str:
    """p's source; sets p.line_uops. Traced as the kernel context's "render" step."""
    if not self.source_only and not self.fp8 and (f8 := next((u for u in p.uops if u.dtype in dtypes.fp8s), None)) is not None:
      raise NotImplementedError(f"{p.name}: {f8.dtype} computes only on the PYTHON device here (is_dtype_supported says so); "
                                "cast to float first there")
    lin = p.lin if p.lin is not None else UOp(Ops.LINEAR, src=tuple(p.uops))
    return graph_step(lin, render_program, self, p, name="render")[1]

  def named_operands(self, u: UOp) -> tuple[UOp, ...]:
    """Operands that appear twice in u's text: inlined, nested maxes would grow exponentially, so they get a name."""
    if u.op is Ops.MAX or (u.dtype.count > 1 and u.op in VEC_SELECT): return u.src
    return (u.src[2],) if u.op is Ops.STORE and u.src[2].dtype.count > 1 else ()

  def render_text(self, p: Program) -> str:
    ctx = RenderCtx(self, p)
    uops, r, rules = p.uops, ctx.r, self.string_rewrite
    def rule(u: UOp) -> str:
      if (s := rules.rewrite(u, ctx)) is None: raise NotImplementedError(f"{type(self).__name__} has no rule for {u.op} ({u.dtype})")
      return s
    users = Counter(s for u in uops for s in u.src)
    for u in uops:
      for s in u.src:
        if s.op is Ops.CONST and s not in r: r[s] = rule(s)  # also those outside the program (an accumulator's start)
    lines: list[str] = []
    owners: list[list[UOp]] = []  # per emitted line, the uops it renders: the line's own and those inlined into it
    folded: dict[UOp, list[UOp]] = {}  # an inlined uop's text holds these uops
    inlined: set[UOp] = set()
    depth, counts = 1, Counter()
    def name(prefix: str) -> str:
      counts[prefix] += 1
      return f"{prefix}{counts[prefix] - 1}"
    def emit(s: str, own: list[UOp]) -> None:
      for piece in s.split("\n"): lines.append("  " * depth + piece); owners.append(own)
    if ctx.region: emit("#pragma omp parallel\n{", []); depth += 1
    for u in uops:
      op = u.op
      if op in NAMES: r[u] = rule(u); continue
      if op is Ops.ENDRANGE: depth -= 1
      elif op is Ops.RANGE: r[u] = name("gidx" if u.arg[1] == "global" else "ridx")
      elif op is Ops.LOAD: r[u] = name("val")
      elif op is Ops.DEFINE_ACC: r[u] = f"acc{u.arg}"
      elif op is Ops.DEFINE_LOCAL: r[u] = name("local")
      for s in self.named_operands(u):
        if s in inlined:
          nm = name("alu"); emit(f"{ctx.tname(s.dtype)} {nm} = {r[s]};", folded.get(s, [s])); inlined.discard(s); r[s] = nm
      text = rule(u)
      own = [u] + [x for s in u.src if s in inlined for x in folded.get(s, ())]
      if op in STATEMENTS:
        emit(text, own)
        if op is Ops.RANGE: depth += 1
      elif users[u] <= 1 and u.dtype != dtypes.bool and op is not Ops.BITCAST: r[u] = text; folded[u] = own; inlined.add(u)  # used once: inline it
      else: r[u] = name("alu"); emit(f"{ctx.tname(u.dtype)} {r[u]} = {text};", own)
    if ctx.region: depth -= 1; emit("}", [])
    written = {u.src[0] for u in uops if u.op is Ops.STORE}
    params = ", ".join(f"{'' if pp in written else 'const '}{ctx.tname(pp.dtype)}* {self.buffer_qualifier} data{pp.arg[0]}" for pp in p.params)
    # each float vector type and its lane mask type (int lanes of the same size: what GCC's vector compares return)
    vec_types = sorted({d.cname: d for u in uops if u.dtype.count > 1 for d in (u.dtype, dtypes.bool.vec(u.dtype.count))}.values(), key=lambda d: d.name)
    p.line_uops = [[] for _ in vec_types] + [list(p.params)] + [list(dict.fromkeys(o)) for o in owners] + [[]]
    return "".join(map(_typedef, vec_types)) + f"{self.kernel_prefix} {p.name}({params}) {{\n" + "\n".join(lines) + "\n}"

def render_program(lin: UOp, renderer: CStyleRenderer, p: Program) -> tuple[UOp, str]:
  """The render step: the linear program to PROGRAM(LINEAR, SOURCE), and the source."""
  src = renderer.render_text(p)
  return UOp(Ops.PROGRAM, src=(lin, UOp(Ops.SOURCE, arg=src))), src

# No #include: parsing <math.h> took 7 of the 40 ms of CPU a one-kernel library costs GCC (a schedule's first run makes
# dozens). What the kernels and the helpers below use is declared here instead; GCC knows these names as builtins, so
# every kernel of the digits CNN, MLP and small GPT steps compiles to the same machine code as with the headers.
PRELUDE = r"""#define bool _Bool
#define true 1
#define false 0
#define NAN __builtin_nanf("")
#define INFINITY __builtin_inff()
#define isnan(x) __builtin_isnan(x)
#define isinf(x) __builtin_isinf_sign(x)
#define isfinite(x) __builtin_isfinite(x)
#define signbit(x) __builtin_signbit(x)
float exp2f(float); float log2f(float); float sinf(float); float sqrtf(float); float truncf(float); float powf(float, float);
double exp2(double); double log2(double); double sin(double); double sqrt(double); double trunc(double); double pow(double, double);
float ldexpf(float, int); float frexpf(float, int*); float nearbyintf(float); float fabsf(float);
/* two floatx8 as one floatx16 (a convolution's two 8-wide rows): one insert, where the stack would cost 5x the kernel's
   time. __builtin_shufflevector is GCC 12's and clang's; older GCC has AVX-512DQ's insert */
#if defined(__clang__) || __GNUC__ >= 12
#define tg_join16(a, b) __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#elif defined(__AVX512DQ__)
#define tg_join16(a, b) ((floatx16)__builtin_ia32_insertf32x8_mask(__builtin_ia32_ps512_256ps(a), b, 1, (floatx16){0}, (unsigned short)0xffff))
#else
#define tg_join16(a, b) (((union { floatx8 h[2]; floatx16 v; }){.h = {a, b}}).v)
#endif
static inline float tg_bf2f(unsigned short b) { union { unsigned int u; float f; } c = {.u = (unsigned int)b << 16}; return c.f; }
static inline unsigned short tg_f2bf(float f) {
  union { float f; unsigned int u; } c = {.f = f};
  if ((c.u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)(((c.u >> 16) & 0x8000u) | 0x7fc0u);  /* nan: a quiet nan */
  return (unsigned short)((c.u + 0x7fffu + ((c.u >> 16) & 1u)) >> 16);  /* round to nearest, ties to even */
}
""" + FP8_C
