#!/usr/bin/env bash
# The device check for a lent GPU machine, in one short run (a few minutes; no network needed): what the machine has,
# the CUDA tests (tests/test_cuda.py and the op suite on the GPU), then bench/gpu_bench.py against torch on the same GPU.
#   bash bench/gpu_check.sh        (from anywhere; it works in the repo root)
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # the repo itself, whether or not `pip install -e .` was done
export PYTHONUNBUFFERED=1
step() { echo; echo "== $*"; }

step machine
python3 -c "import tinygrad" 2>/dev/null || pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
nvidia-smi --query-gpu=index,name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 || echo "nvidia-smi failed"
python3 - <<'EOF'
import importlib, shutil, sys
print("python", sys.version.split()[0], "| nvcc:", shutil.which("nvcc") or "none")
for m in ("numpy", "pytest", "xdist", "torch"):
  try: mod = importlib.import_module(m); print(f"{m} {getattr(mod, '__version__', '')}", end="; ")
  except ImportError: print(f"{m} MISSING", end="; ")
print()
from tinygrad.runtime import cuda_driver as cu, cuda_compiler as cc
print("GPUs:", cu.probe(), "| driver:", cu.get_int("cuDriverGetVersion") if cu.probe()[0] else "-")
try: print("CUDA compiler:", cc.compiler(), "| nvrtc:", cc._nvrtc())
except Exception as e: print("CUDA compiler: NONE:", e)
from tinygrad import Device
print("Device.DEFAULT:", Device.DEFAULT)
EOF
python3 -c "import numpy, pytest" 2>/dev/null || { echo "numpy or pytest missing: trying pip (needs a network or a local wheel cache)"; pip install -q numpy pytest 2>&1 | tail -2; }
XDIST=$(python3 -c "import xdist" 2>/dev/null && echo "-n 8" || echo "")

step "tests/test_cuda.py (the op-suite PTX check is skipped: the GPU runs the suite itself below)"
timeout 150 python3 -m pytest tests/test_cuda.py -q -rs -p no:cacheprovider -k "not op_suite" || echo "test_cuda.py: FAILED or timed out ($?)"

step "tests/test_cuda_ops.py on the GPU (every numpy-checked op and dtype test) $XDIST"
timeout 200 python3 -m pytest tests/test_cuda_ops.py -q -p no:cacheprovider -k gpu --maxfail=30 -p no:benchmark $XDIST || echo "test_cuda_ops.py: FAILED or timed out ($?)"

step "bench/gpu_bench.py"
timeout 120 python3 bench/gpu_bench.py || echo "gpu_bench.py: FAILED or timed out ($?)"
