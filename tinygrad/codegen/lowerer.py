"""Lowering a kernel's tensor graph to scalar code: INDEX is pushed from the store down to the loads, turning every
movement op into index arithmetic and every REDUCE_AXIS into loops (REDUCE over new RANGEs). All of it is pattern tables."""
from __future__ import annotations
import itertools
from tinygrad.dtype import dtypes
from tinygrad.helpers import prod, strides_for_shape
from tinygrad.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, graph_rewrite, untraced_rewrites
from tinygrad.uop.symbolic import symbolic, _terms, _term_coef, _sum

TRUE = UOp.const(dtypes.bool, True)
def _c(v: int) -> UOp: return UOp.const(dtypes.int32, v)
def index(x: UOp, gate: UOp, idx: tuple[UOp, ...]) -> UOp: return UOp(Ops.INDEX, x.dtype, (x, gate) + tuple(idx))
def _and(a: UOp, b: UOp) -> UOp: return b if a is TRUE else a if b is TRUE else UOp(Ops.AND, dtypes.bool, (a, b))

class LowerContext:
  def __init__(self): self.ranges = itertools.count()
  def new_range(self, size: int, kind: str) -> UOp: return UOp(Ops.RANGE, dtypes.int32, (_c(size),), (next(self.ranges), kind))

def reshape_index(in_shape: tuple[int, ...], out_shape: tuple[int, ...], idx: tuple[UOp, ...]) -> tuple[UOp, ...]:
  """Index into `in_shape` for an index into its reshape `out_shape`: dims are matched in groups of equal product so
  only merged or split dims pay for a multiply, divide or modulo."""
  res = [_c(0)] * len(in_shape)
  ins, outs = [d for d, s in enumerate(in_shape) if s != 1], [d for d, s in enumerate(out_shape) if s != 1]
  a = b = 0
  while a < len(ins):
    ga, gb, pa, pb = [ins[a]], [outs[b]], in_shape[ins[a]], out_shape[outs[b]]
    a, b = a + 1, b + 1
    while pa != pb:
      if pa < pb: ga.append(ins[a]); pa *= in_shape[ins[a]]; a += 1
      else: gb.append(outs[b]); pb *= out_shape[outs[b]]; b += 1
    if len(ga) == 1 and len(gb) == 1: res[ga[0]] = idx[gb[0]]; continue
    lin = _c(0)
    for d, st in zip(gb, strides_for_shape(tuple(out_shape[d] for d in gb))): lin = lin + idx[d] * st
    for k, (d, st) in enumerate(zip(ga, strides_for_shape(tuple(in_shape[d] for d in ga)))):
      v = lin // st if st != 1 else lin
      res[d] = v if k == 0 else v % in_shape[d]
  return tuple(res)

def _reshape(x: UOp, g: UOp, i: UOp) -> UOp: return index(x.src[0], g, reshape_index(x.src[0].shape, x.shape, i.src[2:]))
def _permute(x: UOp, g: UOp, i: UOp) -> UOp:
  idx, new = i.src[2:], [None] * len(x.arg)
  for o, d in enumerate(x.arg): new[d] = idx[o]
  return index(x.src[0], g, tuple(new))
def _expand(x: UOp, g: UOp, i: UOp) -> UOp:
  return index(x.src[0], g, tuple(_c(0) if si == 1 and so != 1 else v for si, so, v in zip(x.src[0].shape, x.shape, i.src[2:])))
def _shrink(x: UOp, g: UOp, i: UOp) -> UOp: return index(x.src[0], g, tuple(v + b if b else v for (b, _), v in zip(x.arg, i.src[2:])))
def _flip(x: UOp, g: UOp, i: UOp) -> UOp:
  return index(x.src[0], g, tuple((_c(s - 1) - v) if f else v for f, s, v in zip(x.arg, x.shape, i.src[2:])))
def _pad(x: UOp, g: UOp, i: UOp) -> UOp:
  valid, idx = TRUE, []
  for (b, a), s, v in zip(x.arg, x.src[0].shape, i.src[2:]):
    if b: valid = _and(valid, UOp(Ops.CMPLT, dtypes.bool, (_c(b - 1), v)))
    if a: valid = _and(valid, UOp(Ops.CMPLT, dtypes.bool, (v, _c(b + s))))
    idx.append(v - b if b else v)
  return valid.where(index(x.src[0], _and(g, valid), tuple(idx)), UOp.const(x.dtype, 0))
def _reduce(ctx: LowerContext, x: UOp, g: UOp, i: UOp) -> UOp:
  op, axes = x.arg
  rngs, idx = [], list(i.src[2:])
  for a in axes:
    if (s := x.src[0].shape[a]) == 1: idx[a] = _c(0)
    else: idx[a] = ctx.new_range(s, "reduce"); rngs.append(idx[a])
  val = index(x.src[0], g, tuple(idx))
  return UOp(Ops.REDUCE, x.dtype, (val, *rngs), op) if rngs else val

# INDEX(node, gate, *idx) means "node at idx"; these rules push it down until only loads of buffers remain
pm_lower_index = PatternMatcher([
  (UPat(Ops.INDEX, src=(UPat(GroupOp.Elementwise, name="x"), UPat.var("g")), allow_any_len=True, name="i"),
   lambda x, g, i: x.replace(src=tuple(index(s, g, i.src[2:]) for s in x.src))),
  (UPat(Ops.INDEX, src=(UPat(Ops.CONST, name="x"), UPat.var()), allow_any_len=True), lambda x: UOp.const(x.dtype, x.arg)),
  (UPat(Ops.INDEX, src=(UPat(Ops.DEFINE_VAR, name="x"), UPat.var()), allow_any_len=True), lambda x: x),
  (UPat(Ops.INDEX, src=(UPat(Ops.IOTA, name="x"), UPat.var(), UPat.var("j"))), lambda x, j: j.cast(x.dtype)),
  (UPat(Ops.INDEX, src=(UPat(Ops.RESHAPE, name="x"), UPat.var("g")), allow_any_len=True, name="i"), _reshape),
  (UPat(Ops.INDEX, src=(UPat(Ops.PERMUTE, name="x"), UPat.var("g")), allow_any_len=True, name="i"), _permute),
  (UPat(Ops.INDEX, src=(UPat(Ops.EXPAND, name="x"), UPat.var("g")), allow_any_len=True, name="i"), _expand),
  (UPat(Ops.INDEX, src=(UPat(Ops.SHRINK, name="x"), UPat.var("g")), allow_any_len=True, name="i"), _shrink),
  (UPat(Ops.INDEX, src=(UPat(Ops.FLIP, name="x"), UPat.var("g")), allow_any_len=True, name="i"), _flip),
  (UPat(Ops.INDEX, src=(UPat(Ops.PAD, name="x"), UPat.var("g")), allow_any_len=True, name="i"), _pad),
  (UPat(Ops.INDEX, src=(UPat(Ops.REDUCE_AXIS, name="x"), UPat.var("g")), allow_any_len=True, name="i"), _reduce),
  (UPat(Ops.INDEX, src=(UPat(Ops.DEFINE_GLOBAL, name="x"), UPat.var("g"), UPat.var("j"))),
   lambda x, g, j: UOp(Ops.LOAD, x.dtype, (x, j, g))),
])

def _conjuncts(g: UOp) -> set[UOp]: return _conjuncts(g.src[0]) | _conjuncts(g.src[1]) if g.op is Ops.AND and g.dtype == dtypes.bool else {g}

def _zero_unless(x: UOp, cs: set[UOp], depth: int = 0) -> bool:
  """x is 0 wherever any of the conditions cs is false: a load gated by all of them, a product with such a factor,
  a sum (or a sum over a loop) of such terms."""
  if depth > 32: return False
  if x.op is Ops.LOAD: return len(x.src) == 3 and cs <= _conjuncts(x.src[2])
  if x.op is Ops.MUL: return _zero_unless(x.src[0], cs, depth + 1) or _zero_unless(x.src[1], cs, depth + 1)
  if x.op in (Ops.ADD, Ops.SUB): return _zero_unless(x.src[0], cs, depth + 1) and _zero_unless(x.src[1], cs, depth + 1)
  if x.op in (Ops.NEG, Ops.CAST) or (x.op is Ops.REDUCE and x.arg is Ops.ADD): return _zero_unless(x.src[0], cs, depth + 1)
  if x.op is Ops.WHERE and x.src[2].op is Ops.CONST and x.src[2].arg == 0: return cs <= _conjuncts(x.src[0]) or _zero_unless(x.src[1], cs, depth + 1)
  return False

def _near_split(e: UOp, m: int) -> tuple[UOp, UOp] | None:
  """e as m*Q + d with each coefficient's remainder taken nearest zero, so d is small: (Q, d), simplified; None if
  there is nothing to split or d may reach m (then e % m is not just d or d + m)."""
  quo, rem = [], []
  for t in _terms(e):
    base, k = _term_coef(t)
    r = k % m
    if r > m // 2: r -= m
    if (q := (k - r) // m): quo.append(e.const_like(q) if base is None else (base if q == 1 else base * q))
    if r: rem.append(e.const_like(r) if base is None else (base if r == 1 else base * r))
  if not quo: return None
  with untraced_rewrites(): q_, d = graph_rewrite(_sum(quo, e), symbolic), graph_rewrite(_sum(rem, e), symbolic)
  return (q_, d) if -m < d.vmin and d.vmax < m else None

def _mod_lt(c: UOp, x: UOp, m: UOp, lim: UOp) -> UOp | None:
  """`e % m < lim` for e >= 0 is `0 <= d < lim` when d + m >= lim for every negative d (see _near_split): true
  exactly where the original is, and with no division (a window position `(r*10+x) % 11 < 8` becomes `0 <= x-r < 8`)."""
  if m.arg <= 1 or x.vmin < 0 or (qd := _near_split(x, m.arg)) is None: return None
  d = qd[1]
  if d.vmin < 0 and m.arg + d.vmin < lim.arg: return None
  return UOp(Ops.AND, dtypes.bool, (UOp(Ops.CMPLT, dtypes.bool, (_c(-1), d)), UOp(Ops.CMPLT, dtypes.bool, (d, lim))))

def _divmod_under_gate(b: UOp, i: UOp, g: UOp) -> UOp | None:
  """A load's index may use what its gate implies: where the gate holds 0 <= d < m, e % m is d and e // m is Q."""
  conj = _conjuncts(g)
  subst: dict[UOp, UOp] = {}
  for u in i.toposort():
    if u.op not in (Ops.MOD, Ops.IDIV) or u.src[1].op is not Ops.CONST or u.src[1].arg <= 1 or u.src[0].vmin < 0: continue
    if (qd := _near_split(u.src[0], m := u.src[1].arg)) is None: continue
    q, d = qd
    lo_ok = d.vmin >= 0 or UOp(Ops.CMPLT, dtypes.bool, (_c(-1), d)) in conj
    hi_ok = d.vmax < m or any(c.op is Ops.CMPLT and c.src[0] is d and c.src[1].op is Ops.CONST and c.src[1].arg <= m for c in conj)
    if lo_ok and hi_ok: subst[u] = d if u.op is Ops.MOD else q
  return UOp(Ops.LOAD, b.dtype, (b, i.substitute(subst), g)) if subst else None

# a gate that folded to True is dropped from the load; a gated load (or what is built from gated loads) already gives
# 0 where its gate (or any part of it: nested pads make nested WHEREs) is false
pm_clean_gates = PatternMatcher([
  (UPat(Ops.LOAD, src=(UPat.var("b"), UPat.var("j"), UPat.const(dtypes.bool, True))), lambda b, j: UOp(Ops.LOAD, b.dtype, (b, j))),
  (UPat(Ops.WHERE, src=(UPat.var("c"), UPat.var("x"), UPat.cvar("z"))), lambda c, x, z: x if z.arg == 0 and _zero_unless(x, _conjuncts(c)) else None),
  (UPat(Ops.CMPLT, src=(UPat(Ops.MOD, src=(UPat.var("x"), UPat.cvar("m")), name="c"), UPat.cvar("lim"))), _mod_lt),
  (UPat(Ops.LOAD, src=(UPat.var("b"), UPat.var("i"), UPat.var("g"))), _divmod_under_gate),
])

def _onehot_parts(w: UOp) -> tuple[UOp, UOp] | None:
  """(the compare, the value) of `cmp ? x : 0` or `float(cmp) * x`, cmp an equality."""
  if w.op is Ops.WHERE and w.src[0].op is Ops.CMPEQ and w.src[2].op is Ops.CONST and w.src[2].arg == 0: return w.src[0], w.src[1]
  if w.op is Ops.MUL:
    for c, x in (w.src, w.src[::-1]):
      if c.op is Ops.CAST and c.src[0].op is Ops.CMPEQ: return c.src[0], x
  return None

def _onehot_sum(red: UOp) -> UOp | None:
  """sum over r of `e == r ? x : 0` (or `float(e == r) * x`), e not depending on r, is x at r = e where 0 <= e < n:
  tensor indexing (`X[idx]`) and nn.Embedding build a gather as such a one-hot sum over all rows; this turns n loads
  per element into one gated load."""
  if red.arg is not Ops.ADD or (parts := _onehot_parts(red.src[0])) is None: return None
  (a, b), value = parts[0].src, parts[1]
  for r in red.src[1:]:
    if (e := b if a is r else a if b is r else None) is None or r in e.toposort(): continue
    valid = _and(UOp(Ops.CMPLT, dtypes.bool, (_c(-1), e)), UOp(Ops.CMPLT, dtypes.bool, (e, r.src[0])))
    # each load that moves with r reads row e now: gated, so an index outside 0..n-1 reads nothing (and gives 0)
    loads = {u: UOp(Ops.LOAD, u.dtype, (u.src[0], u.src[1].substitute({r: e}), _and(valid, u.src[2]) if len(u.src) == 3 else valid))
             for u in value.toposort() if u.op is Ops.LOAD and r in u.toposort()}
    x = UOp(Ops.WHERE, red.dtype, (valid, value.substitute({**loads, r: e}), UOp.const(red.dtype, 0)))
    rest = tuple(s for s in red.src[1:] if s is not r)
    return UOp(Ops.REDUCE, red.dtype, (x, *rest), red.arg) if rest else x
  return None

pm_gather = PatternMatcher([(UPat(Ops.REDUCE, src=(UPat((Ops.WHERE, Ops.MUL)),), allow_any_len=True, name="red"), _onehot_sum)])

pm_simplify = symbolic + pm_clean_gates + pm_gather
pm_lower = pm_lower_index + pm_simplify

def lower_kernel(ast: UOp) -> tuple[UOp, list[UOp]]:
  """ast: SINK(STORE(DEFINE_GLOBAL out, value)). Returns the scalar SINK and the global RANGEs, outermost first."""
  from tinygrad.codegen.scatter import is_scatter, lower_scatter
  if is_scatter(ast): return lower_scatter(ast)  # SINK(STORE(out, dest, vals)): out[dest[j]] = vals[j] (codegen/scatter.py)
  ctx = LowerContext()
  store = ast.src[0]
  out, value = store.src
  shape = value.shape
  # indices are 32-bit here: past 2**31-1 elements they would wrap (the C compiler refused the loop bound); say so
  big = max([v for v in (prod(shape), *(u.arg[1] for u in ast.toposort() if u.op is Ops.DEFINE_GLOBAL)) if type(v) is int] or [0])
  if big > 2**31 - 1:
    raise ValueError(f"a kernel over {big:,} elements: this engine indexes with 32 bits, at most {2**31 - 1:,}; split the tensor")
  glbl = [ctx.new_range(s, "global") if s != 1 else _c(0) for s in shape]
  lin = _c(0)
  for v, st in zip(glbl, strides_for_shape(shape)): lin = lin + v * st
  sink = UOp(Ops.SINK, dtypes.void, (UOp(Ops.STORE, dtypes.void, (out, lin, index(value, TRUE, tuple(glbl)))),))
  sink = graph_rewrite(sink, pm_lower, ctx=ctx, name="lower: index to loops")
  sink = graph_rewrite(sink, pm_simplify, name="lower: simplify")
  return sink, [r for r in glbl if r.op is Ops.RANGE]
