"""tinygrad-style engine: lazy Tensor -> hash-consed UOp graph -> pattern rewrites -> kernels -> C -> run."""
import os as _os
from tinygrad.dtype import dtypes, DType
from tinygrad.device import Device
from tinygrad.helpers import GlobalCounters, getenv, Context, profile_marker
from tinygrad.tensor import Tensor
from tinygrad.engine.jit import TinyJit
from tinygrad.function import function
from tinygrad import nn
from tinygrad.uop.ops import UOp, Ops
# a symbolic int (a DEFINE_VAR UOp) for index math: vmin/vmax and simplification work; tensors of symbolic shape
# and .bind() (tinygrad's BIND op) do not exist here
Variable = UOp.variable

# the one hook: with VIZ or PROFILE set, the profiler's recorder is installed (it costs nothing otherwise);
# VIZ=1 also streams it to the viz server (started or joined in the background); VIZ=-1 and PROFILE=1 only write the file
if _os.environ.get("VIZ", "0") not in ("", "0") or _os.environ.get("PROFILE", "0") not in ("", "0"):
  try:
    from profiler import recorder as _recorder
    _rec = _recorder.install()
    if _os.environ.get("VIZ", "0").strip().lstrip("+")[:1] not in ("", "0", "-"):  # VIZ > 0: live (not VIZ=-1)
      from profiler import live as _live
      if _live.wanted(): _live.start(_rec)
  except ImportError as e:
    import warnings
    warnings.warn(f"VIZ/PROFILE is set but the profiler could not be loaded: {e}")
