# uint8 images resize as torch resizes them (tinygrad's test_ops checks it): bilinear in fixed point with torch's
# per-axis weight precision, so every pixel is equal, not off by one; and a uint8 lerp whose ends are far apart is right.
import numpy as np
import pytest
import torch
from tinygrad import Tensor

rng = np.random.default_rng(3)
IMG = rng.integers(0, 256, (2, 3, 24, 31), dtype=np.uint8)

@pytest.mark.parametrize("size", [(10, 10), (7, 40), (48, 62), (24, 31), (3, 100)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_uint8_bilinear_equals_torch(size, align_corners):
  ref = torch.nn.functional.interpolate(torch.tensor(IMG), size=size, mode="bilinear", align_corners=align_corners).numpy()
  out = Tensor(IMG).interpolate(size, mode="linear", align_corners=align_corners)
  assert out.dtype.name == "uchar"
  np.testing.assert_array_equal(out.numpy(), ref)

def test_uint8_lerp_with_far_apart_ends():
  a, b = Tensor([0, 200, 255, 10], dtype="uint8"), Tensor([255, 0, 0, 250], dtype="uint8")
  w = np.array([0.5, 0.25, 1.0, 0.1], dtype=np.float32)
  want = np.floor(np.array([0, 200, 255, 10]) + (np.array([255, 0, 0, 250]) - np.array([0, 200, 255, 10])) * w + 0.5)
  assert a.lerp(b, Tensor(w)).tolist() == want.astype(int).tolist()
