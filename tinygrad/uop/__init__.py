from tinygrad.uop.ops import Ops, UOp, UPat, PatternMatcher, GroupOp, graph_rewrite
