"""TinyJit: the first call runs normally, the second captures every kernel and copy it runs, later calls replay
them on the new inputs' buffers with no Python scheduling."""
from __future__ import annotations
import functools
from typing import Any, Callable
from tinygrad.tensor import Tensor
from tinygrad.uop.ops import Ops
from tinygrad.engine import realize as R
from tinygrad.engine.schedule import is_contiguous_view
from tinygrad.device import Buffer
from tinygrad import tracing
from tinygrad.helpers import getenv, perf_ns, DEBUG, GlobalCounters

class JitError(RuntimeError): pass

def _input_buffers(t: Tensor) -> list[Buffer]:
  """The buffer behind an input, or one per device for a multi-device tensor."""
  out = []
  for u in (t.uop.src if t.uop.op is Ops.MULTI else (t.uop,)):
    while u.op is Ops.RESHAPE: u = u.src[0]
    out.append(R.buffer_for(u).ensure_allocated())
  return out
def _input_buffer(t: Tensor) -> Buffer: return _input_buffers(t)[0]

class TinyJit:
  def __init__(self, fxn: Callable[..., Any]):
    self.fxn, self.cnt = fxn, 0
    self.captured: list[tuple[Any, str, list[Buffer]]] = []
    self.signature: list[tuple] = []
    self.input_slots: list[list[tuple[int, int]]] = []
    self.ret: Any = None
    self._input_kernels: set[int] = set()
    self._direct: list[tuple[Callable, list[int]] | None] | bool | None = None  # bare calls for the replay, once built
    self._totals = (0, 0, 0)
    self._side_by_side, self._plan = False, None
    functools.update_wrapper(self, fxn)
  def __get__(self, obj, objtype=None): return functools.partial(self.__call__, obj)  # works on methods too
  def reset(self) -> None: self.cnt, self.captured, self.ret, self._direct, self._plan = 0, [], None, None, None

  def _inputs(self, args, kwargs) -> list[Tensor]:
    ts = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    for t in ts:  # inputs must be buffers the kernels can read directly
      t.realize()
      if not is_contiguous_view(t.uop):
        t.uop = t.contiguous().realize().uop
    return ts

  def __call__(self, *args, **kwargs) -> Any:
    if not getenv("JIT", 1):  # JIT=0: always run the Python function (for debugging)
      ret = self.fxn(*args, **kwargs)
      Tensor.realize_all(_tensors_in(ret))
      return ret
    inputs = self._inputs(args, kwargs)
    bufs = [_input_buffer(t) for t in inputs]
    # which inputs are the same buffer is part of the signature: a replay cannot tell apart inputs captured as one
    alias = tuple(next(j for j in range(i + 1) if bufs[j] is b) for i, b in enumerate(bufs))
    sig = [(t.shape, t.dtype, t.device, a) for t, a in zip(inputs, alias)]
    if self.cnt >= 2:
      if sig != self.signature:
        diff = next(i for i, (a, b) in enumerate(zip(sig + [None] * 9, self.signature + [None] * 9)) if a != b)
        raise JitError(f"TinyJit: input {diff} is (shape, dtype, device, same-as-input) {sig[diff] if diff < len(sig) else 'missing'} but was captured as "
                       f"{self.signature[diff] if diff < len(self.signature) else 'missing'}; a jitted function needs the same shapes, dtypes, devices "
                       "and the same inputs shared on every call")
      new = [b for t in inputs for b in _input_buffers(t)]
      for k, slots in enumerate(self.input_slots):
        for i, j in slots: self.captured[i][2][j] = new[k]
      for t in Tensor._rng_step.values():  # a new jit step: random numbers drawn in the function change
        b = _input_buffer(t)
        if b.is_host: mv = b.as_memoryview().cast("I"); mv[0] = (mv[0] + 1) & 0xFFFFFFFF
        else: b.copyin(((int.from_bytes(b.copyout(), "little") + 1) & 0xFFFFFFFF).to_bytes(4, "little"))  # waits for the GPU once a step
      if self._side_by_side:  # several CPU devices: each on its own queue, the plan made once
        if self._plan is None: self._plan = R.QueuedPlan(self.captured)
        self._plan.run()
      elif tracing.tracer is not None or DEBUG >= 2 or not self._replay_direct():
        for p, dev, bufs in self.captured:
          if p is None: R.exec_copy(bufs[1], bufs[0])
          else: R.exec_kernel(p, dev, bufs)
      return self.ret
    if self.cnt == 1:
      in_bufs = [b for t in inputs for b in _input_buffers(t)]
      R.capturing = []
      try:
        ret = self.fxn(*args, **kwargs)
        Tensor.realize_all([t for t in _tensors_in(ret)])
        captured = R.capturing
      finally: R.capturing = None
      self.captured = [(p, dev, list(bufs)) for p, dev, bufs in captured]
      self.input_slots = [[(i, j) for i, (_, _, bufs) in enumerate(self.captured) for j, b in enumerate(bufs) if b is ib] for ib in in_bufs]
      self._input_kernels, self._direct = {i for slots in self.input_slots for i, _ in slots}, None
      self.signature, self.ret = sig, ret
      self._side_by_side, self._plan = R.side_by_side([dev for p, dev, _ in self.captured if p is not None]), None
    else:
      ret = self.fxn(*args, **kwargs)
      Tensor.realize_all([t for t in _tensors_in(ret)])
    self.cnt += 1
    return ret

  def _replay_direct(self) -> bool:
    """Runs the captured kernels as bare calls of their compiled functions on their buffers' addresses, when every
    kernel's device can hand out such a call (the CPU): per kernel a few microseconds less than exec_kernel, which
    times and reports each one (with a tracer or DEBUG>=2 the replay goes through it). The counters get the totals."""
    if self._direct is None:
      calls = []
      for p, dev, bufs in self.captured:
        if p is None: calls.append(None); continue
        if (bind := getattr(R.Device[dev], "bind", None)) is None: self._direct = False; return False
        calls.append(bind(p, bufs))
      self._direct, progs = calls, [p for p, _, _ in self.captured if p is not None]
      self._totals = (len(progs), sum(p.flops for p in progs), sum(p.mem_bytes for p in progs))
    if self._direct is False: return False
    for i, (p, _, bufs) in enumerate(self.captured):  # the new inputs' addresses
      if (c := self._direct[i]) is not None and i in self._input_kernels: c[1][:] = [b.ptr for b in bufs]
    st = perf_ns()
    for (p, _, bufs), c in zip(self.captured, self._direct):
      if c is None: R.exec_copy(bufs[1], bufs[0])
      else: c[0](*c[1])
    n, flops, mem = self._totals
    GlobalCounters.kernel_count += n; GlobalCounters.global_ops += flops; GlobalCounters.global_mem += mem
    GlobalCounters.time_sum_s += (perf_ns() - st) * 1e-9
    return True

def _tensors_in(x: Any) -> list[Tensor]:
  if isinstance(x, Tensor): return [x]
  if isinstance(x, (list, tuple)): return [t for v in x for t in _tensors_in(v)]
  if isinstance(x, dict): return [t for v in x.values() for t in _tensors_in(v)]
  return []
