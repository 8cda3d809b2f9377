"""What tinygrad scripts print with, as `tinygrad.helpers` offers it: ANSI colours, a progress bar (tqdm/trange) and a
timer. No dependency: tinygrad's own examples import these from tinygrad.helpers rather than from the tqdm package."""
from __future__ import annotations
import math, re, shutil, sys, time
from typing import Any, Callable, Generic, Iterable, Iterator, TypeVar
T = TypeVar("T")

_COLORS = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")

def colored(st: str, color: str | None, background: bool = False) -> str:
  """st in an ANSI colour; an upper-case name ("RED") is the bright variant. None leaves st as it is."""
  if color is None: return st
  if color.lower() not in _COLORS: raise ValueError(f"colored: unknown colour {color!r}; one of {', '.join(_COLORS)} (upper case: bright)")
  code = 30 + _COLORS.index(color.lower()) + 60 * (color.isupper()) + 10 * background
  return f"\x1b[{code}m{st}\x1b[0m"

_ANSI = re.compile(r"\x1b\[(K|.*?m)")
def ansistrip(s: str) -> str: return _ANSI.sub("", s)
def ansilen(s: str) -> int: return len(ansistrip(s))

def _si(x: float) -> str:
  """x with an SI prefix: 1234 -> '1.23k'."""
  if x < 1000: return f"{x:.2f}"[:4].rstrip(".")
  e = min(int(math.log10(x) // 3), 4)
  return f"{x / 1000 ** e:.2f}"[:4].rstrip(".") + " kMGT"[e]

def _hms(s: float) -> str:
  m, s = divmod(int(s), 60)
  h, m = divmod(m, 60)
  return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"

class tqdm(Generic[T]):
  """A progress bar on stderr, redrawn at most `rate` times a second: tqdm(iterable), .update(n), .set_description(s),
  .close(). The subset of the tqdm package that tinygrad's helpers offer."""
  def __init__(self, iterable: Iterable[T] | None = None, desc: str = "", disable: bool = False, unit: str = "it",
               unit_scale: bool = False, total: int | None = None, rate: int = 100, delay: float = 0.0):
    """delay: draw nothing until this many seconds have passed (as the tqdm package's delay), so a quick job prints nothing."""
    self.iterable, self.disable, self.unit, self.unit_scale, self.rate, self.delay = iterable, disable, unit, unit_scale, rate, delay
    if total is None and iterable is not None:
      try: total = len(iterable)  # type: ignore[arg-type]
      except TypeError: total = None
    self.total, self.desc, self.n, self.st, self._last = total, desc, 0, time.perf_counter(), -1.0
    self._draw()
  def __iter__(self) -> Iterator[T]:
    if self.iterable is None: raise TypeError("tqdm: nothing to iterate (give an iterable, or call update())")
    try:
      for item in self.iterable:
        yield item
        self.update(1)
    finally: self.close()
  def __enter__(self) -> tqdm[T]: return self
  def __exit__(self, *exc) -> None: self.close()
  def set_description(self, desc: str) -> None: self.desc = desc; self._draw(force=True)
  def update(self, n: int = 1) -> None:
    self.n += n
    self._draw(force=self.total is not None and self.n >= self.total)
  def close(self) -> None:
    if self.disable or self._last == math.inf: return
    if self._last >= 0 or time.perf_counter() - self.st >= self.delay:  # a delayed bar that never showed ends silently
      self._draw(force=True)
      print(file=sys.stderr, flush=True)
    self._last = math.inf  # closed: draws nothing more
  def _draw(self, force: bool = False) -> None:
    now = time.perf_counter()
    if self.disable or self._last == math.inf or (not force and now - self._last < 1 / self.rate) or now - self.st < self.delay: return
    self._last = now
    el = now - self.st
    it_s = self.n / el if el > 0 else 0.0
    fmt = (lambda x: _si(x)) if self.unit_scale else (lambda x: str(int(x)))
    rate = f"{_si(it_s) if self.unit_scale else f'{it_s:.2f}'}{self.unit}/s" if self.n else f"?{self.unit}/s"
    prefix = f"{self.desc}: " if self.desc else ""
    if self.total:
      left = _hms((self.total - self.n) / it_s) if self.n and it_s else "?"
      suffix = f"| {fmt(self.n)}/{fmt(self.total)} [{_hms(el)}<{left}, {rate}]"
      pct = f"{100 * self.n // self.total:3d}%"
      width = max(1, shutil.get_terminal_size((80, 20)).columns - ansilen(prefix) - len(pct) - len(suffix) - 3)
      filled = width * min(self.n, self.total) / self.total
      bar = "\u2588" * int(filled) + (" \u258f\u258e\u258d\u258c\u258b\u258a\u2589"[int(8 * (filled % 1))] if filled < width else "")
      line = f"{prefix}{pct}|{bar:<{width}}{suffix}"
    else: line = f"{prefix}{fmt(self.n)}{self.unit} [{_hms(el)}, {rate}]"
    print(f"\r{line}\x1b[K", end="", file=sys.stderr, flush=True)

def trange(n: int, **kwargs: Any) -> tqdm[int]: return tqdm(range(n), total=n, **kwargs)

class Timing:
  """with Timing("step "): ... prints the block's wall time in ms (and on_exit(ns) after it, if given)."""
  def __init__(self, prefix: str = "", on_exit: Callable[[int], str] | None = None, enabled: bool = True):
    self.prefix, self.on_exit, self.enabled = prefix, on_exit, enabled
  def __enter__(self) -> Timing:
    self.st = time.perf_counter_ns()
    return self
  def __exit__(self, *exc) -> None:
    self.et = time.perf_counter_ns() - self.st
    if self.enabled: print(f"{self.prefix}{self.et * 1e-6:6.2f} ms" + (self.on_exit(self.et) if self.on_exit else ""))
