"""A digits classifier in the idiom of tinygrad's examples/beautiful_mnist.py: the model is a list of layers and
functions run by x.sequential, its forward is one @function call, the jitted train and eval steps are methods, the
optimizer's step is realized with the loss (loss.realize(*opt.schedule_step())). tests/test_function.py runs it."""
from typing import Callable
from tinygrad import Tensor, TinyJit, nn, GlobalCounters, function
from tinygrad.helpers import getenv, colored, trange
from tinygrad.nn.datasets import mnist

class Model:
  def __init__(self):
    self.layers: list[Callable[[Tensor], Tensor]] = [
      lambda x: x / 255.0,
      nn.Conv2d(1, 16, 5), Tensor.relu, Tensor.max_pool2d,     # (N, 16, 12, 12)
      nn.Conv2d(16, 32, 5), Tensor.relu,
      nn.BatchNorm(32), Tensor.max_pool2d,                     # (N, 32, 4, 4)
      lambda x: x.flatten(1), nn.Linear(512, 10)]

  @function
  def __call__(self, x: Tensor) -> Tensor: return x.sequential(self.layers)

  @TinyJit
  @Tensor.train()
  def train_step(self, X: Tensor, Y: Tensor) -> Tensor:
    opt.zero_grad()
    samples = Tensor.randint(getenv("BS", 128), high=X.shape[0])
    loss = self(X[samples]).sparse_categorical_crossentropy(Y[samples]).backward()
    return loss.realize(*opt.schedule_step())

  @TinyJit
  def get_test_acc(self, X: Tensor, Y: Tensor) -> Tensor: return (self(X).argmax(axis=1) == Y).mean() * 100

if __name__ == "__main__":
  X_train, Y_train, X_test, Y_test = mnist()
  model = Model()
  opt = nn.optim.Adam(nn.state.get_parameters(model), lr=getenv("LR", 0.003))
  test_acc = float("nan")
  for i in (t := trange(getenv("STEPS", 70))):
    GlobalCounters.reset()
    loss = model.train_step(X_train, Y_train)
    if i % 10 == 9: test_acc = model.get_test_acc(X_test, Y_test).item()
    t.set_description(f"loss: {loss.item():6.2f} test_accuracy: {test_acc:5.2f}%")
  print(f"forward traced {Model.__call__.trace_count} times")
  print(colored(f"test accuracy {test_acc:.2f}%", "green" if test_acc >= getenv("TARGET", 95) else "red"))
