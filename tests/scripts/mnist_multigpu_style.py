"""A data-parallel training script written the way tinygrad's multi-GPU MNIST example writes it: GPUS named from
Device.DEFAULT, the test set sharded on the batch axis with shard_, a copy of every weight on every device with to_,
each batch gathered on one device and sharded with shard_ inside the jitted step, Adam over the replicated weights
(their gradients all-reduced), the test accuracy a mean across the shards. tests/test_multi_scripts.py runs it."""
from tinygrad import Tensor, TinyJit, nn, GlobalCounters, Device
from tinygrad.helpers import getenv, colored, trange
from tinygrad.nn.datasets import mnist

GPUS = tuple(f"{Device.DEFAULT}:{i}" for i in range(getenv("GPUS", 2)))

class Net:
  def __init__(self):
    self.layers = [nn.Conv2d(1, 16, 5), Tensor.relu, Tensor.max_pool2d,                    # (N, 16, 12, 12)
                   nn.Conv2d(16, 32, 5), Tensor.relu, nn.BatchNorm2d(32), Tensor.max_pool2d,  # (N, 32, 4, 4)
                   lambda x: x.flatten(1), nn.Linear(32 * 4 * 4, 10)]
  def __call__(self, x: Tensor) -> Tensor: return (x / 255.0).sequential(self.layers)

if __name__ == "__main__":
  X_train, Y_train, X_test, Y_test = mnist()
  X_test.shard_(GPUS, axis=0)
  Y_test.shard_(GPUS, axis=0)
  model = Net()
  for x in nn.state.get_state_dict(model).values(): x.to_(GPUS)
  opt = nn.optim.Adam(nn.state.get_parameters(model), lr=getenv("LR", 0.003))

  @TinyJit
  def train_step() -> Tensor:
    with Tensor.train():
      opt.zero_grad()
      samples = Tensor.randint(getenv("BS", 64), high=X_train.shape[0])
      Xt, Yt = X_train[samples].shard_(GPUS, axis=0), Y_train[samples].shard_(GPUS, axis=0)
      loss = model(Xt).sparse_categorical_crossentropy(Yt).backward()
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
  print(f"devices {','.join(str(d) for d in loss.device)}")
  print(colored(f"test accuracy {test_acc:.2f}%", "green" if test_acc >= getenv("TARGET", 95) else "red"))
