"""tinygrad's NIR (Mesa) renderer is a name its tests check a device's renderer against (`isinstance(dev.renderer,
NIRRenderer)`). This engine has no NIR backend, so no device's renderer is one, and making one says so."""

class NIRRenderer:
  def __init__(self, *args, **kwargs):
    raise NotImplementedError("this engine has no NIR renderer: its devices are CPU (C), CUDA (CUDA C) and PYTHON")
