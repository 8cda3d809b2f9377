"""einops-style `rearrange` formulas ("b c (h p) w -> b (c p) h w", einops.rocks): a formula becomes one reshape that
splits the grouped dims, one permute, and one reshape that joins the output's groups."""
from __future__ import annotations
from dataclasses import dataclass
from tinygrad.helpers import prod

class RearrangeError(ValueError, AssertionError):
  """A formula that can't apply: a ValueError, and the AssertionError tinygrad raises there."""

@dataclass(frozen=True)
class Dim:
  names: tuple[str, ...]  # the axis names this dim holds: one, several in parentheses, none for `1` or `()`
  grouped: bool           # written in parentheses (an ellipsis inside stays one dim)

def parse_side(side: str, formula: str) -> list[Dim]:
  dims: list[Dim] = []
  group: list[str] | None = None
  for tok in side.replace("…", "...").replace("(", " ( ").replace(")", " ) ").split():
    if tok == "(":
      if group is not None: raise RearrangeError(f"rearrange: nested parentheses in {formula!r}")
      group = []
    elif tok == ")":
      if group is None: raise RearrangeError(f"rearrange: ')' without '(' in {formula!r}")
      dims.append(Dim(tuple(group), True)); group = None
    else:
      if not (tok in ("1", "...") or (tok.isidentifier() and not tok.startswith("_") and not tok.endswith("_"))):
        raise RearrangeError(f"rearrange: invalid axis name {tok!r} in {formula!r} (names are identifiers; 1 is a size-1 dim)")
      names = () if tok == "1" else (tok,)
      if group is None: dims.append(Dim(names, False))
      else: group.extend(names)
  if group is not None: raise RearrangeError(f"rearrange: '(' without ')' in {formula!r}")
  return dims

def expand_ellipsis(dims: list[Dim], ell: tuple[str, ...]) -> list[Dim]:
  """`...` standing alone becomes one dim per name it covers; inside parentheses, the names join that dim."""
  out: list[Dim] = []
  for d in dims:
    if "..." not in d.names: out.append(d)
    elif not d.grouped: out.extend(Dim((n,), False) for n in ell)
    else: out.append(Dim(tuple(m for n in d.names for m in (ell if n == "..." else (n,))), True))
  return out

def rearrange_plan(formula: str, shape: tuple[int, ...], sizes: dict[str, int]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
  """(split shape, permutation, output shape) that apply `formula` to a tensor of `shape`."""
  if not isinstance(formula, str) or formula.count("->") != 1: raise RearrangeError(f'rearrange: need exactly one "->" in the formula, got {formula!r}')
  lhs, rhs = (parse_side(s, formula) for s in formula.split("->"))
  ell_count = [sum(n == "..." for d in side for n in d.names) for side in (lhs, rhs)]
  if ell_count[0] > 1: raise RearrangeError(f"rearrange: more than one ellipsis on the left of {formula!r}")
  if ell_count != [0, 0] and ell_count != [1, 1]: raise RearrangeError(f"rearrange: an ellipsis must be on both sides of {formula!r}, once")
  if any(d.grouped and "..." in d.names for d in lhs): raise RearrangeError(f"rearrange: an ellipsis can't be in parentheses on the left of {formula!r}")
  n_ell = len(shape) - (len(lhs) - 1) if ell_count[0] else 0
  if (len(lhs) - bool(ell_count[0])) > len(shape) or (not ell_count[0] and len(lhs) != len(shape)):
    raise RearrangeError(f"rearrange: the left of {formula!r} names {len(lhs)} dims, the tensor has {len(shape)} {tuple(shape)}")
  ell = tuple(f"...{i}" for i in range(n_ell))
  lhs, rhs = expand_ellipsis(lhs, ell), expand_ellipsis(rhs, ell)
  left, right = [n for d in lhs for n in d.names], [n for d in rhs for n in d.names]
  for side, names in (("left", left), ("right", right)):
    if len(set(names)) != len(names): raise RearrangeError(f"rearrange: an axis name repeats on the {side} of {formula!r}")
  if set(left) != set(right):
    raise RearrangeError(f"rearrange: {formula!r} names {sorted(set(left) ^ set(right))} on one side only")
  for name, v in sizes.items():
    if name not in left: raise RearrangeError(f"rearrange: axis {name!r} is not used in {formula!r}")
    if not isinstance(v, int) or v < 0: raise RearrangeError(f"rearrange: size of {name!r} must be a non-negative int, got {v!r}")
  axis: dict[str, int] = {}
  for d, size in zip(lhs, shape):
    known, unknown = [sizes[n] for n in d.names if n in sizes], [n for n in d.names if n not in sizes]
    if len(unknown) > 1:
      raise RearrangeError(f"rearrange: can't infer the sizes of {unknown} in {formula!r}: give all but one (e.g. {unknown[0]}=...)")
    if unknown:
      if prod(known) == 0 or size % prod(known): raise RearrangeError(f"rearrange: dim of size {size} can't split into {d.names} with {dict(zip([n for n in d.names if n in sizes], known))} in {formula!r}")
      axis[unknown[0]] = size // prod(known)
    elif prod(known) != size:
      raise RearrangeError(f"rearrange: dim {d.names or '1'} of {formula!r} has size {prod(known)}, the tensor's has {size}")
    axis.update((n, sizes[n]) for n in d.names if n in sizes)
  return tuple(axis[n] for n in left), tuple(left.index(n) for n in right), tuple(prod(axis[n] for n in d.names) for d in rhs)
