"""Compiles a PatternMatcher's rules for one op into one Python function `f(u, ctx)` that tries each rule in order,
every match of its pattern in the order UPat.match lists them (as many times), calls fn at each and returns
(fn's result, pattern) for the first result that is neither None nor u, else None: what rewrite_pat did with the
interpreter, without a dict per named match and a list of partial matches per source. Each pattern's tests are
inlined as nested `if`s; a commutative source list becomes one block per order, in UPat's order. Duck-typed on UPat
(op, dtype, src, arg, name, allow_any_len, _variants, match) so ops.py can import this file."""
from __future__ import annotations
import keyword
from typing import Any, Callable
from tinygrad.dtype import DType

def _names(p: Any) -> bool:
  """Whether p or any pattern under it binds a name."""
  if p.name is not None: return True
  if p.src is None: return False
  return _names(p.src) if not isinstance(p.src, (tuple, list)) else any(_names(s) for s in p.src)

def _count(p: Any, srcs: tuple) -> int:
  """How many matches a repeated source pattern without names has over all of srcs (the interpreter lists each as a
  copy of the same store, so fn is called that many times)."""
  n = 1
  for s in srcs:
    if not (n := n * len(p.match(s, {}))): break
  return n

class _Gen:
  def __init__(self):
    self.lines: list[str] = []
    self.consts: dict[str, Any] = {"_count": _count, "_DType": DType}
    self.nvar = 0
  def const(self, v: Any) -> str:
    k = f"_c{len(self.consts)}"; self.consts[k] = v
    return k
  def var(self) -> str:
    self.nvar += 1
    return f"n{self.nvar}"
  def emit(self, depth: int, line: str) -> None: self.lines.append("  " * depth + line)

  def rule(self, p: Any, fn: Callable, has_ctx: bool, check_op: bool) -> None:
    """One rule's block (at the function's top level; it falls through when no match is taken)."""
    self.fn, self.pat, self.has_ctx = self.const(fn), self.const(p), has_ctx
    if not _compilable(p):
      self.emit(1, f"if (r := _interp({self.pat}, {self.fn}, {has_ctx}, u, ctx)) is not None: return r, {self.pat}")
      self.consts["_interp"] = _interp
    else: self.node(p, "u", 1, {}, [], check_op)

  def node(self, p: Any, v: str, depth: int, bound: dict[str, str], rest: list[tuple[Any, str]], check_op: bool = True,
           fail: str | None = None) -> None:
    """Code matching pattern p on the UOp in local v, then the patterns in `rest` (pattern, local) in order, then the
    call of fn; `bound` maps each name bound so far on this path to its local. fail: only p's own tests, as one
    `if not (...): <fail>` (a plain pattern tested on each source)."""
    conds = []
    if check_op and p.op is not None:
      conds.append(f"{v}.op is {self.const(p.op[0])}" if len(p.op) == 1 else f"{v}.op in {self.const(frozenset(p.op))}")
    if p.dtype is not None:  # a DType by its name (what its __eq__ and __hash__ compare: Python calls), anything else as UPat.match
      names = frozenset(d.name for d in p.dtype) if all(type(d) is DType for d in p.dtype) else None
      conds.append(f"{v}.dtype in {self.const(p.dtype)}" if names is None else
                   f"({v}.dtype.name in {self.const(names)} if type({v}.dtype) is _DType else {v}.dtype in {self.const(p.dtype)})")
    if p.arg is not None: conds.append(f"not ({self.const(p.arg)} != {v}.arg)")  # the interpreter's test, operands in its order
    if p.name is not None:
      if p.name in bound: conds.append(f"{v} is {bound[p.name]}")
      else: bound = {**bound, p.name: v}
    if fail is not None:
      self.emit(depth, f"if not ({' and '.join(conds)}): {fail}" if conds else "pass")
      return None
    if conds:
      self.emit(depth, f"if {' and '.join(conds)}:"); depth += 1
    if p.src is None: return self.cont(depth, bound, rest)
    if p._variants is None:  # one pattern for every source, binding no names (else the rule is not compiled)
      if p.src.src is None:  # a plain test (UPat(Ops.CONST)): one match when every source passes it, else none
        w = self.var()
        self.emit(depth, f"for {w} in {v}.src:")
        self.node(p.src, w, depth + 1, {}, [], check_op=True, fail="break")
        self.emit(depth, "else:")
        return self.cont(depth + 1, bound, rest)
      self.emit(depth, f"for _ in range(_count({self.const(p.src)}, {v}.src)):")
      return self.cont(depth + 1, bound, rest)
    for vp in p._variants:  # a tuple: one order; a list: every order, in UPat's order
      n = len(vp)
      if n == 0 and p.allow_any_len: self.cont(depth, bound, rest); continue
      self.emit(depth, f"if len({v}.src) {'>=' if p.allow_any_len else '=='} {n}:")
      if n == 0: self.cont(depth + 1, bound, rest); continue
      locs = [self.var() for _ in vp]
      self.emit(depth + 1, f"{', '.join(locs)}{',' if n == 1 else ''} = {v}.src{f'[:{n}]' if p.allow_any_len else ''}")
      self.cont(depth + 1, bound, list(zip(vp, locs)) + rest)

  def cont(self, depth: int, bound: dict[str, str], rest: list[tuple[Any, str]]) -> None:
    if rest: return self.node(rest[0][0], rest[0][1], depth, bound, rest[1:])
    args = (["ctx=ctx"] if self.has_ctx else []) + [f"{k}={v}" for k, v in bound.items()]  # in the order matched, as the store's
    self.emit(depth, f"r = {self.fn}({', '.join(args)})")
    self.emit(depth, f"if r is not None and r is not u: return r, {self.pat}")

def _interp(p: Any, fn: Callable, has_ctx: bool, u: Any, ctx: Any) -> Any:
  """The interpreter's way, for a rule that is not compiled."""
  for m in p.match(u, {}):
    r = fn(ctx=ctx, **m) if has_ctx else fn(**m)
    if r is not None and r is not u: return r
  return None

def _compilable(q: Any) -> bool:
  """Not compiled (the interpreter's way instead): a repeated source pattern that binds names (which names get bound
  depends on how many sources a node has), or a name that cannot be a keyword argument."""
  if q.name is not None and (not q.name.isidentifier() or keyword.iskeyword(q.name) or q.name == "ctx"): return False
  if q.src is None: return True
  if not isinstance(q.src, (tuple, list)): return not _names(q.src) and _compilable(q.src)
  return all(_compilable(s) for s in q.src)

def compile_rules(rules: list[tuple[Any, Callable, bool]], check_op: bool = False, name: str = "rules") -> Callable[[Any, Any], Any]:
  """One function f(u, ctx) for the rules (pattern, fn, fn takes ctx) in order: (fn's result, pattern) of the first
  match that fn rewrites, or None. check_op=False leaves out the test of u's own op (a PatternMatcher compiles one
  function per op, from the rules that name it)."""
  g = _Gen()
  for p, fn, has_ctx in rules: g.rule(p, fn, has_ctx, check_op)
  src = f"def {name}(u, ctx):\n" + "\n".join(g.lines) + "\n  return None\n"
  ns = dict(g.consts)
  exec(compile(src, f"<compiled {name}>", "exec"), ns)
  f = ns[name]
  f.source = src  # what was generated, for reading (print(pm.compiled(Ops.ADD).source))
  return f
