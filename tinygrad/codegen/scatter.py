"""The scatter kernel: out[dest[j]] = vals[j] for j = 0, 1, ..., J-1, in that order. Its kernel is
SINK(STORE(out, dest, vals)): a STORE with the index as its own source, dest and vals (J,) graphs of the kernel's inputs,
where an ordinary kernel's STORE has (out, value) and stores each element where it computed it. The store's index is a
loaded value, as a gather's load index is (lowerer._onehot_sum), so the cost is J loads and J stores, not a compare per
place and value.
With the STORE's arg an op (Ops.ADD, Ops.MUL, Ops.MAX or "min": scatter_reduce), out[dest[j]] = op(out[dest[j]], vals[j]).
The J stores run on one thread, in order: where dest names a place twice the last value stays (numpy's order for
`a[idx] = v`, tinygrad's for setitem). So the loop is no global loop (those are what the optimizer upcasts and the
renderer splits over threads or a GPU's threads) but one of the kernel's own, under AFTER(out, store), as a packed panel's
(codegen/pack.py): linearize opens it, apply_opts finds no global loop to plan. A dest outside out writes nothing: the
store is gated (rendered `if (g) out[d] = v;`) unless d's bounds already keep it inside."""
from __future__ import annotations
from tinygrad.dtype import dtypes
from tinygrad.uop.ops import UOp, Ops, graph_rewrite

def is_scatter(ast: UOp) -> bool: return len(ast.src) == 1 and ast.src[0].op is Ops.STORE and len(ast.src[0].src) == 3

def lower_scatter(ast: UOp) -> tuple[UOp, list[UOp]]:
  """The scalar SINK of a scatter kernel and its global ranges (none)."""
  from tinygrad.codegen.lowerer import LowerContext, TRUE, index, pm_lower, pm_simplify, _and
  out, dest, vals = ast.src[0].src
  if dest.shape != vals.shape or len(dest.shape) != 1 or dest.dtype != dtypes.int32 or vals.dtype != out.dtype:
    raise ValueError(f"a scatter kernel takes dest and vals of one 1-d shape, dest int32, vals {out.dtype}: got {dest.shape} {dest.dtype}, {vals.shape} {vals.dtype}")
  ctx = LowerContext()
  j = ctx.new_range(dest.shape[0], "pack")
  d, v = (graph_rewrite(index(x, TRUE, (j,)), pm_lower, ctx=ctx, name="lower: scatter index to loops") for x in (dest, vals))
  # a place outside out is no write (an index out of range: tinygrad drops it); the gate goes where d can't reach there
  inside = _and(UOp(Ops.CMPLT, dtypes.bool, (UOp.const(dtypes.int32, -1), d)), UOp(Ops.CMPLT, dtypes.bool, (d, UOp.const(dtypes.int32, out.arg[1]))))
  gate = () if d.vmin >= 0 and d.vmax < out.arg[1] else (inside,)
  if (op := ast.src[0].arg) is not None:  # combined with what is there (scatter_reduce): read just before the store
    old = UOp(Ops.LOAD, out.dtype, (out, d, *gate))
    v = UOp(Ops.WHERE, out.dtype, (UOp(Ops.CMPLT, dtypes.bool, (v, old)), v, old)) if op == "min" else UOp(op, out.dtype, (old, v))
  sink = UOp(Ops.SINK, dtypes.void, (UOp(Ops.AFTER, out.dtype, (out, UOp(Ops.STORE, dtypes.void, (out, d, v, *gate)))),))
  return graph_rewrite(sink, pm_simplify, name="lower: simplify"), []
