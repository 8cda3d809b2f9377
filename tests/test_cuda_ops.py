"""The numpy-checked op and dtype suites (every test of test_ops.py and test_dtype.py that takes a device) on CUDA: on an
NVIDIA GPU ("gpu"), and everywhere on the emulated driver of test_cuda_fake.py ("emulated": the CUDA runtime's memory,
copies, launches and timing for every op; the kernels themselves run as CPU C there)."""
import inspect
import pytest
import test_cuda_fake, test_dtype, test_ops
from tinygrad.runtime.cuda_driver import probe

NGPU, WHY = probe()
fake = test_cuda_fake.fake  # the emulated driver (a fixture)

@pytest.fixture(params=["emulated", "gpu"])
def dev(request):
  if request.param == "gpu" and NGPU == 0: pytest.skip(f"needs an NVIDIA GPU: {WHY}")
  if request.param == "emulated": request.getfixturevalue("fake")
  return "CUDA"

for _mod in (test_ops, test_dtype):
  for _name, _fn in list(vars(_mod).items()):
    if _name.startswith("test_") and callable(_fn) and "dev" in inspect.signature(_fn).parameters:
      globals()[f"test_{_mod.__name__[5:]}_{_name[5:]}"] = _fn
