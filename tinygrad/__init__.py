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
# (profiler.settings is the one reader of what VIZ and PROFILE mean; unset, not even it is imported)
if _os.environ.get("VIZ") or _os.environ.get("PROFILE"):
  try:
    from profiler import settings as _settings
    from tinygrad import helpers as _helpers
    _helpers.VIZ.value, _helpers.PROFILE.value = _settings.level("VIZ"), _settings.level("PROFILE")
    if (_mode := _settings.mode()) is not None:
      from profiler import recorder as _recorder
      from tinygrad import tracing as _tracing
      _rec = _recorder.install(_mode, attach=_tracing.attach)
      if _settings.live():
        from profiler import live as _live
        _live.start(_rec)
  except ImportError as e:
    import warnings
    warnings.warn(f"VIZ/PROFILE is set but the profiler could not be loaded: {e}")
