"""Finding a model's tensors, and saving them in the safetensors format (readable by other tools)."""
from __future__ import annotations
import json, struct, pathlib
from typing import Any
from tinygrad.tensor import Tensor
from tinygrad.dtype import dtypes, DType
from tinygrad.nn.torch_load import torch_load  # noqa: F401  (tinygrad's nn.state has it)

def get_state_dict(obj: Any, prefix: str = "", tensor_type=Tensor) -> dict[str, Tensor]:
  """Every Tensor reachable from obj's attributes, lists and dicts, named by path (e.g. 'layers.0.weight')."""
  if isinstance(obj, tensor_type): return {prefix.strip("."): obj}
  if hasattr(obj, "_asdict"): return get_state_dict(obj._asdict(), prefix, tensor_type)
  if isinstance(obj, dict): items = obj.items()
  elif isinstance(obj, (list, tuple)): items = ((str(i), v) for i, v in enumerate(obj))
  elif hasattr(obj, "__dict__"): items = obj.__dict__.items()
  else: return {}
  out: dict[str, Tensor] = {}
  for k, v in items: out.update(get_state_dict(v, f"{prefix}{k}.", tensor_type))
  return out

def get_parameters(obj: Any) -> list[Tensor]: return list(dict.fromkeys(get_state_dict(obj).values()))

def load_state_dict(model: Any, state_dict: dict[str, Tensor], strict: bool = True, verbose: bool = False) -> None:
  mine = get_state_dict(model)
  if strict and (missing := sorted(set(mine) - set(state_dict))): raise KeyError(f"state dict is missing {missing}")
  for k, t in mine.items():
    if k not in state_dict: continue
    v = state_dict[k]
    if v.shape != t.shape:
      # a scalar and a one-element vector are the same value (torch's num_batches_tracked is 0-d, tinygrad's (1,))
      if {v.shape, t.shape} == {(), (1,)}: v = v.reshape(t.shape)
      else: raise ValueError(f"Shape mismatch in layer `{k}`: Expected shape {t.shape}, but found {v.shape} in state dict.")
    # as tinygrad: a sharded model's parameter takes the state dict's own sharding if it has one, else it is sharded
    # like the parameter; a single-device parameter takes the value on its device
    if isinstance(t.device, tuple): v = v if isinstance(v.device, tuple) else v.shard(t.device, t.uop.axis)
    else: v = v.to(t.device)
    t.replace(v.cast(t.dtype).contiguous().realize())
    if verbose: print(f"loaded {k} {t.shape}")

_ST = {dtypes.float64: "F64", dtypes.float32: "F32", dtypes.float16: "F16", dtypes.bfloat16: "BF16", dtypes.int64: "I64",
       dtypes.int32: "I32", dtypes.int16: "I16",
       dtypes.int8: "I8", dtypes.uint64: "U64", dtypes.uint32: "U32", dtypes.uint16: "U16", dtypes.uint8: "U8", dtypes.bool: "BOOL"}
_ST_INV: dict[str, DType] = {v: k for k, v in _ST.items()}

def safe_save(tensors: dict[str, Tensor], fn: str | pathlib.Path, metadata: dict[str, str] | None = None) -> None:
  header: dict[str, Any] = {"__metadata__": metadata} if metadata else {}
  blobs, off = [], 0
  for k, t in tensors.items():
    data = bytes(t.contiguous().realize()._buffer()[0].copyout())
    header[k] = {"dtype": _ST[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
    blobs.append(data); off += len(data)
  h = json.dumps(header, separators=(",", ":")).encode()
  h += b" " * (-len(h) % 8)
  with open(fn, "wb") as f: f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

def safe_load(fn: str | pathlib.Path, device: str | None = None) -> dict[str, Tensor]:
  data = pathlib.Path(fn).read_bytes()
  if len(data) < 8: raise ValueError(f"{fn}: too short to be a safetensors file")
  (n,) = struct.unpack("<Q", data[:8])
  if n > len(data) - 8: raise ValueError(f"{fn}: header length {n} runs past the end of the file ({len(data)} bytes)")
  try: header = json.loads(data[8:8 + n])
  except ValueError as e: raise ValueError(f"{fn}: bad safetensors header: {e}") from None
  out: dict[str, Tensor] = {}
  for k, v in header.items():
    if k == "__metadata__": continue
    if v.get("dtype") not in _ST_INV: raise ValueError(f"{fn}: tensor {k} has unsupported dtype {v.get('dtype')}")
    b, e = v["data_offsets"]
    dt = _ST_INV[v["dtype"]]
    t = Tensor(data[8 + n + b:8 + n + e], dtype=dt, device=device)
    out[k] = t.reshape(tuple(v["shape"])) if tuple(v["shape"]) != t.shape else t
  return out

# tinygrad's archive readers: a file (path) or a uint8 Tensor of its bytes in, {name: uint8 Tensor of the bytes} out
def _archive(src: Tensor | str | pathlib.Path) -> tuple[Tensor, bytes]:
  if isinstance(src, Tensor):
    if src.dtype != dtypes.uint8 or src.ndim != 1: raise TypeError(f"expected a 1-d uint8 Tensor of the file's bytes, got {src.dtype} {src.shape}")
    return src, src.numpy().tobytes()
  data = pathlib.Path(src).read_bytes()
  return Tensor(data), data

def safe_load_metadata(src: Tensor | str | pathlib.Path) -> tuple[Tensor, int, dict[str, Any]]:
  """A safetensors file's bytes (as a uint8 Tensor), where its data starts, and its JSON header."""
  t, data = _archive(src)
  if len(data) < 8: raise ValueError("too short to be a safetensors file")
  start = struct.unpack("<Q", data[:8])[0] + 8
  if start > len(data): raise ValueError(f"header length {start - 8} runs past the end of the file ({len(data)} bytes)")
  return t, start, json.loads(data[8:start])

def tar_extract(src: Tensor | str | pathlib.Path) -> dict[str, Tensor]:
  """Each regular file of a tar archive as a view (uint8 Tensor) of the archive's bytes."""
  import io, tarfile
  t, data = _archive(src)
  with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
    return {m.name: t[m.offset_data:m.offset_data + m.size] for m in tar if m.type == tarfile.REGTYPE}

def zip_extract(src: Tensor | str | pathlib.Path) -> dict[str, Tensor]:
  """Each file of a zip archive as a uint8 Tensor: a view of the archive's bytes when stored, inflated when deflated."""
  import io, zipfile, zlib
  t, data = _archive(src)
  out: dict[str, Tensor] = {}
  with zipfile.ZipFile(io.BytesIO(data), "r") as z:
    for zi in z.filelist:
      # the data follows the local header (30 bytes), the file name and an extra field whose lengths are in that header
      name_len, extra_len = struct.unpack("<HH", data[zi.header_offset + 26:zi.header_offset + 30])
      start = zi.header_offset + 30 + name_len + extra_len
      if zi.compress_type == zipfile.ZIP_STORED: out[zi.filename] = t[start:start + zi.compress_size]
      elif zi.compress_type == zipfile.ZIP_DEFLATED: out[zi.filename] = Tensor(zlib.decompress(data[start:start + zi.compress_size], -15))
      else: raise NotImplementedError(f"{zi.filename}: zip compression {zi.compress_type} is not supported (stored and deflated are)")
  return out
