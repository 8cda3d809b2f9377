"""Capture, trace files and analysis for tinyviz (see docs/trace-format.md)."""
# written into every trace's `run` event; kept equal to pyproject.toml's version by tests/test_profiler_recorder.py
# (importlib.metadata would cost ~13 ms of import at every VIZ/PROFILE start)
__version__ = "0.1.0"
