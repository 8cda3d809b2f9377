"""A small GPT written the way tinygrad's examples write transformers (nn.Embedding for tokens and positions, LayerNorm,
fused qkv Linear, Tensor.scaled_dot_product_attention with is_causal, gelu MLP, AdamW, a @TinyJit @Tensor.train() step)
learning to continue sequences that count up modulo V. tests/test_compat_scripts.py runs it unchanged."""
import numpy as np, time
from tinygrad import Tensor, TinyJit, nn
from tinygrad.helpers import getenv
V, T, D, H, L, B = 16, 16, 32, 4, 2, 32
class Block:
  def __init__(self):
    self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
    self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
    self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
  def __call__(self, x: Tensor) -> Tensor:
    q, k, v = self.qkv(self.ln1(x)).reshape(B, T, 3, H, D // H).permute(2, 0, 3, 1, 4)
    a = q.scaled_dot_product_attention(k, v, is_causal=True).transpose(1, 2).reshape(B, T, D)
    x = x + self.proj(a)
    return x + self.fc2(self.fc1(self.ln2(x)).gelu())
class GPT:
  def __init__(self):
    self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(T, D)
    self.blocks = [Block() for _ in range(L)]
    self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, V, bias=False)
  def __call__(self, idx: Tensor) -> Tensor:
    x = self.tok(idx) + self.pos(Tensor.arange(T).reshape(1, T))
    for b in self.blocks: x = b(x)
    return self.head(self.ln(x))
# the task: continue a sequence that counts up mod V from a random start
rng = np.random.default_rng(0)
def batch():
  s = rng.integers(0, V, (B, 1)); seq = (s + np.arange(T + 1)) % V
  return Tensor(seq[:, :-1].astype(np.int32)), Tensor(seq[:, 1:].astype(np.int32))
Tensor.manual_seed(0)
model = GPT()
opt = nn.optim.AdamW(nn.state.get_parameters(model), lr=3e-3)
@TinyJit
@Tensor.train()
def step(x, y):
  opt.zero_grad()
  loss = model(x).sparse_categorical_crossentropy(y).backward()
  opt.step()
  return loss
st = time.perf_counter()
for i in range(getenv("STEPS", 60)):
  x, y = batch()
  loss = step(x.realize(), y.realize()).item()
  if i % 10 == 0: print(i, round(loss, 3), flush=True)
print("final loss", round(loss, 3), "in", round(time.perf_counter() - st, 1), "s")
