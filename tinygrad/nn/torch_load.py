"""Reading PyTorch checkpoints (`torch.save` files: a zip holding a pickle and one file per storage) without torch:
the pickle is read by an Unpickler that knows the few torch names a checkpoint uses and turns each tensor into ours.
Nothing else is imported while unpickling: a checkpoint naming any other callable is refused, not run."""
from __future__ import annotations
import collections, pickle, zipfile
from typing import Any
from tinygrad.dtype import DType, dtypes
from tinygrad.tensor import Tensor

# storage class name -> the dtype numpy reads its bytes as (bfloat16, which numpy lacks, is widened to float32 exactly,
# then made a bfloat16 tensor again)
STORAGES: dict[str, DType] = {
  "FloatStorage": dtypes.float32, "DoubleStorage": dtypes.float64, "HalfStorage": dtypes.float16, "BFloat16Storage": dtypes.float32,
  "LongStorage": dtypes.int64, "IntStorage": dtypes.int32, "ShortStorage": dtypes.int16, "CharStorage": dtypes.int8,
  "ByteStorage": dtypes.uint8, "BoolStorage": dtypes.bool}
# torch.float32 etc., as a typed storage's dtype argument names them
TORCH_DTYPES = {"float32": "FloatStorage", "float": "FloatStorage", "float64": "DoubleStorage", "double": "DoubleStorage",
                "float16": "HalfStorage", "half": "HalfStorage", "bfloat16": "BFloat16Storage", "int64": "LongStorage",
                "long": "LongStorage", "int32": "IntStorage", "int": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
                "uint8": "ByteStorage", "bool": "BoolStorage"}

class _Storage:
  def __init__(self, kind: str, data: bytes): self.kind, self.data = kind, data

def _array(storage: _Storage, offset: int, size: tuple[int, ...], stride: tuple[int, ...]):
  """The tensor's elements as a numpy array (a strided view of its storage, copied)."""
  import numpy as np
  if storage.kind == "BFloat16Storage":  # no numpy bfloat16: the top half of a float32
    raw = np.frombuffer(storage.data, dtype=np.uint16).astype(np.uint32) << 16
    flat = raw.view(np.float32)
  else: flat = np.frombuffer(storage.data, dtype=STORAGES[storage.kind].fmt)
  if not size: return flat[offset:offset + 1].reshape(()).copy()
  need = offset + sum((s - 1) * st for s, st in zip(size, stride)) + 1
  if any(s == 0 for s in size): return np.zeros(size, flat.dtype)
  if need > flat.size: raise ValueError(f"torch_load: a tensor of size {size} and stride {stride} at offset {offset} reads past its storage of {flat.size}")
  return np.lib.stride_tricks.as_strided(flat[offset:], size, tuple(st * flat.itemsize for st in stride)).copy()

def _rebuild_tensor(storage: _Storage, offset: int, size, stride, *_) -> Tensor:
  a = _array(storage, offset, tuple(size), tuple(stride))
  return Tensor(a, dtype=dtypes.bfloat16) if storage.kind == "BFloat16Storage" else Tensor(a)  # bfloat16 stays bfloat16 (exact), as tinygrad
def _rebuild_parameter(data: Tensor, requires_grad: bool = False, *_) -> Tensor: return data

class _Unpickler(pickle.Unpickler):
  def __init__(self, f, archive: zipfile.ZipFile, prefix: str):
    super().__init__(f)
    self.archive, self.prefix = archive, prefix
  def find_class(self, module: str, name: str) -> Any:
    if module == "collections" and name == "OrderedDict": return collections.OrderedDict
    if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"): return _rebuild_tensor
    if module == "torch._utils" and name == "_rebuild_parameter": return _rebuild_parameter
    if module == "torch" and name in STORAGES: return name
    if module == "torch" and name in TORCH_DTYPES: return TORCH_DTYPES[name]
    raise pickle.UnpicklingError(f"torch_load: the checkpoint names {module}.{name}, which is not a tensor, a parameter or a "
                                 "dict: refusing to import it (only state dicts of tensors are read)")
  def persistent_load(self, pid: Any) -> _Storage:
    # ('storage', storage class or dtype, key, location, numel)
    if not (isinstance(pid, tuple) and pid and pid[0] == "storage"): raise pickle.UnpicklingError(f"torch_load: unknown persistent id {pid!r}")
    kind, key = pid[1], pid[2]
    return _Storage(kind, self.archive.read(f"{self.prefix}/data/{key}"))

def torch_load(fn: str) -> dict[str, Tensor]:
  """The tensors of a PyTorch checkpoint (a state dict, or a dict holding one, as torch.save writes them in its zip
  format), as our Tensors on the default device. Modules and other Python objects in the file are refused."""
  try: archive = zipfile.ZipFile(fn)
  except zipfile.BadZipFile: raise ValueError(f"torch_load: {fn} is not a zip-format checkpoint (torch.save since PyTorch 1.6 writes one; "
                                              "re-save older files with _use_new_zipfile_serialization=True)") from None
  with archive:
    pkl = next((n for n in archive.namelist() if n.endswith("/data.pkl")), None)
    if pkl is None: raise ValueError(f"torch_load: {fn} is a zip but holds no data.pkl: not a torch.save checkpoint")
    with archive.open(pkl) as f: return _Unpickler(f, archive, pkl[:-len("/data.pkl")]).load()
