"""Multi-device tensors on CPU, CPU:1, CPU:2: a sharded or replicated computation gives what the same computation
gives on one device (values and gradients), ops across the sharded axis combine through copies, and bad inputs are
named."""
import numpy as np, pytest
from tinygrad import Tensor, Device, dtypes
from tinygrad.uop.ops import Ops

D2 = ("CPU", "CPU:1")
D3 = ("CPU", "CPU:1", "CPU:2")
rng = np.random.default_rng(0)
X = rng.standard_normal((6, 12)).astype(np.float32)
W = rng.standard_normal((12, 6)).astype(np.float32)
B = rng.standard_normal((12,)).astype(np.float32)
IMG = rng.standard_normal((6, 2, 7, 7)).astype(np.float32)
KER = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
Y = np.array([1, 0, 3, 5, 2, 4], dtype=np.int32)

# name -> fn(x (6,12), w (12,6), b (12,), img, ker, y); run once on one device and once with x, img, y sharded on axis 0
# (or, where named "axis1", x sharded on axis 1) and w, b, ker replicated
OPS = {
  "elementwise": lambda x, w, b, img, ker, y: (x * 2 + 1).relu() * x.exp().sin() - (x > 0).where(x, -x),
  "broadcast replicated": lambda x, w, b, img, ker, y: x + b,
  "broadcast sharded column": lambda x, w, b, img, ker, y: x * x.sum(1, keepdim=True),
  "sum along": lambda x, w, b, img, ker, y: x.sum(1),
  "sum across": lambda x, w, b, img, ker, y: x.sum(0),
  "sum all": lambda x, w, b, img, ker, y: x.sum(),
  "max across": lambda x, w, b, img, ker, y: x.max(0),
  "mean": lambda x, w, b, img, ker, y: x.mean(),
  "matmul sharded rows": lambda x, w, b, img, ker, y: x @ w,
  "matmul over the sharded axis": lambda x, w, b, img, ker, y: x.T @ x,
  "permute reshape": lambda x, w, b, img, ker, y: x.reshape(6, 3, 4).permute(2, 0, 1).reshape(4, 18) * 3,
  "pad shrink flip": lambda x, w, b, img, ker, y: x.pad(((0, 0), (1, 2))).flip(1)[:, 2:9] + 1,
  "slice across shards": lambda x, w, b, img, ker, y: x[1:5] * 2,
  "pad the sharded axis": lambda x, w, b, img, ker, y: x.pad(((1, 1), (0, 0))).sum(1),
  "expand cat": lambda x, w, b, img, ker, y: x.unsqueeze(1).expand(6, 2, 12).reshape(6, 24).cat(x, dim=1),
  "conv2d": lambda x, w, b, img, ker, y: img.conv2d(ker, padding=1).relu().max_pool2d(),
  "softmax": lambda x, w, b, img, ker, y: x.softmax(1),
  "softmax across": lambda x, w, b, img, ker, y: x.softmax(0),
  "argmax": lambda x, w, b, img, ker, y: x.argmax(1),
  "argmax across": lambda x, w, b, img, ker, y: x.argmax(0),
  "cross entropy": lambda x, w, b, img, ker, y: (x @ w).sparse_categorical_crossentropy(y),
  "cast int": lambda x, w, b, img, ker, y: (x * 10).cast(dtypes.int32) + y.reshape(6, 1),
}
GRAD_OPS = ["elementwise", "broadcast replicated", "sum across", "mean", "matmul sharded rows", "matmul over the sharded axis",
            "permute reshape", "pad shrink flip", "slice across shards", "conv2d", "softmax", "softmax across", "cross entropy"]

def _run(name: str, devices, axis: int = 0):
  x, w, b = Tensor(X, requires_grad=True), Tensor(W, requires_grad=True), Tensor(B, requires_grad=True)
  img, ker, y = Tensor(IMG, requires_grad=True), Tensor(KER, requires_grad=True), Tensor(Y)
  leaves = (x, w, b, img, ker)
  if devices is not None:
    args = (x.shard(devices, axis), w.to(devices), b.to(devices), img.shard(devices, 0), ker.to(devices), y.shard(devices, 0))
  else: args = (x, w, b, img, ker, y)
  out = OPS[name](*args)
  return out, leaves

@pytest.mark.parametrize("devices", [D2, D3], ids=["2 devices", "3 devices"])
@pytest.mark.parametrize("name", list(OPS))
def test_sharded_values_equal_one_device(name, devices):
  want = _run(name, None)[0].numpy()
  got_t = _run(name, devices)[0]
  assert isinstance(got_t.device, tuple) and len(got_t.device) == len(devices)
  got = got_t.numpy()
  assert got.shape == want.shape and got.dtype == want.dtype
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

@pytest.mark.parametrize("name", ["sum along", "sum across", "matmul over the sharded axis", "softmax across", "permute reshape"])
def test_sharded_on_axis_1(name):
  np.testing.assert_allclose(_run(name, D3, axis=1)[0].numpy(), _run(name, None)[0].numpy(), rtol=1e-5, atol=1e-5)

@pytest.mark.parametrize("devices", [D2, D3], ids=["2 devices", "3 devices"])
@pytest.mark.parametrize("name", GRAD_OPS)
def test_sharded_gradients_equal_one_device(name, devices):
  def grads(devs):
    out, leaves = _run(name, devs)
    (out * Tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape), device=out.device)).sum().backward()
    return [t.grad.numpy() if t.grad is not None else None for t in leaves]
  for want, got in zip(grads(None), grads(devices)):
    if want is None: assert got is None
    else: np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

def test_shard_splits_and_to_replicates():
  t = Tensor(X).shard(D3, axis=0)
  assert t.device == D3 and t.shape == (6, 12) and t.uop.op is Ops.MULTI
  t.realize()
  pieces = [Tensor(s).numpy() for s in t.uop.src]  # each device holds two rows
  assert [Tensor(s).device for s in t.uop.src] == list(D3)
  for i, p in enumerate(pieces): np.testing.assert_array_equal(p, X[2 * i:2 * i + 2])
  r = Tensor(W).to(D2).realize()
  assert r.device == D2 and all(Tensor(s).numpy().shape == W.shape for s in r.uop.src)
  np.testing.assert_array_equal(r.numpy(), W)
  assert Tensor(X).shard_(D2, axis=-1).device == D2
  assert Device.canonicalize((Device.DEFAULT + ":0", "cpu:1")) == ("CPU", "CPU:1")
  assert Tensor.ones(2, 3, device=D2).sum().item() == 6.0

def test_shard_like_follows_the_other_tensors_devices_and_axis():
  from tinygrad.multi import shard_axis
  y = Tensor(X).shard(D2, axis=1)
  z = Tensor(X * 2).shard_like(y)  # a single-device tensor: sharded as y is
  assert z.device == D2 and shard_axis(z.uop) == 1
  assert [Tensor(s).numpy().shape for s in z.realize().uop.src] == [(6, 6), (6, 6)]
  w = Tensor(X).shard(D2, axis=0)
  # sharded on another axis: as tinygrad, shard_like of a multi-device tensor is only a no-op
  with pytest.raises(RuntimeError, match="axis 0, y along 1"): w.shard_like(y)
  assert w.shard_like(w) is w
  assert Tensor(X).shard_like(Tensor(W)).device == Device.DEFAULT  # y on one device: a plain .to
  with pytest.raises(RuntimeError, match="gather it first"): Tensor(X).shard(D3, axis=0).shard_like(y)

def test_a_reduction_across_shards_copies_partials_between_devices():
  from tinygrad.engine.schedule import create_schedule
  items, _ = create_schedule([Tensor(X).shard(D2, axis=0).sum(0).uop])
  copies = [(it.ast.src[0].device, it.outputs[0].device) for it in items if it.kind == "copy"]
  assert ("CPU", "CPU:1") in copies and ("CPU:1", "CPU") in copies  # each device gets the other's partial sum
  assert {it.outputs[0].device for it in items if it.kind == "kernel"} == {"CPU", "CPU:1"}

def test_assign_into_replicated_and_sharded():
  w = Tensor(W).to(D2).realize()
  w.assign(w * 2).realize()
  np.testing.assert_allclose(w.numpy(), W * 2)
  x = Tensor(X).shard(D3, axis=0).realize()
  x.assign(x + Tensor(B).to(D3)).realize()
  np.testing.assert_allclose(x.numpy(), X + B, rtol=1e-6)

def test_uneven_shards_are_refused():
  with pytest.raises(ValueError, match=r"axis 0 of shape \(5, 2\) over 2 devices: 5 does not divide by 2"):
    Tensor.ones(5, 2).contiguous().shard(D2, axis=0)
  with pytest.raises(ValueError, match="does not divide by 3"): Tensor.ones(6, 4).shard(D3, axis=1)

def test_mixing_device_tuples_is_named():
  a, b = Tensor(X).shard(D2, axis=0), Tensor(X).shard(("CPU", "CPU:2"), axis=0)
  with pytest.raises(ValueError, match=r"different devices: \('CPU', 'CPU:1'\) and \('CPU', 'CPU:2'\)"): a + b
  with pytest.raises(ValueError, match="different devices"): a + Tensor(X)
  with pytest.raises(ValueError, match="different devices"): a @ Tensor(W)
  with pytest.raises(RuntimeError, match="can't shard a multi-device tensor"): a.shard(D2, axis=1)
  with pytest.raises(ValueError, match="unknown device"): Tensor(X).shard(("CPU", "TPU:1"), axis=0)

@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_jitted_data_parallel_training_equals_one_device(opt_name):
  from tinygrad import TinyJit, nn
  imgs = rng.standard_normal((64, 1, 12, 12)).astype(np.float32)
  labels = rng.integers(0, 4, 64).astype(np.int32)
  def train(devices):
    Tensor.manual_seed(1)
    conv, lin = nn.Conv2d(1, 8, 3), nn.Linear(8 * 5 * 5, 4)
    params = nn.state.get_parameters([conv, lin])
    if devices is not None:
      for p in params: p.to_(devices)
    # Adam's eps raised: with 1e-8 a near-zero gradient's last-bit rounding (the all-reduce adds partials in another
    # order than one device's sum) becomes a full +-lr step, and the comparison would test float noise
    opt = nn.optim.SGD(params, lr=0.05) if opt_name == "SGD" else nn.optim.Adam(params, lr=0.01, eps=1e-3)
    @TinyJit
    def step(x, y):
      with Tensor.train():
        opt.zero_grad()
        loss = lin(conv(x).relu().max_pool2d().flatten(1)).sparse_categorical_crossentropy(y).backward()
        return loss.realize(*opt.schedule_step())  # the loss of this step's weights, in the step's one schedule
    losses = []
    for i in range(4):  # run, capture, replay twice: each with new data in the same input buffers' places
      x, y = Tensor(imgs[::-1] if i % 2 else imgs), Tensor(labels[::-1] if i % 2 else labels)
      if devices is not None: x, y = x.shard(devices, 0), y.shard(devices, 0)
      losses.append(step(x, y).item())
    return losses, lin.weight.numpy(), conv.weight.device
  want, w_want, _ = train(None)
  got, w_got, dev = train(D2)
  assert dev == D2
  np.testing.assert_allclose(got, want, rtol=1e-5)
  np.testing.assert_allclose(w_got, w_want, rtol=1e-4, atol=1e-6)

def test_a_repeated_sharded_step_is_scheduled_once_and_trains_as_one_device():
  from tinygrad import nn
  from tinygrad.engine import schedule_cache
  xs = rng.standard_normal((8, 16)).astype(np.float32)
  def train(devices):
    Tensor.manual_seed(0)
    lin = nn.Linear(16, 4)
    if devices is not None:
      for p in nn.state.get_parameters(lin): p.to_(devices)
    opt = nn.optim.SGD(nn.state.get_parameters(lin), lr=0.1)
    x = Tensor(xs).shard(devices, 0).realize() if devices is not None else Tensor(xs)
    losses, hits = [], []
    for _ in range(4):
      h = schedule_cache.stats["hits"]
      with Tensor.train():
        opt.zero_grad()
        loss = lin(x).square().mean().backward()
        opt.step()
      losses.append(loss.item())
      hits.append(schedule_cache.stats["hits"] - h)
    return losses, hits
  want, _ = train(None)
  got, hits = train(D2)
  np.testing.assert_allclose(got, want, rtol=1e-6)
  assert all(h > 0 for h in hits[1:]), hits  # from the second step on, the step's schedules come from the cache
