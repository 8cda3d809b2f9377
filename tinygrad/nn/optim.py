"""Optimizers. step() realizes the updated parameters (and their state) in one schedule; every update is an
assign into the parameter's own buffer, so a TinyJit replay keeps training the same memory."""
from __future__ import annotations
from tinygrad.tensor import Tensor
from tinygrad.helpers import dedup
from tinygrad.dtype import dtypes, least_upper_dtype
from tinygrad.engine.realize import run_schedule
from tinygrad import tracing

def _like(x: Tensor, p: Tensor) -> Tensor:
  """x on p's device(s): optimizer state may live elsewhere (moved to the CPU to save device memory, as tinygrad allows)."""
  if x.device == p.device: return x
  return x.shard_like(p) if isinstance(p.device, tuple) else x.to(p.device)

def _zeros_like(p: Tensor) -> Tensor:
  return Tensor.zeros(*p.shape, device=p.device, dtype=dtypes.float32, requires_grad=False)

class Optimizer:
  def __init__(self, params: list[Tensor], lr: float):
    # a bad hyperparameter is refused before anything is realized, with torch's ValueError (tinygrad's test_edgecases)
    if isinstance(lr, (int, float)) and not lr >= 0: raise ValueError(f"invalid learning rate {lr}: it must be >= 0")
    for p in params:
      if p.requires_grad is None: p.requires_grad = True
    self.params = dedup([p for p in params if p.requires_grad])
    if not self.params: raise ValueError("optimizer got no parameters that require grad")
    self.buffers = dedup([p for p in params if not p.requires_grad])
    # the learning rate and the optimizer's state are kept in at least float32 (tinygrad: a half model's update would overflow)
    self.device = self.params[0].device  # where lr lives (tinygrad's optimizer.device: lr schedulers make their counters there)
    # the initial values get buffers of their own (a still-lazy random init would otherwise be fused into, and recomputed
    # by, every kernel of the first step that reads the weight), filled lazily, as tinygrad initializes: by the next
    # realize (the first step's), whose schedule computes them with the step (one compile, beside the step's codegen)
    # rather than each init waiting for a compiler. What can't wait (a copy of host data, multi-device state) is
    # scheduled now and run as one schedule; traced, each such schedule runs at once, as the trace has always shown them
    self._run, self._items = tracing.tracer is not None, []
    self._keep(*(self.params + self.buffers))
    self.lr = self._keep(Tensor([lr], requires_grad=False, device=self.device, dtype=least_upper_dtype(dtypes.default_float, dtypes.float32)).contiguous())
    self._new_state()
    if self._items: run_schedule(self._items)
    del self._items, self._run
  def _keep(self, *ts: Tensor) -> Tensor:
    """ts each in a buffer of its own: filled by the next realize, or scheduled now (run with the others at the end of
    __init__) for one that can't wait. A state tensor must be kept before the next is made (two zeros of one shape are
    one UOp: made together, they would be computed into one buffer)."""
    if now := [t for t in ts if not t._fill_later()]:
      self._items += Tensor.realize_all(now, with_pending_assigns=False, run=self._run)
    return ts[-1]
  def _new_state(self) -> None:
    """Make the optimizer's state tensors (attributes of self), each through _keep."""
  def zero_grad(self) -> None:
    for p in self.params: p.grad = None
  def step(self) -> None: Tensor.realize_all(self.schedule_step())
  def schedule_step(self) -> list[Tensor]:
    """Assign the updates lazily and return what must be realized (tinygrad: loss.realize(*opt.schedule_step())).
    Only in training mode (`with Tensor.train():` or Context(TRAINING=1)), as in tinygrad 0.14."""
    if not Tensor.training:
      raise RuntimeError("the optimizer steps only in training mode (TRAINING=0 now): step under `with Tensor.train():` or Context(TRAINING=1)")
    for p in self.params:
      if p.grad is None: raise RuntimeError(f"a parameter of shape {p.shape} has no gradient: call loss.backward() before step()")
    return self._step() + self.params + self.buffers
  def _step(self) -> list[Tensor]: raise NotImplementedError

class OptimizerGroup(Optimizer):
  """Several optimizers stepped as one (e.g. different learning rates for different parameters)."""
  def __init__(self, *optimizers: Optimizer):
    self.optimizers = optimizers
    self.params, self.buffers = dedup(p for o in optimizers for p in o.params), dedup(b for o in optimizers for b in o.buffers)
  def __getitem__(self, i: int) -> Optimizer: return self.optimizers[i]
  def zero_grad(self) -> None:
    for o in self.optimizers: o.zero_grad()
  def schedule_step(self) -> list[Tensor]: return dedup(t for o in self.optimizers for t in o.schedule_step())

class LARS(Optimizer):
  """SGD with a per-parameter trust ratio tcoef * |w| / (|g| + wd * |w|) (layer-wise adaptive rate scaling).
  classic=True applies the learning rate before momentum, otherwise after (as torch's SGD does). ns_coefficients: the
  update is orthogonalized by ns_steps Newton-Schulz steps (Muon). pre_wd: weight decay joins the gradient before
  momentum; otherwise it is applied after, decoupled (lr * wd * w, as Muon and torch's Muon do). Arguments in tinygrad's order."""
  def __init__(self, params: list[Tensor], lr: float = 0.001, momentum: float = 0.9, weight_decay: float = 1e-4, ns_steps: int = 0,
               ns_coefficients: tuple[float, ...] | None = None, nesterov: bool = False, classic: bool = True, pre_wd: bool = True,
               tcoef: float = 0.001):
    if momentum < 0: raise ValueError(f"momentum must be >= 0, got {momentum}")
    if not weight_decay >= 0: raise ValueError(f"invalid weight_decay {weight_decay}: it must be >= 0")
    self.momentum, self.wd, self.nesterov, self.classic, self.tcoef = momentum, weight_decay, nesterov, classic, tcoef
    self.ns_steps, self.ns_coefficients, self.pre_wd = ns_steps, ns_coefficients, pre_wd
    super().__init__(params, lr)
  def _new_state(self) -> None: self.b = [self._keep(_zeros_like(p)) for p in self.params] if self.momentum else []
  def _step(self) -> list[Tensor]:
    for i, p in enumerate(self.params):
      g = p.grad.detach()  # type: ignore[union-attr]
      if self.tcoef:
        r1, r2 = p.detach().square().sum().sqrt(), g.square().sum().sqrt()
        r: Tensor | float = (r1 > 0).where((r2 > 0).where(self.tcoef * r1 / (r2 + self.wd * r1), 1.0), 1.0)
      else: r = 1.0
      # without momentum the in-place update would read the lazy gradient, which reads the other parameters: two updates
      # each reading the other's old value can't be ordered (x's needs W before W's assign, W's needs x before x's), so
      # the gradient gets its own buffer first (with momentum, the momentum buffer is that buffer)
      if not self.momentum: g = g.contiguous()
      if self.pre_wd and self.wd: g = g + self.wd * p.detach()
      if self.classic: g = g * r * self.lr
      if self.momentum:
        self.b[i].assign((self.momentum * self.b[i] + g).cast(self.b[i].dtype))
        g = g + self.momentum * self.b[i] if self.nesterov else self.b[i]
      if self.ns_coefficients: g = g.reshape(g.shape[0], -1).newton_schulz(self.ns_steps, self.ns_coefficients).reshape(g.shape)
      if not self.classic: g = g * r * self.lr
      if not self.pre_wd and self.wd: g = g + self.wd * self.lr * p.detach()
      p.assign((p.detach() - g).cast(p.dtype))
    return self.b

class SGD(LARS):
  """LARS without the trust ratio, the learning rate applied after momentum (torch's SGD)."""
  def __init__(self, params: list[Tensor], lr: float = 0.001, momentum: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, classic: bool = False):
    super().__init__(params, lr, momentum, weight_decay, nesterov=nesterov, classic=classic, tcoef=0.0)

def Muon(params: list[Tensor], lr: float = 0.001, momentum: float = 0.95, weight_decay: float = 0.1, ns_steps: int = 5,
         ns_coefficients: tuple[float, ...] = (3.4445, -4.775, 2.0315), nesterov: bool = True) -> LARS:
  """SGD whose (nesterov) momentum update is orthogonalized by Newton-Schulz steps, with decoupled weight decay
  (https://kellerjordan.github.io/posts/muon/): tinygrad's Muon, which matches torch.optim.Muon."""
  return LARS(params, lr, momentum, weight_decay, ns_steps, ns_coefficients, nesterov, classic=False, pre_wd=False, tcoef=0.0)

class LAMB(Optimizer):
  """Adam and AdamW are LAMB without the trust ratio, as in tinygrad."""
  def __init__(self, params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-6, weight_decay: float = 0.0, adam: bool = False):
    if not weight_decay >= 0: raise ValueError(f"invalid weight_decay {weight_decay}: it must be >= 0")
    if not eps >= 0: raise ValueError(f"invalid eps {eps}: it must be >= 0")
    for name, b in (("b1", b1), ("b2", b2)):
      if not 0 <= b < 1: raise ValueError(f"invalid {name} {b}: it must be in [0, 1)")
    self.b1, self.b2, self.eps, self.wd, self.adam = b1, b2, eps, weight_decay, adam
    super().__init__(params, lr)
  def _new_state(self) -> None:
    dev = self.params[0].device
    self.b1_t, self.b2_t = (self._keep(Tensor.ones(1, device=dev, dtype=dtypes.float32, requires_grad=False)) for _ in range(2))
    self.m = [self._keep(_zeros_like(p)) for p in self.params]
    self.v = [self._keep(_zeros_like(p)) for p in self.params]
  def _step(self) -> list[Tensor]:
    self.b1_t.assign(self.b1_t * self.b1)
    self.b2_t.assign(self.b2_t * self.b2)
    for i, p in enumerate(self.params):
      g = p.grad.detach()  # type: ignore[union-attr]
      if g.device != self.m[i].device: g = g.contiguous().to(self.m[i].device)
      self.m[i].assign((self.b1 * self.m[i] + (1.0 - self.b1) * g).cast(self.m[i].dtype))
      self.v[i].assign((self.b2 * self.v[i] + (1.0 - self.b2) * (g * g)).cast(self.v[i].dtype))
      m_hat = self.m[i] / (1.0 - self.b1_t)
      v_hat = self.v[i] / (1.0 - self.b2_t)
      up = _like(m_hat / (v_hat.sqrt() + self.eps), p) + self.wd * p.detach()
      if not self.adam:
        r1, r2 = p.detach().square().sum().sqrt(), up.square().sum().sqrt()
        up = up * (r1 > 0).where((r2 > 0).where(r1 / r2, 1.0), 1.0)
      p.assign((p.detach() - self.lr * up).cast(p.dtype))
    return [self.b1_t, self.b2_t] + self.m + self.v

def Adam(params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> LAMB:
  return LAMB(params, lr, b1, b2, eps, 0.0, adam=True)
def AdamW(params: list[Tensor], lr: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.01) -> LAMB:
  return LAMB(params, lr, b1, b2, eps, weight_decay, adam=True)
