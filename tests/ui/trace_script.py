"""The engine run the UI tests look at (under VIZ=-1 it writes a trace and starts nothing): a small matmul, ReLU
and a column sum, so the trace has schedule contexts, three kernels and an upcast rewrite with ~100 matches."""
from tinygrad import Tensor

a = Tensor.arange(256).reshape(16, 16).float() / 100
b = Tensor.ones(16, 32).contiguous()
c = (a @ b).relu().sum(axis=0)
print(c.numpy()[:4])
