"""The engine run the schedule UI tests look at (VIZ=-1 writes its trace): one training step of a small MLP, realized
inside a function, so the newest schedule is named by that line and holds several kernels (forward, backward, SGD)."""
from tinygrad import Tensor, nn

class MLP:
  def __init__(self): self.l1, self.l2 = nn.Linear(16, 32), nn.Linear(32, 4)
  def __call__(self, x: Tensor) -> Tensor: return self.l2(self.l1(x).relu())

model = MLP()
opt = nn.optim.SGD(nn.state.get_parameters(model), lr=0.1)
x, y = Tensor.randn(8, 16).realize(), Tensor([0, 1, 2, 3, 0, 1, 2, 3])

def train_step() -> Tensor:
  with Tensor.train():
    opt.zero_grad()
    loss = model(x).sparse_categorical_crossentropy(y).backward()
    opt.step()
    return loss.realize()  # the schedule under test: named "train_step · schedule_script.py:<this line>"

print(train_step().item())
