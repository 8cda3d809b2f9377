"""Autograd as data: the derivative of every differentiable op is one rule in `pm_gradient`.
A rule gets `ctx` (the gradient flowing into the op's output, a Tensor) and `ret` (the op's UOp) and returns one
gradient per source (None where no gradient flows)."""
from __future__ import annotations
import math, weakref
from typing import TYPE_CHECKING, Callable
from tinygrad.helpers import argsort
from tinygrad.uop.ops import UOp, UPat, Ops, PatternMatcher
if TYPE_CHECKING: from tinygrad.tensor import Tensor

def _T(u: UOp) -> Tensor:
  from tinygrad.tensor import Tensor
  return Tensor(u)

def _reduce_grad(ctx: Tensor, ret: UOp) -> tuple:
  op, axes = ret.arg
  x = ret.src[0]
  g = ctx.expand(x.shape)
  if op is Ops.ADD: return (g,)
  if op is Ops.MAX:  # the gradient goes to the max, split evenly between ties
    mask = (_T(x) == _T(ret).expand(x.shape)).cast(ctx.dtype)
    return (mask * g / mask.sum(axes, keepdim=True).expand(x.shape),)
  if op is Ops.MUL:  # prod / x_j, except at a zero: there the product of the others (nonzero only if x_j is the one zero)
    xt = _T(x)
    zero = xt == 0
    others = zero.where(1, xt).prod(axes, keepdim=True).expand(x.shape)
    lone = (zero.sum(axes, keepdim=True) == 1).expand(x.shape)
    return (zero.where(lone.where(others, 0), _T(ret).expand(x.shape) / zero.where(1, xt)) * g,)
  raise RuntimeError(f"no gradient for a {op} reduction")

def _max_grad(ctx: Tensor, ret: UOp) -> tuple:
  a, b = _T(ret.src[0]), _T(ret.src[1])
  ga = (a > b).where(ctx, (a == b).where(ctx * 0.5, 0))
  gb = (b > a).where(ctx, (a == b).where(ctx * 0.5, 0))
  return ga, gb

def _pow_grad(ctx: Tensor, ret: UOp) -> tuple:
  # torch's rules: no base gradient for a zero exponent; the exponent's is r*log(x) (nan for a negative base, -inf
  # for 0 to a negative power) except 0 for 0 to a non-negative power
  x, y, r = _T(ret.src[0]), _T(ret.src[1]), _T(ret)
  dx = (y == 0).where(0, y * x.pow(y - 1)) * ctx
  dy = ((x == 0) & (y >= 0)).where(0, r * x.log()) * ctx
  return dx, dy

pm_gradient = PatternMatcher([
  (UPat(Ops.CAST, name="ret"), lambda ctx, ret: (ctx.cast(ret.src[0].dtype),)),
  (UPat(Ops.RECIP, name="ret"), lambda ctx, ret: (-ctx * _T(ret) * _T(ret),)),
  (UPat(Ops.SIN, name="ret"), lambda ctx, ret: (((math.pi / 2) - _T(ret.src[0])).sin() * ctx,)),
  (UPat(Ops.LOG2, name="ret"), lambda ctx, ret: (ctx / (_T(ret.src[0]) * math.log(2)),)),
  (UPat(Ops.EXP2, name="ret"), lambda ctx, ret: (_T(ret) * ctx * math.log(2),)),
  (UPat(Ops.SQRT, name="ret"), lambda ctx, ret: (ctx / (_T(ret) * 2),)),
  (UPat(Ops.TRUNC), lambda ctx: (ctx * 0,)),
  (UPat((Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.IDIV, Ops.MOD, Ops.SHL, Ops.SHR)), lambda: (None, None)),
  (UPat(Ops.NEG), lambda ctx: (-ctx,)),
  (UPat(Ops.ADD), lambda ctx: (ctx, ctx)),
  (UPat(Ops.SUB), lambda ctx: (ctx, -ctx)),
  (UPat(Ops.MUL, name="ret"), lambda ctx, ret: (_T(ret.src[1]) * ctx, _T(ret.src[0]) * ctx)),
  (UPat(Ops.FDIV, name="ret"), lambda ctx, ret: (ctx / _T(ret.src[1]), -ctx * _T(ret) / _T(ret.src[1]))),
  (UPat(Ops.MAX, name="ret"), _max_grad),
  (UPat(Ops.POW, name="ret"), _pow_grad),
  (UPat(Ops.WHERE, name="ret"), lambda ctx, ret: (None, _T(ret.src[0]).where(ctx, 0), _T(ret.src[0]).where(0, ctx))),
  (UPat(Ops.REDUCE_AXIS, name="ret"), _reduce_grad),
  (UPat((Ops.CONTIGUOUS, Ops.ASSIGN)), lambda ctx: (ctx, None)),
  (UPat(Ops.DETACH), lambda: (None,)),
  (UPat(Ops.COPY, name="ret"), lambda ctx, ret: (ctx.to(ret.src[0].device), None)),
  # each device's piece gets its part of the gradient; a replicated value is one value, its gradient goes to one copy
  (UPat(Ops.MULTI, name="ret"), lambda ctx, ret: tuple(_T(UOp(Ops.MSELECT, ctx.dtype, (ctx.uop,), (i, ret.arg))) if ret.arg is not None or i == 0 else None
                                                   for i in range(len(ret.src)))),
  (UPat(Ops.RESHAPE, name="ret"), lambda ctx, ret: (ctx.reshape(ret.src[0].shape),)),
  (UPat(Ops.EXPAND, name="ret"), lambda ctx, ret: (ctx.sum(tuple(i for i, (a, b) in enumerate(zip(ret.src[0].shape, ret.shape)) if a != b), keepdim=True),)),
  (UPat(Ops.PAD, name="ret"), lambda ctx, ret: (ctx.shrink(tuple((b, b + s) for (b, _), s in zip(ret.arg, ret.src[0].shape))),)),
  (UPat(Ops.SHRINK, name="ret"), lambda ctx, ret: (ctx.pad(tuple((b, s - e) for (b, e), s in zip(ret.arg, ret.src[0].shape))),)),
  (UPat(Ops.PERMUTE, name="ret"), lambda ctx, ret: (ctx.permute(argsort(list(ret.arg))),)),
  (UPat(Ops.FLIP, name="ret"), lambda ctx, ret: (ctx.flip(tuple(i for i, f in enumerate(ret.arg) if f)),)),
])

# A value whose gradient is better computed as a whole than op by op (a convolution's input gradient as another
# convolution, not a windowed tensor 9x its size then window sums): value -> (inputs, fn(grad) -> one gradient per
# input). Weak keys: an entry lives as long as the graph that holds the value.
custom_vjp: weakref.WeakKeyDictionary[UOp, tuple[tuple[UOp, ...], Callable[[Tensor], tuple[Tensor | None, ...]]]] = weakref.WeakKeyDictionary()

def compute_gradient(root: UOp, root_grad: Tensor, targets: set[UOp]) -> dict[UOp, Tensor]:
  """Gradients of `root` for every UOp on a path from a target to root, walking the graph once in reverse."""
  topo = root.toposort()
  on_path: dict[UOp, bool] = {}
  for u in topo: on_path[u] = u in targets or any(on_path[s] for s in u.src)
  grads: dict[UOp, Tensor] = {root: root_grad}
  call_grads: dict[UOp, dict[int, Tensor]] = {}  # a @function call's output gradients, gathered until the walk reaches it
  for u in reversed(topo):
    if ((g := grads.get(u)) is None and u not in call_grads) or not on_path[u] or u.op in (Ops.BUFFER, Ops.CONST, Ops.DEVICE, Ops.DEFINE_VAR, Ops.PARAM): continue
    if u.op is Ops.GETTUPLE:
      outs = call_grads.setdefault(u.src[0], {})
      outs[u.arg] = outs[u.arg] + g if u.arg in outs else g
      continue
    if u.op is Ops.CALL:
      from tinygrad.function import call_gradient
      srcs, sgrads = u.src, call_gradient(u, call_grads.pop(u), [on_path[a] for a in u.src[1:]])
    elif (cv := custom_vjp.get(u)) is not None: srcs, sgrads = cv[0], cv[1](g)  # the nodes between u and its inputs get none
    elif (r := pm_gradient.rewrite_pat(u, ctx=g)) is not None: srcs, sgrads = u.src, r[0]
    else: raise RuntimeError(f"no gradient rule for {u.op}")
    for s, sg in zip(srcs, sgrads):
      if sg is None or not on_path[s]: continue
      if sg.shape != s.shape: raise RuntimeError(f"gradient of {u.op} has shape {sg.shape}, its source has {s.shape}")
      grads[s] = grads[s] + sg if s in grads else sg
  return grads
