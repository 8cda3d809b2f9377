"""Optimizers refuse a bad hyperparameter at construction with ValueError, as torch.optim does (tinygrad's
test_edgecases checks lr, momentum and weight_decay against torch): each case is checked against torch raising too."""
import pytest
import torch
from tinygrad import Tensor, nn

CASES = [
  ("SGD", dict(lr=-0.1), "learning rate"), ("SGD", dict(lr=0.1, momentum=-0.1), "momentum"),
  ("SGD", dict(lr=0.1, weight_decay=-0.1), "weight_decay"), ("AdamW", dict(lr=0.1, weight_decay=-0.1), "weight_decay"),
  ("Adam", dict(lr=-1e-3), "learning rate"), ("Adam", dict(lr=1e-3, eps=-1e-8), "eps"),
]

@pytest.mark.parametrize("name,kw,what", CASES)
def test_bad_hyperparameter_raises_like_torch(name, kw, what):
  with pytest.raises(ValueError): getattr(torch.optim, name)([torch.tensor([1.0], requires_grad=True)], **kw)
  with pytest.raises(ValueError, match=what): getattr(nn.optim, name)([Tensor([1.0], requires_grad=True)], **kw)

@pytest.mark.parametrize("b1,b2", [(1.0, 0.999), (0.9, -0.5)])
def test_adam_betas_outside_0_1(b1, b2):
  with pytest.raises(ValueError): torch.optim.Adam([torch.tensor([1.0], requires_grad=True)], betas=(b1, b2))
  with pytest.raises(ValueError, match="must be in \\[0, 1\\)"): nn.optim.Adam([Tensor([1.0], requires_grad=True)], b1=b1, b2=b2)

def test_good_edges_still_train():
  # lr 0 and weight_decay 0 are valid (torch takes them): a step with lr=0 leaves the weight as it was
  w = Tensor([1.0, 2.0], requires_grad=True)
  opt = nn.optim.SGD([w], lr=0.0, momentum=0.0, weight_decay=0.0)
  with Tensor.train():
    opt.zero_grad()
    (w * w).sum().backward()
    opt.step()
  assert w.tolist() == [1.0, 2.0]
