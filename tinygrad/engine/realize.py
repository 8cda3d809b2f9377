"""Running a schedule: lower and compile each new kernel once (one compiler call per device), then run kernels and
copies in order. CPU and PYTHON kernels are timed on the host clock around a synchronous run; a device with `launch`
(CUDA) queues them without waiting and reports each one's own start and end when it synchronizes. Kernels on two or
more CPU devices (a multi-device tensor's) run side by side, each device on its own queue (see run_queued)."""
from __future__ import annotations
import ctypes, functools, gc, itertools, os, sys, threading, weakref
from typing import Any
from tinygrad.helpers import DEBUG, NOOPT, GlobalCounters, getenv, perf_ns
from tinygrad.terminal import ansilen, colored, tqdm
from tinygrad.uop.ops import UOp, Ops, rewrite_memo, track_context, untraced_rewrites
from tinygrad.codegen.lowerer import lower_kernel
from tinygrad.codegen.opts import apply_opts
from tinygrad.codegen.linearize import Program, CachedProgram, linearize
from tinygrad.codegen.long_reduce import reads_once
from tinygrad.codegen import program_cache
from tinygrad.engine.schedule import ScheduleItem, kernel_params
from tinygrad.device import Device, Buffer, buffers, HostQueue, host_queue
from tinygrad import tracing

_programs: dict[tuple[str, UOp], Program] = {}
_programs_noopt: dict[tuple[str, UOp], Program] = {}  # built under NOOPT=1 (Context(NOOPT=1)): kernels as lowered
_names: dict[str, list[UOp]] = {}

def _name_axes(ast: UOp) -> tuple[str, list[str], list[str]]:
  value = ast.src[0].src[1]
  reduces = [u for u in ast.toposort() if u.op is Ops.REDUCE_AXIS]
  out = [str(s) for s in value.shape if s != 1]
  if not reduces: return "E", out or ["1"], []
  return "r", out, [str(reduces[0].src[0].shape[a]) for a in reduces[0].arg[1] if reduces[0].src[0].shape[a] != 1] or ["1"]

def kernel_name(ast: UOp) -> str:
  """tinygrad's habit: E_<dims> for elementwise kernels, r_<output dims>_<reduced dims> for reductions."""
  letter, out, red = _name_axes(ast)
  return letter + "_" + "_".join(out + red)

def kernel_axis_kinds(ast: UOp) -> list[str]:
  """What each number of the kernel's name is ("global" output axis, "reduce" axis): how DEBUG=2 colours it."""
  _, out, red = _name_axes(ast)
  return ["global"] * len(out) + ["reduce"] * len(red)

def _unique_name(base: str, ast: UOp) -> str:
  seen = _names.setdefault(base, [])
  if ast not in seen: seen.append(ast)
  k = seen.index(ast)
  return base if k == 0 else f"{base}n{k}"

def device_kind(device: str) -> str: return device.partition(":")[0]

def get_program(ast: UOp, device: str) -> Program:
  """Lower, linearize and render a kernel (cached: the same kernel on the same kind of device is one program)."""
  kind = device_kind(device)
  key, progs = (kind, ast), _programs_noopt if NOOPT else _programs  # NOOPT=1 does not reuse an optimized program
  if (p := progs.get(key)) is not None: return p
  name = _unique_name(kernel_name(ast), ast)
  st = perf_ns()
  renderer = Device.renderer(device)  # the device itself opens only to compile: CUDA source renders without a GPU
  cached, disk_key = _cached_program(ast, name, kind, renderer)
  if cached is not None:
    progs[key] = cached
    return cached
  with track_context("kernel", name) as tc:
    tried: list[dict] = []
    p = _codegen(ast, name, kind, renderer, tried)
  p.ctx_id, p.kernel_id = tc.id, -1
  if (t := tracing.tracer) is not None:
    local = renderer.local_size(p) if hasattr(renderer, "local_size") else ()
    p.kernel_id = t.kernel(name, device, p.src, p.global_size, local, p.flops, p.mem_bytes, tc.id, [_uop_line(u) for u in p.uops], p.line_uops, tried,
                           axis_kinds=kernel_axis_kinds(ast))
    t.span("HOST", f"codegen {name}", st, perf_ns(), "codegen", {"kernel": p.kernel_id})
  if DEBUG >= 4: print(p.src)
  p.axis_kinds = kernel_axis_kinds(ast)
  progs[key] = p
  if disk_key is not None: program_cache.store(disk_key, p)
  return p

class gc_paused:
  """Python's cyclic collector paused while one kernel is generated, on again right after (if it was on): codegen
  makes ~10^5 short-lived UOps, few of them in cycles, and the collector's passes over them were 15-20% of a first
  run's Python CPU time (small GPT 4.9 -> 4.0 s with it off)."""
  def __enter__(self):
    self.was = gc.isenabled()
    if self.was: gc.disable()
  def __exit__(self, *exc):
    if self.was: gc.enable()

def _codegen(ast: UOp, name: str, kind: str, renderer: Any, tried: list[dict] | None = None) -> Program:
  """Lower, optimize (the plan search), linearize and render one kernel."""
  # rewrite_memo: the kernel's plans re-simplify mostly the same graph; untraced rewrites reuse what earlier ones found
  with rewrite_memo(), gc_paused():
    sink, granges = apply_opts(*lower_kernel(ast), vector=getattr(renderer, "vector_floats", 0) if kind == "CPU" else 0, max_upcast=renderer.max_upcast, tried=tried)
    p = linearize(sink, granges, name, [u for u in ast.toposort() if u.op is Ops.DEFINE_GLOBAL])
    first = next((u for u in p.uops if u.op is Ops.RANGE and u.arg[1] == "global"), None) or next((u for u in p.uops if u.op is Ops.RANGE), None)
    # compute-bound kernels use every core; streaming kernels only when huge: one core nearly saturates memory, and a
    # parallel region waits for its slowest thread, which on a busy machine is one that got descheduled. (A GPU kernel's
    # global loops are its threads already.)
    # only a global loop is split over threads: a first loop that is a reduction's (a kernel with no global loops) would
    # have every thread add into the same accumulators (a race: a conv weight gradient came out wrong, differently each run)
    p.parallel = kind != "CUDA" and first is not None and first.arg[1] == "global" and first.src[0].arg >= 2 and (
      p.flops >= renderer.parallel_threshold and p.flops >= 8 * (p.mem_bytes // 4) or p.mem_bytes >= renderer.parallel_stream_bytes and (not p.reduce_size or reads_once(p)))  # a split sum's partials (codegen/long_reduce.py)
    p.src = renderer.render(p)
  return p

def _cached_program(ast: UOp, name: str, kind: str, renderer: Any) -> tuple[Program | None, str | None]:
  """The program an earlier process made for this kernel (codegen/program_cache.py), and the key it is kept under on
  disk. Only a CPU kernel's, only while nothing is traced (the trace records how each kernel is made) and with the
  optimizer on; otherwise (None, None): nothing is read or stored."""
  if kind != "CPU" or NOOPT or not program_cache.ENABLED or tracing.tracer is not None: return None, None
  settings = (renderer.vector_floats, renderer.max_upcast, renderer.parallel_threshold, renderer.parallel_stream_bytes, getenv("NOVEC", 0))
  if (disk_key := program_cache.program_key(ast, name, settings)) is None or (d := program_cache.load(disk_key)) is None: return None, disk_key
  params = sorted([u for u in ast.toposort() if u.op is Ops.DEFINE_GLOBAL], key=lambda u: u.arg[0])
  p = CachedProgram(lambda: _remake(ast, name, kind, renderer), name, [], {}, params, tuple(d["global_size"]), tuple(d["reduce_size"]), d["flops"],
                    d["mem_bytes"], d["src"], d["parallel"])
  if DEBUG >= 4: print(p.src)
  p.axis_kinds = kernel_axis_kinds(ast)
  return p, disk_key

def _remake(ast: UOp, name: str, kind: str, renderer: Any) -> Program:
  """A cached program's uops made again, when something reads them (untraced: the kernel ran from the cache)."""
  with untraced_rewrites(): return _codegen(ast, name, kind, renderer)

def is_new(ast: UOp, device: str) -> bool:
  """Whether get_program would build this kernel now (its program isn't made yet)."""
  return (device_kind(device), ast) not in (_programs_noopt if NOOPT else _programs)

# the colours of kernelname.js (the viewer's): each number of a kernel's name by the kind of its axis
AXIS_ANSI = {"global": "blue", "local": "cyan", "group": "green", "reduce": "red", "upcast": "yellow", "unroll": "magenta"}

def colored_name(name: str, kinds: list[str]) -> str:
  """r_128_32_3 with each number coloured by its axis kind, as tinygrad's DEBUG=2 prints it (ANSI codes)."""
  letter, *dims = name.split("_")
  if len(dims) != len(kinds): return name
  last, suffix = dims[-1].partition("n")[::2]
  dims[-1] = last
  return "_".join([letter] + [colored(d, AXIS_ANSI.get(k, "white")) for d, k in zip(dims, kinds)]) + (f"n{suffix}" if suffix else "")

def debug_schedule(items: list[ScheduleItem], hit: bool, st_ns: int) -> None:
  """DEBUG>=2: one line per schedule, as tinygrad prints it: `scheduled    8 kernels in     3.10 ms |  cache hit | script.py:3`
  (the time to make the schedule, or to find it in the schedule cache; the user's line that realized it)."""
  from tinygrad.engine.schedule import call_site
  file, line, _ = call_site()
  n = sum(it.kind == "kernel" for it in items)
  print(f"scheduled {n:5d} kernels in {(perf_ns() - st_ns) * 1e-6:8.2f} ms | {' cache hit' if hit else 'CACHE MISS'} | {os.path.basename(file)}:{line}")

def _compile_bar(total: int) -> tqdm | None:
  """A progress bar over a schedule's new kernels (codegen, then the compile), on a terminal only, and drawn only once
  it has taken a second: a schedule of a few cached or quick kernels prints nothing."""
  if total < 2 or not sys.stderr.isatty() or getenv("PROGRESS", 1) == 0: return None
  return tqdm(total=total + 1, desc="codegen", unit=" kernels", delay=1.0, rate=10)

def trace_schedule(ctx_id: int, items: list[ScheduleItem]) -> None:
  """Tell the tracer what schedule context ctx_id made, after run_schedule compiled it: each kernel or copy in run order
  with its program's kernel id and the buffers it reads and writes (the explorer's kernel graph)."""
  if (t := tracing.tracer) is None or ctx_id < 0 or not hasattr(t, "schedule"): return
  out = []
  for it in items:
    if it.kind == "kernel":
      ast, bufs = (it.params_ast, it.bufs) if it.params_ast is not None else kernel_params(it)
      p = (_programs_noopt if NOOPT else _programs).get((device_kind(bufs[0].device), ast))
      reads = [b for b in bufs if b not in it.outputs]
      out.append({"kind": "kernel", "ast": it.ast, "kernel": p.kernel_id if p.kernel_id >= 0 else None, "reads": reads, "writes": list(it.outputs)})
    else:
      base = it.ast.src[0]
      while base.op is Ops.RESHAPE: base = base.src[0]
      out.append({"kind": "copy", "ast": it.ast, "kernel": None, "reads": [base], "writes": list(it.outputs)})
  t.schedule(ctx_id, out)

def _uop_line(u: UOp) -> str: return f"{u.op.name:<12} {str(u.dtype.name):<6} {'' if u.arg is None else repr(u.arg)}"

def buffer_for(b: UOp) -> Buffer:
  if (buf := buffers.get(b)) is None: buf = buffers[b] = Buffer(b.device, b.arg[1], b.dtype)
  return buf

def run_schedule(items: list[ScheduleItem]) -> None:
  prepared: list[tuple[ScheduleItem, Program | None, list[UOp]]] = []
  kernels = [(it, *((it.params_ast, it.bufs) if it.params_ast is not None else kernel_params(it))) if it.kind == "kernel" else (it, None, [])
             for it in items]
  bar = _compile_bar(len({(device_kind(bufs[0].device), ast) for _, ast, bufs in kernels if ast is not None and is_new(ast, bufs[0].device)}))
  for it, ast, bufs in kernels:
    if ast is None: prepared.append((it, None, [])); continue
    new = is_new(ast, bufs[0].device)
    prepared.append((it, prog := get_program(ast, bufs[0].device), bufs))
    if new:
      # its compiler may start now, while the rest of the schedule's kernels are generated (ops_cpu: CPUDevice.compile_soon)
      if (soon := getattr(Device[bufs[0].device], "compile_soon", None)) is not None: soon(prog)
      if bar is not None: bar.update(1)
  # one compiler call per device kind for everything new in this schedule
  by_dev: dict[str, list[Program]] = {}
  for it, p, bufs in prepared:
    if p is not None: by_dev.setdefault(bufs[0].device, []).append(p)
  if bar is not None: bar.set_description(f"compiling {bar.n} kernels")
  for dev, progs in by_dev.items():
    st = perf_ns()
    if Device[dev].compile(progs) and (t := tracing.tracer) is not None:
      t.span("HOST", f"compile {len(progs)} kernel{'s' if len(progs) != 1 else ''}", st, perf_ns(), "compile", {"device": dev})
  if bar is not None: bar.update(1); bar.close()
  if not side_by_side([bufs[0].device for _, p, bufs in prepared if p is not None]):
    for it, p, bufs in prepared:
      if p is None: _run_copy(it)
      else: _run_kernel(p, bufs)
    return
  run_queued([(p, bufs[0].device, [buffer_for(b).ensure_allocated() for b in bufs]) if p is not None else
              (None, it.outputs[0].device, [buffer_for(it.outputs[0]).ensure_allocated(), buffer_for(it.ast.src[0])]) for it, p, bufs in prepared])

# TinyJit sets this to a list while it captures: every kernel and copy run is appended as (program or None, device, buffers)
capturing: list[tuple[Program | None, str, list[Buffer]]] | None = None

def _run_kernel(p: Program, bufs: list[UOp]) -> None:
  exec_kernel(p, bufs[0].device, [buffer_for(b).ensure_allocated() for b in bufs])

def exec_kernel(p: Program, dev_name: str, real: list[Buffer]) -> None:
  if capturing is not None: capturing.append((p, dev_name, real))
  dev = Device[dev_name]
  GlobalCounters.kernel_count += 1
  GlobalCounters.global_ops += p.flops
  GlobalCounters.global_mem += p.mem_bytes
  if (launch := getattr(dev, "launch", None)) is not None: launch(p, real, _kernel_ran, (dev_name, p, len(real))); return
  st = perf_ns()
  dev.run(p, real)
  dev.synchronize()
  _kernel_ran(dev_name, p, len(real), st, perf_ns())

def _kernel_ran(dev_name: str, p: Program, nargs: int, st: int, en: int) -> None:
  GlobalCounters.time_sum_s += (en - st) * 1e-9
  if (t := tracing.tracer) is not None:
    t.span(dev_name, p.name, st, en, "kernel", {"kernel": p.kernel_id, "flops": p.flops, "bytes": p.mem_bytes, "global_size": list(p.global_size)})
  if DEBUG >= 2: _debug_line(dev_name, colored_name(p.name, p.axis_kinds) if sys.stdout.isatty() else p.name, nargs, p.flops, p.mem_bytes, en - st)

def _run_copy(it: ScheduleItem) -> None:
  exec_copy(buffer_for(it.ast.src[0]), buffer_for(it.outputs[0]).ensure_allocated())

def exec_copy(src: Buffer, dst: Buffer) -> None:
  """A copy between devices; its span is on the destination's track (timed by the GPU when one is involved)."""
  if capturing is not None: capturing.append((None, dst.device, [dst, src]))
  if not (src.is_host and dst.is_host): Device[src.device if dst.is_host else dst.device].transfer(dst, src, _copy_ran, (src, dst)); return
  st = perf_ns()
  dst.copyin(src.as_memoryview())
  _copy_ran(src, dst, st, perf_ns())

def _copy_ran(src: Buffer, dst: Buffer, st: int, en: int) -> None:
  name = f"copy {dst.nbytes:8d}, {dst.device} <- {src.device}"
  if (t := tracing.tracer) is not None: t.span(dst.device, name.replace("  ", " "), st, en, "copy", {"bytes": dst.nbytes, "from": src.device, "to": dst.device})
  if DEBUG >= 2: _debug_line(dst.device, name, 2, 0, dst.nbytes, en - st)

def _debug_line(dev: str, name: str, nargs: int, flops: int, mem: int, ns: int) -> None:
  s = max(ns, 1) * 1e-9
  name += " " * max(0, 40 - ansilen(name))  # a coloured name pads by its visible length
  print(f"*** {dev:7s} {GlobalCounters.kernel_count:4d} {name} arg {nargs:2d} mem {GlobalCounters.mem_used / 1e9:6.2f} GB "
        f"tm {ns / 1e3:9.2f}us/{GlobalCounters.time_sum_s * 1e3:9.2f}ms ({flops / s / 1e9:9.2f} GFLOPS {mem / s / 1e9:7.2f} GB/s)")

# ----- several host devices side by side: each device's kernels on its own queue (a thread), the copies into it on
# another; an item waits only for the items on other queues that wrote what it reads (or read what it overwrites)

def side_by_side(kernel_devices: list[str]) -> bool:
  """Run on queues when kernels go to two or more CPU devices (CPU, CPU:1, ...); one device runs inline, as before."""
  devs = set(kernel_devices)
  return len(devs) > 1 and all(device_kind(d) == "CPU" for d in devs)

_counter_lock = threading.Lock()
_omp_set_threads: Any = None
def _omp_threads(n: int) -> None:
  """OpenMP's thread count is per calling thread: each device queue's parallel kernels take their share of the cores."""
  global _omp_set_threads
  if _omp_set_threads is None:
    try: _omp_set_threads = ctypes.CDLL("libgomp.so.1").omp_set_num_threads
    except OSError: _omp_set_threads = False
  if _omp_set_threads: _omp_set_threads(n)

class _Ran:
  """When and where an item ran: a copy's flow arrow starts at the span that wrote its source."""
  __slots__ = ("track", "st", "en", "__weakref__")
  def __init__(self, track: str): self.track, self.st, self.en = track, 0, 0
_writer_of: weakref.WeakKeyDictionary[Buffer, _Ran] = weakref.WeakKeyDictionary()  # for flows across schedules
_flow_ids = itertools.count()

class QueuedPlan:
  """Kernels (program, device, buffers: the output first) and copies (None, destination device, [dst, src]) sorted
  onto the devices' queues with the dependencies between queues worked out once; run() runs them all and waits.
  TinyJit keeps one per captured step, so a replay only hands each queue its list (the buffers are read when an item
  runs: a replay's new inputs are seen)."""
  def __init__(self, ops: list[tuple[Program | None, str, list[Buffer]]]):
    threads = max(1, len(os.sched_getaffinity(0)) // len({dev for p, dev, _ in ops if p is not None}))
    last_write: dict[int, tuple[HostQueue, int, _Ran]] = {}
    readers: dict[int, list[tuple[HostQueue, int]]] = {}
    self.items: dict[HostQueue, list[tuple[Any, list[tuple[HostQueue, int]]]]] = {}
    progs = [p for p, _, _ in ops if p is not None]
    self.totals = (len(progs), sum(p.flops for p in progs), sum(p.mem_bytes for p in progs))
    for p, dev, bufs in ops:
      track = dev if p is not None else f"{dev}/copy"
      q = host_queue(track)
      items = self.items.setdefault(q, [])
      out, ins = bufs[0], bufs[1:]
      deps: dict[HostQueue, int] = {}  # the last item on each other queue that wrote what this reads or read what it writes
      for dq, k in [last_write[id(b)][:2] for b in bufs if id(b) in last_write] + readers.get(id(out), []):
        if dq is not q and deps.get(dq, 0) < k: deps[dq] = k
      ran = _Ran(track)
      if p is not None: fn = functools.partial(_queued_kernel, p, Device[dev], dev, bufs, threads, ran)
      else:
        src_ran = last_write[id(ins[0])][2] if id(ins[0]) in last_write else _writer_of.get(ins[0])
        fn = functools.partial(_queued_copy, out, ins[0], ran, src_ran)
      items.append((fn, list(deps.items())))
      k = len(items)
      last_write[id(out)], readers[id(out)] = (q, k, ran), []
      for b in ins: readers.setdefault(id(b), []).append((q, k))
      if tracing.tracer is not None: _writer_of[out] = ran
  def run(self) -> None:
    for q in self.items: q.start_batch()
    for q, items in self.items.items(): q.submit_batch(items)
    n, flops, mem = self.totals
    GlobalCounters.kernel_count += n; GlobalCounters.global_ops += flops; GlobalCounters.global_mem += mem
    for q in self.items: q.synchronize()

def run_queued(ops: list[tuple[Program | None, str, list[Buffer]]]) -> None:
  """Run kernels and copies on the devices' queues side by side, and wait for all of them (see QueuedPlan)."""
  if capturing is not None: capturing.extend(ops)
  QueuedPlan(ops).run()

def _queued_kernel(p: Program, dev: Any, dev_name: str, bufs: list[Buffer], threads: int, ran: _Ran) -> None:
  if p.parallel: _omp_threads(threads)
  ran.st = perf_ns()
  dev.run(p, bufs)
  ran.en = perf_ns()
  with _counter_lock: _kernel_ran(dev_name, p, len(bufs), ran.st, ran.en)

def _queued_copy(dst: Buffer, src: Buffer, ran: _Ran, src_ran: _Ran | None) -> None:
  ran.st = perf_ns()
  if dst.nbytes: ctypes.memmove(dst.ptr, src.ptr, dst.nbytes)  # a ctypes call: the GIL is released while it copies
  ran.en = perf_ns()
  if (t := tracing.tracer) is not None:
    t.span(ran.track, f"copy {dst.nbytes}, {dst.device} <- {src.device}", ran.st, ran.en, "copy", {"bytes": dst.nbytes, "from": src.device, "to": dst.device})
    if src_ran is not None and src_ran.en and (flow := getattr(t, "flow", None)) is not None:
      fid = f"copy{next(_flow_ids)}"  # from inside the span that wrote the source to the start of the copy
      flow(fid, "s", src_ran.track, "data", "copy", max(src_ran.st, src_ran.en - 1))
      flow(fid, "f", ran.track, "data", "copy", ran.st)
  if DEBUG >= 2:
    with _counter_lock: _debug_line(ran.track, f"copy {dst.nbytes:8d}, {dst.device} <- {src.device}", 2, 0, dst.nbytes, ran.en - ran.st)

# tinygrad 0.14's names for running a schedule given as a LINEAR UOp (Tensor.linear_with_vars): engine/linear.py
from tinygrad.engine.linear import run_linear, compile_linear  # noqa: E402
