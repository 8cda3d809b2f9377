# nn.state: finding a model's tensors by name, loading them back, and safetensors files (our reader and writer, the
# format's rules checked by hand, and the `safetensors` package when it is installed).
# Uses tinygrad's public API only.
import json, struct
import numpy as np
import pytest
from tinygrad import Tensor, nn, dtypes
from tinygrad.nn.state import get_parameters, get_state_dict, load_state_dict, safe_save, safe_load

class Block:
  def __init__(self):
    self.conv = nn.Conv2d(1, 2, 3)
    self.bn = nn.BatchNorm(2)

class Net:
  def __init__(self):
    self.blocks = [Block(), Block()]
    self.head = {"fc": nn.Linear(8, 3), "ln": nn.LayerNorm(3)}
    self.emb = nn.Embedding(5, 8)
    self.act = Tensor.relu      # functions and plain values hold no tensors
    self.name, self.n = "net", 3

EXPECTED = sorted(
  [f"blocks.{i}.conv.{w}" for i in range(2) for w in ("weight", "bias")] +
  [f"blocks.{i}.bn.{w}" for i in range(2) for w in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")] +
  ["head.fc.weight", "head.fc.bias", "head.ln.weight", "head.ln.bias", "emb.weight"])

def test_get_state_dict_names_nested_lists_dicts_objects():
  net = Net()
  sd = get_state_dict(net)
  assert sorted(sd) == EXPECTED
  assert sd["blocks.1.conv.weight"] is net.blocks[1].conv.weight
  assert sd["head.fc.bias"] is net.head["fc"].bias
  assert sd["blocks.0.bn.running_var"].shape == (2,)
  assert all(isinstance(t, Tensor) for t in sd.values())

def test_get_state_dict_of_plain_containers():
  a, b = Tensor([1.0]), Tensor([2.0])
  assert get_state_dict([a, [b]]) == {"0": a, "1.0": b}
  assert get_state_dict({"x": a, "y": {"z": b}}) == {"x": a, "y.z": b}
  assert get_state_dict(a) == {"": a}  # a bare tensor, named "" as in tinygrad

def test_get_parameters_every_tensor_once():
  net = Net()
  params = get_parameters(net)
  assert len(params) == len(EXPECTED)
  assert len({id(p) for p in params}) == len(params)
  shared = nn.Linear(2, 2)
  class Tied:
    def __init__(self): self.a, self.b = shared, shared
  assert len(get_parameters(Tied())) == 2  # a layer used twice is counted once

def test_load_state_dict_copies_values():
  Tensor.manual_seed(0); src = Net()
  Tensor.manual_seed(1); dst = Net()
  assert not np.allclose(get_state_dict(src)["head.fc.weight"].numpy(), get_state_dict(dst)["head.fc.weight"].numpy())
  load_state_dict(dst, get_state_dict(src))
  for k, v in get_state_dict(src).items():
    np.testing.assert_array_equal(get_state_dict(dst)[k].numpy(), v.numpy(), err_msg=k)
  # the model computes with the loaded weights
  x = Tensor(np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32))
  np.testing.assert_allclose(dst.head["fc"](x).numpy(), src.head["fc"](x).numpy(), rtol=1e-6)

def test_load_state_dict_from_numpy_values_casts_dtype():
  lin = nn.Linear(2, 2)
  sd = {"weight": Tensor(np.eye(2, dtype=np.float64)), "bias": Tensor(np.array([1.0, 2.0]))}
  load_state_dict(lin, sd)
  assert lin.weight.dtype == dtypes.float32
  np.testing.assert_array_equal(lin(Tensor([[3.0, 4.0]])).numpy(), [[4.0, 6.0]])

def test_load_state_dict_missing_key_strict_raises():
  net = Net()
  sd = get_state_dict(Net())
  del sd["head.ln.bias"]
  with pytest.raises(KeyError, match="head.ln.bias"):
    load_state_dict(net, sd)
  before = net.head["ln"].bias.numpy().copy()
  load_state_dict(net, sd, strict=False)  # non-strict: what is there is loaded, the rest stays
  np.testing.assert_array_equal(net.head["ln"].bias.numpy(), before)
  np.testing.assert_array_equal(net.head["fc"].weight.numpy(), sd["head.fc.weight"].numpy())

def test_load_state_dict_shape_mismatch_raises():
  lin = nn.Linear(3, 2)
  with pytest.raises(ValueError, match="weight"):
    load_state_dict(lin, {"weight": Tensor.zeros(3, 2), "bias": Tensor.zeros(2)})

# ================================================================ safetensors

DTYPES = [(dtypes.float32, np.float32, "F32"), (dtypes.float16, np.float16, "F16"), (dtypes.float64, np.float64, "F64"),
          (dtypes.int8, np.int8, "I8"), (dtypes.int32, np.int32, "I32"), (dtypes.int64, np.int64, "I64"),
          (dtypes.uint8, np.uint8, "U8"), (dtypes.bool, np.bool_, "BOOL")]

def sample(npdt, shape, seed):
  r = np.random.default_rng(seed)
  if npdt == np.bool_: return r.random(shape) > 0.5
  if np.issubdtype(npdt, np.integer):
    info = np.iinfo(npdt)
    return r.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(npdt)
  return (r.standard_normal(shape) * 10).astype(npdt)

def T(v):
  """a Tensor holding numpy array v (a 0-d array goes through shape (1,): Tensor(0-d array) has the wrong shape, see test_autograd)"""
  return Tensor(v.reshape(1)).reshape(()) if v.ndim == 0 else Tensor(v)

@pytest.fixture
def arrays():
  shapes = [(3, 4), (5,), (2, 1, 3), (), (1,), (2, 3), (4, 2), (7,)]
  return {f"t.{name}": sample(npdt, shape, k) for k, ((_, npdt, name), shape) in enumerate(zip(DTYPES, shapes))}

def test_safe_save_load_round_trip(tmp_path, arrays):
  fn = tmp_path / "m.safetensors"
  safe_save({k: T(v) for k, v in arrays.items()}, fn)
  back = safe_load(fn)
  assert sorted(back) == sorted(arrays)
  for k, v in arrays.items():
    t = back[k]
    assert t.shape == v.shape, k
    assert t.dtype == {np.dtype(npdt): dt for dt, npdt, _ in DTYPES}[v.dtype], (k, t.dtype)
    out = t.numpy()
    assert out.dtype == v.dtype, k
    np.testing.assert_array_equal(out, v, err_msg=k)

def test_safe_save_of_computed_and_noncontiguous_tensors(tmp_path):
  a = np.arange(12, dtype=np.float32).reshape(3, 4)
  fn = tmp_path / "views.safetensors"
  safe_save({"T": Tensor(a).T, "slice": Tensor(a)[::2, 1:], "sum": Tensor(a).sum(0) * 2}, fn)
  back = safe_load(fn)
  np.testing.assert_array_equal(back["T"].numpy(), a.T)
  np.testing.assert_array_equal(back["slice"].numpy(), a[::2, 1:])
  np.testing.assert_array_equal(back["sum"].numpy(), a.sum(0) * 2)

def parse_safetensors(raw: bytes):
  """The format, by its rules: u64 little-endian header size N, N bytes of JSON (a dict; '__metadata__' maps str to str;
  every other key has dtype, shape, data_offsets [begin, end) relative to the byte buffer after the header), then the buffer."""
  (n,) = struct.unpack("<Q", raw[:8])
  header_bytes = raw[8:8 + n]
  assert header_bytes[:1] == b"{", "the header must start with '{'"
  header = json.loads(header_bytes.decode("utf-8"))
  assert isinstance(header, dict)
  data = raw[8 + n:]
  return header, data

ITEMSIZE = {"F32": 4, "F16": 2, "F64": 8, "I8": 1, "I32": 4, "I64": 8, "U8": 1, "BOOL": 1, "I16": 2, "U16": 2, "U32": 4, "U64": 8}
NPDT = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I8": "i1", "I32": "<i4", "I64": "<i8", "U8": "u1", "BOOL": "?"}

def test_safe_save_file_follows_the_format(tmp_path, arrays):
  fn = tmp_path / "fmt.safetensors"
  safe_save({k: T(v) for k, v in arrays.items()}, fn, metadata={"format": "pt", "note": "tinyviz"})
  raw = fn.read_bytes()
  header, data = parse_safetensors(raw)
  assert header.pop("__metadata__") == {"format": "pt", "note": "tinyviz"}
  assert sorted(header) == sorted(arrays)
  spans = []
  for k, v in arrays.items():
    info = header[k]
    assert set(info) == {"dtype", "shape", "data_offsets"}, info
    assert info["dtype"] == {np.dtype(npdt).str: name for _, npdt, name in DTYPES}.get(v.dtype.str, info["dtype"])
    assert info["shape"] == list(v.shape)
    b, e = info["data_offsets"]
    assert e - b == v.size * ITEMSIZE[info["dtype"]], f"{k}: {e - b} bytes for {v.size} x {info['dtype']}"
    got = np.frombuffer(data[b:e], dtype=NPDT[info["dtype"]]).reshape(v.shape)
    np.testing.assert_array_equal(got, v, err_msg=k)  # little-endian, row-major, as the format says
    spans.append((b, e))
  # the buffer is exactly the tensors' bytes: no holes, no overlaps, nothing after the last one
  spans.sort()
  assert spans[0][0] == 0 and all(a[1] == b[0] for a, b in zip(spans, spans[1:])) and spans[-1][1] == len(data)

def test_safe_load_reads_a_hand_written_file(tmp_path):
  # a file written by the rules alone (what other tools produce), with metadata and header padding
  w = np.arange(6, dtype=np.float32).reshape(2, 3)
  ids = np.array([7, -1, 3], dtype=np.int64)
  header = {"__metadata__": {"source": "hand"}, "ids": {"dtype": "I64", "shape": [3], "data_offsets": [0, 24]},
            "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [24, 48]}}
  h = json.dumps(header).encode()
  h += b" " * (-len(h) % 8)
  fn = tmp_path / "hand.safetensors"
  fn.write_bytes(struct.pack("<Q", len(h)) + h + ids.tobytes() + w.tobytes())
  back = safe_load(fn)
  assert sorted(back) == ["ids", "w"]
  np.testing.assert_array_equal(back["w"].numpy(), w)
  np.testing.assert_array_equal(back["ids"].numpy(), ids)
  assert back["ids"].dtype == dtypes.int64

def test_safe_load_rejects_broken_files(tmp_path):
  fn = tmp_path / "bad.safetensors"
  fn.write_bytes(b"\x01\x02")
  with pytest.raises(ValueError):
    safe_load(fn)
  fn.write_bytes(struct.pack("<Q", 10_000) + b"{}")
  with pytest.raises(ValueError):
    safe_load(fn)

def test_model_round_trip_through_a_file(tmp_path):
  Tensor.manual_seed(2); src = Net()
  fn = tmp_path / "net.safetensors"
  safe_save(get_state_dict(src), fn)
  Tensor.manual_seed(3); dst = Net()
  load_state_dict(dst, safe_load(fn))
  for k, v in get_state_dict(src).items():
    np.testing.assert_array_equal(get_state_dict(dst)[k].numpy(), v.numpy(), err_msg=k)

# ---------------------------------------------------------------- the safetensors package (skipped when not installed)

def test_file_loads_with_safetensors_package(tmp_path, arrays):
  st_np = pytest.importorskip("safetensors.numpy")
  fn = tmp_path / "pkg.safetensors"
  safe_save({k: T(v) for k, v in arrays.items()}, fn, metadata={"k": "v"})
  loaded = st_np.load_file(str(fn))
  assert sorted(loaded) == sorted(arrays)
  for k, v in arrays.items():
    assert loaded[k].dtype == v.dtype and loaded[k].shape == v.shape, k
    np.testing.assert_array_equal(loaded[k], v, err_msg=k)

def test_safetensors_package_file_loads_with_safe_load(tmp_path, arrays):
  st_np = pytest.importorskip("safetensors.numpy")
  fn = tmp_path / "from_pkg.safetensors"
  st_np.save_file(arrays, str(fn), metadata={"format": "np"})
  back = safe_load(fn)
  assert sorted(back) == sorted(arrays)
  for k, v in arrays.items():
    np.testing.assert_array_equal(back[k].numpy(), v, err_msg=k)

# ---- PyTorch checkpoints (torch.save's zip format), read without torch; torch writes the fixtures

def test_torch_load_reads_a_state_dict_like_torch(tmp_path):
  torch = pytest.importorskip("torch")
  from tinygrad.nn.state import torch_load
  m = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Linear(5, 3))
  sd = m.state_dict()
  sd["strided"] = torch.arange(12).reshape(3, 4).t()[1:]  # a view: offset and strides into a bigger storage
  sd["half"], sd["bf16"], sd["mask"], sd["scalar"] = torch.randn(3).half(), torch.randn(3).bfloat16(), torch.tensor([True, False]), torch.tensor(3.5)
  torch.save({"model": sd, "epoch": 3}, tmp_path / "ckpt.pth")
  got = torch_load(str(tmp_path / "ckpt.pth"))
  assert got["epoch"] == 3 and list(got["model"]) == list(sd)
  for k, v in sd.items():
    ref = v.float().numpy() if v.dtype == torch.bfloat16 else v.numpy()
    assert got["model"][k].shape == tuple(v.shape), k
    np.testing.assert_array_equal(got["model"][k].numpy(), ref, err_msg=k)
  assert got["model"]["half"].dtype == dtypes.float16 and got["model"]["1.num_batches_tracked"].dtype == dtypes.int64
  # and straight into a model of ours with the same names
  net = nn.Linear(5, 3)
  load_state_dict(net, {"weight": got["model"]["2.weight"], "bias": got["model"]["2.bias"]})
  np.testing.assert_allclose(net.weight.numpy(), sd["2.weight"].numpy())

def test_torch_load_refuses_what_is_not_tensors(tmp_path):
  torch = pytest.importorskip("torch")
  from tinygrad.nn.state import torch_load
  torch.save(torch.nn.Linear(2, 2), tmp_path / "module.pth")  # a whole module pickles its class: code, not data
  with pytest.raises(Exception, match="refusing to import it"): torch_load(str(tmp_path / "module.pth"))
  (tmp_path / "old.pth").write_bytes(b"\x80\x02not a zip")
  with pytest.raises(ValueError, match="not a zip-format checkpoint"): torch_load(str(tmp_path / "old.pth"))

def test_archive_readers_as_tinygrad_has_them(tmp_path):
  # tinygrad's nn.state.tar_extract / zip_extract / safe_load_metadata: a path or a uint8 Tensor of the bytes in
  import io, tarfile, zipfile
  from tinygrad.nn.state import tar_extract, zip_extract, safe_load_metadata, safe_save
  files = {"a.bin": bytes(range(50)), "dir/b.txt": b"hello tinygrad" * 20}
  with tarfile.open(tmp_path / "x.tar", "w") as tar:
    for n, b in files.items():
      ti = tarfile.TarInfo(n); ti.size = len(b); tar.addfile(ti, io.BytesIO(b))
  with zipfile.ZipFile(tmp_path / "x.zip", "w") as z:
    z.writestr("a.bin", files["a.bin"], compress_type=zipfile.ZIP_STORED)
    z.writestr("dir/b.txt", files["dir/b.txt"], compress_type=zipfile.ZIP_DEFLATED)
  for got in (tar_extract(tmp_path / "x.tar"), zip_extract(str(tmp_path / "x.zip")), zip_extract(Tensor((tmp_path / "x.zip").read_bytes()))):
    assert {k: bytes(v.numpy()) for k, v in got.items()} == files
  safe_save({"w": Tensor([[1.0, 2.0]])}, tmp_path / "m.safetensors")
  t, start, meta = safe_load_metadata(tmp_path / "m.safetensors")
  assert meta["w"]["shape"] == [1, 2] and start == t.shape[0] - 8 and bytes(t[start:].numpy()) == np.float32([1, 2]).tobytes()
  with pytest.raises(TypeError, match="uint8"): tar_extract(Tensor([1.0]))
