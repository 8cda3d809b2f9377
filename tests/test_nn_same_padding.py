"""Conv padding='same' and load_state_dict's shape rules, checked against torch."""
import numpy as np
import pytest
import torch
from tinygrad import Tensor, Device
from tinygrad.nn import Conv1d, Conv2d, Linear, BatchNorm
from tinygrad.nn.state import load_state_dict

@pytest.mark.parametrize("dims,k,d", [((32,), 3, 1), ((29, 31), 5, 1), ((28, 33), 4, 1), ((20, 20), 3, 3)])
def test_same_padding_matches_torch(dims, k, d):
  conv = (Conv1d if len(dims) == 1 else Conv2d)(3, 4, kernel_size=k, padding="same", dilation=d)
  tconv = (torch.nn.Conv1d if len(dims) == 1 else torch.nn.Conv2d)(3, 4, kernel_size=k, padding="same", dilation=d)
  with torch.no_grad():
    tconv.weight[:] = torch.tensor(conv.weight.numpy()); tconv.bias[:] = torch.tensor(conv.bias.numpy())
  x = np.random.rand(2, 3, *dims).astype(np.float32)
  out = conv(Tensor(x)).numpy()
  assert out.shape[2:] == dims
  np.testing.assert_allclose(out, tconv(torch.tensor(x)).detach().numpy(), atol=1e-5, rtol=1e-5)

def test_same_padding_bad_inputs():
  with pytest.raises(ValueError, match="stride 1"): Conv2d(2, 2, 3, stride=2, padding="same")
  with pytest.raises(ValueError, match="'same'"): Conv2d(2, 2, 3, padding="valid")

def test_state_dict_shape_mismatch_names_the_layer():
  with pytest.raises(ValueError, match=r"Shape mismatch in layer `weight`: Expected shape \(2, 2\), but found \(4, 4\)"):
    load_state_dict(Linear(2, 2, bias=False), {"weight": Tensor.randn(4, 4)})

def test_state_dict_scalar_fits_one_element():
  bn = BatchNorm(1)
  sd = {"weight": Tensor([2.0]), "bias": Tensor([0.5]), "running_mean": Tensor([0.0]), "running_var": Tensor([1.0]),
        "num_batches_tracked": Tensor(7, dtype=bn.num_batches_tracked.dtype)}  # torch saves it 0-d
  load_state_dict(bn, sd)
  assert bn.num_batches_tracked.shape == (1,) and bn.num_batches_tracked.tolist() == [7]

def test_sharded_model_shards_the_loaded_value():
  devs = (f"{Device.DEFAULT}:1", f"{Device.DEFAULT}:2")
  layer = Linear(4, 6)
  layer.weight.shard_(devs, 0); layer.bias.shard_(devs, None)
  w, b = np.random.rand(6, 4).astype(np.float32), np.random.rand(6).astype(np.float32)
  load_state_dict(layer, {"weight": Tensor(w), "bias": Tensor(b)})
  assert layer.weight.device == devs and layer.weight.uop.axis == 0 and layer.bias.uop.axis is None
  np.testing.assert_allclose(layer.weight.numpy(), w); np.testing.assert_allclose(layer.bias.numpy(), b)
