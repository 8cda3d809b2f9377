"""Symbolic simplification as pattern tables: constant folding, identities, reassociation, index arithmetic."""
from __future__ import annotations
import math
from tinygrad.dtype import dtypes
from tinygrad.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, is_intlike, rewrite_memo
from tinygrad.uop.alu import exec_alu

def _false_like(c: UOp) -> UOp:
  """False in place of comparison c, of c's shape when it has one: a tensor-level x < x folded while a kernel is
  lowered sits under a reduce that still reads its dims (sort of a one-element tensor)."""
  f = UOp.const(dtypes.bool, False)
  if not (sh := c.shape): return f
  return UOp(Ops.EXPAND, dtypes.bool, (UOp(Ops.RESHAPE, dtypes.bool, (f,), (1,) * len(sh)),), tuple(sh))

def _fold(a: UOp) -> UOp | None:
  if a.op in (Ops.IDIV, Ops.MOD) and a.src[1].arg == 0: return None  # leave the division by zero to the device
  vals = [s.arg for s in a.src]
  try: return a.const_like(exec_alu(a.op, a.dtype, vals))
  except (OverflowError, ZeroDivisionError, ValueError, TypeError): return None

def _is_intlike(u: UOp) -> bool: return is_intlike(u.dtype)

def _fold_by_range(x: UOp) -> UOp | None:
  # an integer expression whose bounds meet is that constant (e.g. a RANGE of size 1, or (i%4) < 4). Tried on every
  # ALU node a rewrite visits: the float ones leave at the first test
  if not is_intlike(x.dtype) or x.op is Ops.CONST: return None
  lo, hi = x._vminmax or x._minmax()
  return x.const_like(lo) if lo == hi else None

def _mul_zero(x: UOp, c: UOp) -> UOp | None:
  if c.arg != 0: return None
  return x.const_like(math.nan if dtypes.is_float(x.dtype) and x.op is Ops.CONST and not math.isfinite(x.arg) else 0)

def _terms(x: UOp) -> list[UOp]:
  """The terms of a sum, left to right. Inside a rewrite_memo block each sum's terms are kept (a sum's are its sources'
  joined, one C-level concatenation): the rules ask for them on every int ADD a rewrite visits, and walking a chain of
  n additions at each of them was n^2."""
  return list(_sum_terms(x)[0]) if x.op is Ops.ADD else [x]

def _cmod(t: UOp) -> bool: return t.op is Ops.MOD and t.src[1].op is Ops.CONST

def _sum_terms(x: UOp) -> tuple[tuple[UOp, ...], bool]:
  """(the terms of sum x, whether one is a MOD by a constant: _recombine's first test)."""
  if (memo := rewrite_memo.terms) is None: return tuple(ts := _walk_terms(x)), any(_cmod(t) for t in ts)
  if (got := memo.get(x)) is None:
    stack = [x]  # iterative, sums first: index sums can be long
    while stack:
      u = stack[-1]
      if pend := [s for s in u.src if s.op is Ops.ADD and s not in memo]: stack.extend(pend); continue
      stack.pop()
      if u in memo: continue
      ts, m = (), False
      for s in u.src:
        if s.op is Ops.ADD: st, sm = memo[s]; ts += st; m = m or sm
        else: ts += (s,); m = m or _cmod(s)
      memo[u] = (ts, m)
    got = memo[x]
  return got

def _walk_terms(x: UOp) -> list[UOp]:
  out, stack = [], [x]
  while stack:
    u = stack.pop()
    if u.op is Ops.ADD: stack.extend(reversed(u.src))
    else: out.append(u)
  return out

def _term_coef(t: UOp) -> tuple[UOp | None, int]:
  """t as (base, integer coefficient): 3 -> (None, 3), i*4 -> (i, 4), i -> (i, 1)."""
  if t.op is Ops.CONST: return None, t.arg
  if t.op is Ops.MUL and t.src[1].op is Ops.CONST: return t.src[0], t.src[1].arg
  return t, 1

def _sum(terms: list[UOp], like: UOp) -> UOp:
  if not terms: return like.const_like(0)
  out = terms[0]
  for t in terms[1:]: out = out + t
  return out

def _divmod_split(x: UOp, c: UOp, mod: bool) -> UOp | None:
  """For a sum of non-negative terms base*k: x // d = sum(base*(k//d)) + sum(base*(k%d)) // d, and
  x % d = sum(base*(k%d)) % d. E.g. (i*4 + j) // 4 -> i + j//4 and (r*9 + c) % 8 -> (r + c) % 8."""
  d = c.arg
  if d <= 0 or x.vmin < 0 or x.op not in (Ops.ADD, Ops.MUL): return None
  quo, rem, changed = [], [], False
  for t in _terms(x):
    base, k = _term_coef(t)
    if k < 0 or (base is not None and base.vmin < 0): return None
    q, r = divmod(k, d)
    if q: quo.append(x.const_like(q) if base is None else (base if q == 1 else base * q)); changed = True
    if r: rem.append(x.const_like(r) if base is None else (base if r == 1 else base * r))
  if not changed: return None
  r = _sum(rem, x)
  return UOp(Ops.MOD, x.dtype, (r, c)) if mod else _sum(quo, x) + UOp(Ops.IDIV, x.dtype, (r, c))

def _recombine(x: UOp) -> UOp | None:
  """(y//c)*c + y%c -> y and ((y//c)%d)*c + y%c -> y%(c*d) inside an index sum (what a reshape then flatten leaves
  behind: a flat 9216 read through a (32, 32, 3, 3) view is ((g//288)*288 + ((g//9)%32)*9 + ((g//3)%3)*3 + g%3, which
  folds pair by pair, from the innermost, to g). Both hold for C's truncating division too: (y/c)/d is y/(c*d)."""
  ts, has_mod = _sum_terms(x)
  if len(ts) < 2 or not has_mod: return None  # tried on every int ADD a rewrite visits: most have no MOD term
  mods = {(t.src[0], t.src[1].arg): i for i, t in enumerate(ts) if t.op is Ops.MOD and t.src[1].op is Ops.CONST}
  if not mods: return None
  for i, t in enumerate(ts):
    if t.op is not Ops.MUL or t.src[1].op is not Ops.CONST: continue
    c, q = t.src[1].arg, t.src[0]
    if q.op is Ops.IDIV and q.src[1].op is Ops.CONST and q.src[1].arg == c and (j := mods.get((q.src[0], c))) is not None:
      return _sum([q.src[0]] + [u for k, u in enumerate(ts) if k not in (i, j)], x)
    if q.op is Ops.MOD and q.src[1].op is Ops.CONST and q.src[1].arg > 0 and (y := q.src[0]).op is Ops.IDIV and \
       y.src[1].op is Ops.CONST and y.src[1].arg == c and c > 0 and (j := mods.get((y.src[0], c))) is not None:
      return _sum([y.src[0] % (c * q.src[1].arg)] + [u for k, u in enumerate(ts) if k not in (i, j)], x)
  return None

def _reassoc(x: UOp, c1: UOp, c2: UOp, op: Ops) -> UOp | None:
  return UOp(op, x.dtype, (x, _fold(UOp(op, x.dtype, (c1, c2))) or UOp(op, x.dtype, (c1, c2))))

# constant folding: any ALU whose sources are all constants
constant_folding = PatternMatcher([
  (UPat(GroupOp.ALU | {Ops.CAST}, name="a", src=UPat(Ops.CONST)), _fold),
])

# identities that hold for every dtype
identities = PatternMatcher([
  (UPat.var("x") + 0, lambda x: x),
  (UPat.var("x") * 1, lambda x: x),
  (UPat.var("x") * UPat.cvar("c"), _mul_zero),
  (UPat.var("x") - 0, lambda x: x),
  (UPat.var("x") / 1, lambda x: x),
  (UPat.var("x", dtype=dtypes.ints) // 1, lambda x: x),
  (UPat.var("x", dtype=dtypes.ints) % 1, lambda x: x.const_like(0)),
  (-(-UPat.var("x")), lambda x: x),
  (UPat(Ops.WHERE, src=(UPat.cvar("c"), UPat.var("a"), UPat.var("b"))), lambda c, a, b: a if c.arg else b),
  (UPat(Ops.WHERE, src=(UPat.var(), UPat.var("a"), UPat.var("a"))), lambda a: a),
  (UPat(Ops.MAX, src=(UPat.var("x"), UPat.var("x"))), lambda x: x),
  (UPat(Ops.CAST, name="c", src=(UPat.var("x"),)), lambda c, x: x if c.dtype == x.dtype else None),
  (UPat(Ops.AND, dtype=dtypes.bool, src=[UPat.var("x"), UPat.const(dtypes.bool, True)]), lambda x: x),
  (UPat(Ops.AND, dtype=dtypes.bool, src=[UPat.var("x"), UPat.const(dtypes.bool, False)]), lambda x: x.const_like(False)),
])

# reassociation of constants: t + 3 + 4 -> t + 7, t * 2 * 3 -> t * 6, and constants to the right
reassociation = PatternMatcher([
  # integer x - c is x + (-c), so constants meet in one place: (i + 1) - 1 -> i
  (UPat(Ops.SUB, dtype=dtypes.ints, src=(UPat.var("x"), UPat.cvar("c"))), lambda x, c: x + (-c.arg)),
  ((UPat.var("x") + UPat.cvar("c1")) + UPat.cvar("c2"), lambda x, c1, c2: _reassoc(x, c1, c2, Ops.ADD) if x.op is not Ops.CONST else None),
  ((UPat.var("x") * UPat.cvar("c1")) * UPat.cvar("c2"), lambda x, c1, c2: _reassoc(x, c1, c2, Ops.MUL) if x.op is not Ops.CONST else None),
  # (x + c) + y -> (x + y) + c keeps constants outermost, where the rule above can merge them
  (UPat(Ops.ADD, src=[UPat(Ops.ADD, src=[UPat.var("x"), UPat.cvar("c")]), UPat.var("y")]),
   lambda x, c, y: (x + y) + c if y.op is not Ops.CONST and x.op is not Ops.CONST else None),
  (UPat(Ops.ADD, src=(UPat.cvar("c"), UPat.var("x"))), lambda c, x: x + c if x.op is not Ops.CONST else None),
  (UPat(Ops.MUL, src=(UPat.cvar("c"), UPat.var("x"))), lambda c, x: x * c if x.op is not Ops.CONST else None),
])

# integer index arithmetic, using the value bounds of RANGEs and variables
index_math = PatternMatcher([
  (UPat(GroupOp.ALU | {Ops.CAST}, name="x"), _fold_by_range),
  (UPat(Ops.MOD, src=(UPat.var("x"), UPat.cvar("c"))), lambda x, c: x if 0 <= x.vmin and x.vmax < c.arg and _is_intlike(x) else None),
  (UPat(Ops.IDIV, src=(UPat.var("x"), UPat.cvar("c"))), lambda x, c: _divmod_split(x, c, False) if _is_intlike(x) else None),
  (UPat(Ops.MOD, src=(UPat.var("x"), UPat.cvar("c"))), lambda x, c: _divmod_split(x, c, True) if _is_intlike(x) else None),
  ((UPat.var("x") * UPat.cvar("c")) // UPat.cvar("d"), lambda x, c, d: x * (c.arg // d.arg) if d.arg > 0 and c.arg % d.arg == 0 else None),
  ((UPat.var("x") * UPat.cvar("c")) % UPat.cvar("d"), lambda x, c, d: x.const_like(0) if d.arg > 0 and c.arg % d.arg == 0 else None),
  ((UPat.var("x") // UPat.cvar("a")) // UPat.cvar("b"),
   lambda x, a, b: x // (a.arg * b.arg) if x.vmin >= 0 and a.arg > 0 and b.arg > 0 else None),
  ((UPat.var("x") % UPat.cvar("a")) % UPat.cvar("b"), lambda x, a, b: x % b.arg if a.arg > 0 and b.arg > 0 and a.arg % b.arg == 0 and x.vmin >= 0 else None),
  (UPat(Ops.ADD, dtype=dtypes.ints, name="x"), _recombine),
  # x < x is never true
  (UPat(Ops.CMPLT, src=(UPat.var("x", dtype=dtypes.ints), UPat.var("x")), name="c"), lambda x, c: _false_like(c)),
])

# x/(1+x) as 1-1/(1+x): finite where x is inf (exp(x)/(1+exp(x)) at x=300 is 1, its gradient 0, not nan). tinygrad's
# symbolic has these rules for x*(1/(1+x)); its division is a MUL by a RECIPROCAL, ours one FDIV, hence these forms
def _one_minus_recip(d: UOp) -> UOp: return d.const_like(1.0) - d.const_like(1.0) / d
_fx, _fy, _fz = UPat.var("x", dtype=dtypes.floats), UPat.var("y"), UPat.var("z")
_1px = UPat(Ops.ADD, src=[_fx, UPat.const(None, 1.0)], name="d")
float_division = PatternMatcher([
  (_fx / _1px, lambda x, d: _one_minus_recip(d)),
  (_fx * (_fy / _1px), lambda x, y, d: y * _one_minus_recip(d)),
  (_fx * ((_fy / _1px) + _fz), lambda x, y, z, d: y * _one_minus_recip(d) + x * z),
])

symbolic = constant_folding + identities + reassociation + index_math + float_division
