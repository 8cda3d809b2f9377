"""From the scalar graph of a kernel to a linear program: loops opened and closed, reductions as accumulators.
Each value is placed in the innermost loop it depends on, so loop-invariant work is computed outside the loop.
Linearizing is one traced step of the kernel's context ("linearize"): from the SINK to LINEAR, the uops in order."""
from __future__ import annotations
from dataclasses import dataclass, field
from tinygrad.dtype import dtypes, DType
from tinygrad.helpers import prod
from tinygrad.uop.ops import UOp, Ops, GroupOp, graph_step

@dataclass
class Program:
  name: str
  uops: list[UOp]
  acc_of: dict[UOp, UOp]               # REDUCE -> the DEFINE_ACC holding its value after its loops
  params: list[UOp]                    # DEFINE_GLOBALs in argument order (output first)
  global_size: tuple[int, ...]
  reduce_size: tuple[int, ...]
  flops: int
  mem_bytes: int
  src: str = ""
  parallel: bool = False
  lib_key: str = field(default="", repr=False)
  line_uops: list[list[UOp]] = field(default_factory=list, repr=False)  # per line of src: the uops it renders
  lin: UOp | None = field(default=None, repr=False)  # LINEAR(*uops): the linearize step's result, the render step's input
  # set when the program is made (engine/realize.py): its trace ids under VIZ/PROFILE (-1: none) and per number in its
  # name what kind of axis it counts (DEBUG=2's colours)
  ctx_id: int = field(default=-1, repr=False)
  kernel_id: int = field(default=-1, repr=False)
  axis_kinds: list[str] = field(default_factory=list, repr=False)

class CachedProgram(Program):
  """A program an earlier process made, loaded from the on-disk program cache (codegen/program_cache.py): its source,
  sizes and counts. Its uops (and acc_of, line_uops, lin) are made again by `remake` the first time something reads
  them, so code that inspects a kernel's uops sees the same with the cache as without it."""
  LAZY = ("uops", "acc_of", "line_uops", "lin")
  def __init__(self, remake, *args, **kw):
    super().__init__(*args, **kw)
    self._remake = remake
    for f in CachedProgram.LAZY: delattr(self, f)
  def __getattr__(self, k: str):  # only called for an attribute not set: a lazy one before it is made
    if k in CachedProgram.LAZY and (remake := self.__dict__.pop("_remake", None)) is not None:
      made = remake()
      for f in CachedProgram.LAZY: setattr(self, f, getattr(made, f))
      return getattr(self, k)
    raise AttributeError(f"{type(self).__name__!r} object has no attribute {k!r}")

def reduce_identity(op: Ops, dtype: DType):
  if op is Ops.ADD: return 0
  if op is Ops.MUL: return 1
  return dtypes.min(dtype)  # MAX

def _topo(roots: list[UOp], skip: set[UOp], into_reduces: bool = False) -> list[UOp]:
  """Sources before users; REDUCEs and AFTERs are opaque (their loops are placed separately) unless into_reduces; iterative."""
  out: dict[UOp, None] = {}
  stack = [(r, False) for r in reversed(roots)]
  while stack:
    u, done = stack.pop()
    if u in out or u in skip: continue
    if done: out[u] = None; continue
    stack.append((u, True))
    if u.op not in (Ops.REDUCE, Ops.AFTER) or into_reduces: stack.extend((s, False) for s in reversed(u.src) if s not in out and s not in skip)
  return list(out)

def _operands(v: UOp) -> tuple[UOp, ...]:
  """The values an accumulate's product reads (a * b: a and b), or the value itself."""
  x = v.src[0]
  return x.src if x.op is Ops.MUL else (x,)

def accumulate_order(group: list[UOp], accs: list[UOp], emitted: set[UOp]) -> list[tuple[UOp, UOp]]:
  """A reduce loop's accumulates (with their accumulators) in the order that keeps the fewest operands live: each next
  the one whose product loads the fewest new operands less those it reads for the last time; the copies' own order
  where that ties. A weight gradient's window tile (9 input vectors x 2 output channels) in copy order kept all 9
  joined input vectors live beside its 18 accumulators and 2 weight vectors, and GCC spilled 2 accumulators in the
  inner loop; reading each input vector for both channels at once keeps one live. A tile already in such an order
  (a matmul's row by row, a convolution's weight by weight) keeps it."""
  ops = [tuple(set(_operands(v))) for v in group]
  users: dict[UOp, int] = {}
  for operands in ops:
    for o in operands: users[o] = users.get(o, 0) + 1
  if all(n == 1 for n in users.values()): return list(zip(group, accs))  # no operand shared: nothing to order
  seen: set[UOp] = set()  # operands this loop's earlier accumulates load (those emitted before it are loaded too)
  pending, out = list(range(len(group))), []
  while pending:
    best, best_score = pending[0], None
    for i in pending:  # in copy order: the first of the lowest scores
      score = 0
      for o in ops[i]: score += (o not in seen and o not in emitted) - (users[o] == 1)
      if best_score is None or score < best_score: best, best_score = i, score
    pending.remove(best)
    for o in ops[best]: seen.add(o); users[o] -= 1
    out.append((group[best], accs[best]))
  return out

def linearize(sink: UOp, global_ranges: list[UOp], name: str, params: list[UOp] | None = None) -> Program:
  """params: every buffer of the kernel in argument order, also those simplification made unused (the caller passes them all)."""
  lin, p = graph_step(sink, to_linear, global_ranges, name, params, name="linearize")
  p.lin = lin
  return p

def to_linear(sink: UOp, global_ranges: list[UOp], name: str, params: list[UOp] | None) -> tuple[UOp, Program]:
  """The linearize step: the kernel's graph to LINEAR (its uops in order), and the Program around them."""
  topo = sink.toposort()
  scope: dict[UOp, frozenset[UOp]] = {}
  for u in topo:
    if u.op is Ops.RANGE: scope[u] = frozenset([u])
    elif u.op is Ops.REDUCE: scope[u] = scope[u.src[0]] - frozenset(u.src[1:])
    elif u.op is Ops.AFTER: scope[u] = frozenset(r for r in frozenset().union(*[scope[s] for s in u.src]) if r.arg[1] != "pack")  # its loop closes before it
    else: scope[u] = frozenset().union(*[scope[s] for s in u.src])
  params = sorted(params if params is not None else [u for u in topo if u.op is Ops.DEFINE_GLOBAL], key=lambda u: u.arg[0])
  prog: list[UOp] = list(params)
  emitted: set[UOp] = set(params) | set(global_ranges)
  acc_of: dict[UOp, UOp] = {}
  siblings: dict[tuple[UOp, ...], list[UOp]] = {}
  for u in topo:
    if u.op is Ops.REDUCE: siblings.setdefault(u.src[1:], []).append(u)
  flops, reduce_size = 0, []
  def emit_block(roots: list[UOp], open_: frozenset[UOp], trips: int) -> None:
    nonlocal flops
    for u in _topo(roots, emitted):
      if u in emitted: continue
      emitted.add(u)
      if u.op is Ops.REDUCE:
        # reductions over the same ranges (the copies an upcast made) share one loop
        group = [v for v in siblings[u.src[1:]] if v is u or v not in emitted]
        emitted.update(group)
        rngs = u.src[1:]
        # (also from reductions nested in these: what they share with code after this loop must be declared out here)
        hoist = [n for n in _topo([v.src[0] for v in group], emitted, into_reduces=True) if scope[n] <= open_ and n.op is not Ops.RANGE]
        emit_block(hoist, open_, trips)  # what the loop doesn't change is computed before it
        accs = [UOp(Ops.DEFINE_ACC, v.dtype, (UOp.const(v.dtype, reduce_identity(v.arg, v.dtype)),), len(acc_of) + i) for i, v in enumerate(group)]
        for v, acc in zip(group, accs): acc_of[v] = acc
        prog.extend(accs); prog.extend(rngs); emitted.update(rngs)
        inner = trips * prod(r.src[0].arg for r in rngs)
        if not reduce_size: reduce_size.extend(r.src[0].arg for r in rngs)
        # each accumulate right after its value: a tile's values are then live one at a time, not all at once before
        # the accumulates (a 6 x 2 vector tile kept its 6 broadcasts of A live with its 12 accumulators: GCC spilled 3)
        for v, acc in accumulate_order(group, accs, emitted):
          emit_block([v.src[0]], open_ | frozenset(rngs), inner)
          prog.append(UOp(Ops.ACC_UPDATE, v.dtype, (acc, v.src[0]), v.arg))
        flops += inner * sum(v.dtype.count for v in group)
        prog.extend(UOp(Ops.ENDRANGE, dtypes.void, (r,)) for r in reversed(rngs))
        prog.extend(group)
      elif u.op is Ops.AFTER:  # a loop of stores into a scratch array (codegen/pack.py), then the array is read
        loops = sorted({r for s in u.src[1:] for r in scope[s] if r.arg[1] == "pack"}, key=lambda r: r.arg[0])
        emit_block([n for n in _topo(list(u.src), emitted) if scope[n] <= open_ and n.op is not Ops.RANGE], open_, trips)
        prog.extend(loops); emitted.update(loops)
        emit_block(list(u.src[1:]), open_ | frozenset(loops), trips * prod(r.src[0].arg for r in loops))
        prog.extend(UOp(Ops.ENDRANGE, dtypes.void, (r,)) for r in reversed(loops))
        prog.append(u)
      else:
        if u.op in GroupOp.ALU: flops += trips * u.dtype.count
        prog.append(u)
  gsz = tuple(r.src[0].arg for r in global_ranges)
  # the global loops open outermost first; an AFTER (a packed panel) is placed right inside the loops it depends on,
  # so it runs once per panel and not once per row tile inside it
  afters = [u for u in topo if u.op is Ops.AFTER]
  # one that no global loop moves (all of a layer's weights, packed) is filled once, before the loops (once per thread:
  # the C renderer opens the parallel region around it), not once per iteration of the outermost loop: the digits' conv3
  # input gradient packed its 18432 weights for each of 128 images
  if global_ranges and (now := [u for u in afters if not scope[u]]): emit_block(now, frozenset(), 1)
  for i, r in enumerate(global_ranges):
    prog.append(r)
    if (now := [u for u in afters if u not in emitted and scope[u] <= frozenset(global_ranges[:i + 1])]):
      emit_block(now, frozenset(global_ranges[:i + 1]), prod(gsz[:i + 1]))
  emit_block([sink], frozenset(global_ranges), prod(gsz))
  prog.extend(UOp(Ops.ENDRANGE, dtypes.void, (r,)) for r in reversed(global_ranges))
  mem = sum(p.arg[1] * p.dtype.itemsize for p in params)
  return UOp(Ops.LINEAR, src=tuple(prog)), Program(name, prog, acc_of, params, gsz, tuple(reduce_size), flops, mem)
