"""The C renderer is a pattern table from op to text (string_rewrite); a renderer changes a spelling by putting its
own rule in front, as CUDA's does, and nothing edits the rendered text afterwards."""
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.engine import realize as R
from tinygrad.uop.ops import UOp, Ops, UPat, PatternMatcher
from tinygrad.codegen.linearize import Program
from tinygrad.renderer.cstyle import CStyleRenderer, string_rewrite
from tinygrad.renderer.cuda import CUDARenderer, cuda_rewrite

def _program(t: Tensor) -> Program:
  # generated here, not loaded from the on-disk program cache: a loaded program carries its source only, no uops
  from tinygrad.codegen import program_cache
  was, program_cache.ENABLED = program_cache.ENABLED, False
  try: t.realize()
  finally: program_cache.ENABLED = was
  return next(p for (kind, _), p in reversed(list(R._programs.items())) if kind == "CPU")

def test_a_rule_in_front_changes_only_its_op():
  p = _program((Tensor(np.arange(1, 7, dtype=np.float32)) * 0.37).exp2())
  c = CStyleRenderer().render(p)
  class Mine(CStyleRenderer):
    string_rewrite = PatternMatcher([(UPat(Ops.EXP2, src=(UPat.var("a"),)), lambda ctx, a: f"my_exp2({ctx[a]})")]) + string_rewrite
  mine = Mine().render(p)
  assert "exp2f(" in c and "my_exp2(" in mine and mine == c.replace("exp2f(", "my_exp2(")
  assert len(p.line_uops) == len(mine.split("\n"))  # and the exact code links follow the text

def test_cuda_puts_its_rules_in_front_of_cs():
  assert cuda_rewrite.patterns[-len(string_rewrite.patterns):] == string_rewrite.patterns
  p = _program(Tensor(np.ones((4, 4), np.float32)).sum(1))
  src = CUDARenderer().render(p)
  assert "blockIdx.x" in src and "#pragma" not in src and "for (int ridx0 = 0; ridx0 < 4; ridx0++) {" in src

def test_an_op_with_no_rule_is_named():
  g = UOp(Ops.DEFINE_GLOBAL, dtypes.float32, (), (0, 1))
  bad = UOp(Ops.COPY, g.dtype, (g,))
  with pytest.raises(NotImplementedError, match="CStyleRenderer has no rule for Ops.COPY"):
    CStyleRenderer().render(Program("k", [g, bad], {}, [g], (), (), 0, 0))
