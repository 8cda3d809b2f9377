"""Writes tests/tinygrad_014_tensor_surface.json: every public name of tinygrad 0.14's Tensor (methods, properties,
class attributes, and the operator dunders its own classes define) with its parameters, as inspect.signature reports
them. Run it with the real tinygrad, not ours:
  /path/to/venv-with-tinygrad-0.14/bin/python tests/tools/tinygrad_surface.py
tests/test_tinygrad_surface.py reads the file and checks that our Tensor has each name and accepts each keyword."""
from __future__ import annotations
import inspect, json, pathlib, sys

def describe(cls: type, name: str) -> dict:
  raw = inspect.getattr_static(cls, name)
  kind = "property" if isinstance(raw, property) else "staticmethod" if isinstance(raw, staticmethod) else \
    "classmethod" if isinstance(raw, classmethod) else "method" if callable(raw) else "attribute"
  out: dict = {"kind": kind}
  if kind in ("method", "staticmethod", "classmethod"):
    try: sig = inspect.signature(getattr(cls, name))
    except (TypeError, ValueError): return out
    out["params"] = [[p.name, p.kind.name] for p in sig.parameters.values()]
  return out

def surface(cls: type) -> dict[str, dict]:
  # dunders only where a class of the library itself defines them (operators, __getitem__, __init__), not object's
  own_dunders = {n for k in cls.__mro__ if k.__module__.split(".")[0] == cls.__module__.split(".")[0] for n in vars(k)
                 if n.startswith("__") and n.endswith("__")}
  skip = {"__dict__", "__doc__", "__module__", "__weakref__", "__slots__", "__annotations__", "__qualname__", "__firstlineno__",
          "__static_attributes__", "__orig_bases__", "__parameters__", "__abstractmethods__"}
  names = [n for n in dir(cls) if (not n.startswith("_") or n in own_dunders) and n not in skip]
  return {n: describe(cls, n) for n in sorted(names)}

if __name__ == "__main__":
  import tinygrad
  from tinygrad import Tensor
  version = getattr(tinygrad, "__version__", None)
  if version is None:
    from importlib.metadata import version as _v
    version = _v("tinygrad")
  data = {"tinygrad_version": version, "python": sys.version.split()[0], "tensor": surface(Tensor)}
  dest = pathlib.Path(__file__).resolve().parent.parent / "tinygrad_014_tensor_surface.json"
  dest.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
  print(f"{len(data['tensor'])} names of tinygrad {version}'s Tensor -> {dest}")
