"""The on-ramp: what a tinygrad newcomer learns first, run as written (the tests run this file).
  python examples/ramp.py          then try   DEBUG=4 python examples/ramp.py   or   VIZ=1 python examples/ramp.py"""
from tinygrad import Tensor, Device, dtypes
from tinygrad.uop.ops import UOp, Ops, UPat, PatternMatcher, graph_rewrite

# the device tensors go to when you name none: CPU when a C compiler works, else PYTHON
print("Device.DEFAULT:", Device.DEFAULT)

# a Tensor is lazy: this only builds a graph. Its uop is a COPY from a buffer on the Python side to the device.
t = Tensor([1, 2, 3, 4])
assert t.dtype == dtypes.int
assert t.uop.op is Ops.COPY and t.uop.src[0].op is Ops.BUFFER and t.uop.src[0].device == "PYTHON"
print("lazy:", t.uop)

# realize() runs it; afterwards the tensor is a buffer on the device
t.realize()
assert t.uop.op is Ops.BUFFER and t.uop.device == Device.DEFAULT
print("realized:", t.uop)

# UOps are hash-consed: building the same graph twice gives the very same object
assert (t * 4).uop is (t * 4).uop
print("t*4 is shared:", (t * 4).uop is (t * 4).uop, "->", (t * 4).tolist())

# every transformation is a graph_rewrite with a PatternMatcher; here, constant folding of an ADD of two CONSTs
two_plus_two = UOp.const(dtypes.int, 2) + UOp.const(dtypes.int, 2)
fold = PatternMatcher([(UPat.cvar("x") + UPat.cvar("y"), lambda x, y: x.const_like(x.arg + y.arg))])
fold_spelled_out = PatternMatcher([(UPat(Ops.ADD, src=(UPat.cvar("x"), UPat.cvar("y"))), lambda x, y: x.const_like(x.arg + y.arg))])
four = graph_rewrite(two_plus_two, fold)
assert four.op is Ops.CONST and four.arg == 4
assert graph_rewrite(two_plus_two, fold_spelled_out) is four is UOp.const(dtypes.int, 4)
print("2+2 rewrites to:", four)

# elementwise ops fuse into one kernel; the reduction ends it
out = ((t + 3 + 4) * 2).sum()
print("sum of (t+3+4)*2 =", out.item())
assert out.item() == sum((v + 7) * 2 for v in [1, 2, 3, 4])
