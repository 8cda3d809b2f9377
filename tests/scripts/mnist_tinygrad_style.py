"""A training script written the way tinygrad's tutorials write them (the MNIST quickstart's idioms: nn.datasets.mnist,
the jitted train step decorated with @Tensor.train(), @Tensor.test() for evaluation, Tensor.randint batches indexed
out of the whole dataset, trange and colored from tinygrad.helpers). tests/test_compat_scripts.py runs it unchanged."""
from tinygrad import Tensor, TinyJit, nn, GlobalCounters
from tinygrad.helpers import getenv, colored, trange
from tinygrad.nn.datasets import mnist

class Net:
  def __init__(self):
    self.c1, self.c2 = nn.Conv2d(1, 16, 5), nn.Conv2d(16, 32, 5)
    self.bn = nn.BatchNorm(32)
    self.fc = nn.Linear(32 * 4 * 4, 10)
  def __call__(self, x: Tensor) -> Tensor:
    x = self.c1(x / 255.0).relu().max_pool2d()               # (N, 16, 12, 12)
    x = self.bn(self.c2(x).relu()).max_pool2d()              # (N, 32, 4, 4)
    return self.fc(x.flatten(1))

if __name__ == "__main__":
  X_train, Y_train, X_test, Y_test = mnist(fashion=getenv("FASHION"))
  model = Net()
  opt = nn.optim.Adam(nn.state.get_parameters(model), lr=getenv("LR", 0.003))

  @TinyJit
  @Tensor.train()
  def train_step() -> Tensor:
    opt.zero_grad()
    samples = Tensor.randint(getenv("BS", 64), high=X_train.shape[0])
    loss = model(X_train[samples]).sparse_categorical_crossentropy(Y_train[samples]).backward()
    opt.step()
    return loss

  @TinyJit
  @Tensor.test()
  def get_test_acc() -> Tensor: return (model(X_test).argmax(axis=1) == Y_test).mean() * 100

  test_acc = float("nan")
  for i in (t := trange(getenv("STEPS", 70))):
    GlobalCounters.reset()
    loss = train_step()
    if i % 10 == 9: test_acc = get_test_acc().item()
    t.set_description(f"loss: {loss.item():6.2f} test_accuracy: {test_acc:5.2f}%")
  print(colored(f"test accuracy {test_acc:.2f}%", "green" if test_acc >= getenv("TARGET", 90) else "red"))
