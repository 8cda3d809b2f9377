"""tinygrad's x86 renderer (machine code straight from uops) is a name its tests check a device's renderer against
(`isinstance(Device[...].renderer, X86Renderer)` skips what that backend does differently). This engine's CPU device
renders C and compiles it with the system C compiler (renderer/cstyle.py), so no device's renderer is one, and making
one says so."""

class X86Renderer:
  def __init__(self, *args, **kwargs):
    raise NotImplementedError("this engine has no x86 renderer: CPU kernels are rendered as C (tinygrad/renderer/cstyle.py) "
                              "and compiled by the system C compiler")
