"""tinygrad's PTX renderer is a name its tests check a device's renderer against (`isinstance(dev.renderer,
PTXRenderer)` skips what PTX does differently). This engine has no PTX backend: CUDA kernels render as CUDA C
(renderer/cuda.py) and compile with nvrtc, so no device's renderer is one, and making one says so."""

class PTXRenderer:
  def __init__(self, *args, **kwargs):
    raise NotImplementedError("this engine has no PTX renderer: CUDA kernels are rendered as CUDA C (tinygrad/renderer/cuda.py)")
