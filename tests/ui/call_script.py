"""The engine run the @function UI test looks at: a two-layer model whose forward is one @function call, run forward
and backward, so the trace holds a call's body (and its backward's) in contexts of their own."""
from tinygrad import Tensor, function, nn

class Model:
  def __init__(self): self.l1, self.l2 = nn.Linear(8, 16), nn.Linear(16, 4)
  @function
  def __call__(self, x: Tensor) -> Tensor: return self.l2(self.l1(x).relu())

model = Model()
for p in nn.state.get_parameters(model): p.requires_grad = True
x = Tensor.ones(2, 8)
print(model(x).numpy().sum())  # a schedule of the forward call
model(x).sum().backward()
print(model.l1.weight.grad.numpy().sum())  # one of its backward call
