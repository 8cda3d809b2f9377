"""The schedule cache: a repeated lazy graph over other buffers is scheduled once, and gives exactly what scheduling
it anew would: same values, fresh buffers for every result (earlier results stay intact), in-place assigns still in
place, copies between devices."""
import numpy as np, pytest
from tinygrad import Tensor, nn
from tinygrad.nn.state import get_parameters
from tinygrad.engine import schedule_cache

@pytest.fixture
def fresh(monkeypatch):
  monkeypatch.setattr(schedule_cache, "_cache", type(schedule_cache._cache)())
  monkeypatch.setitem(schedule_cache.stats, "hits", 0)
  monkeypatch.setitem(schedule_cache.stats, "misses", 0)
  return schedule_cache.stats

def train(steps: int) -> tuple[list[float], list[np.ndarray]]:
  """A non-jitted training loop: every step builds the same graph over the updated weights."""
  Tensor.manual_seed(3)
  l1, l2 = nn.Linear(12, 16), nn.Linear(16, 3)
  opt = nn.optim.Adam(get_parameters([l1, l2]), lr=0.05)
  rng = np.random.default_rng(0)
  x, y = Tensor(rng.standard_normal((32, 12), dtype=np.float32)), Tensor(rng.integers(0, 3, 32, dtype=np.int32))
  losses = []
  for _ in range(steps):
    with Tensor.train():
      opt.zero_grad()
      loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y).backward()
      loss.realize(*opt.schedule_step())
    losses.append(loss.item())
  return losses, [p.numpy() for p in get_parameters([l1, l2])]

def test_a_training_loop_gives_the_same_numbers_cached(fresh, monkeypatch):
  cached_losses, cached_w = train(6)
  # the first step schedules the weights' lazy fills with it, the second its step over the filled buffers; every later
  # step is a hit (a realize of what is a buffer already, `loss.item()`, schedules nothing and counts neither)
  assert fresh == {"hits": 4, "misses": 3}, fresh
  monkeypatch.setattr(schedule_cache, "ENABLED", False)
  losses, w = train(6)
  assert cached_losses == losses and losses[-1] < losses[0]
  for a, b in zip(cached_w, w): np.testing.assert_array_equal(a, b)

def test_each_hit_writes_fresh_buffers(fresh):
  f = lambda t: ((t * 2).sum(0) + 1).relu()
  a, b = Tensor([[1.0, -5.0], [2.0, 1.0]]).realize(), Tensor([[3.0, 4.0], [-9.0, 0.5]]).realize()
  ra = f(a).realize()
  hits = fresh["hits"]
  rb = f(b).realize()  # the same graph over b: a hit
  assert fresh["hits"] == hits + 1
  assert ra.tolist() == [7.0, 0.0] and rb.tolist() == [0.0, 10.0]  # ra was not overwritten by the second run

def test_in_place_assigns_stay_in_place(fresh):
  w = Tensor.zeros(4).contiguous().realize()
  for i in range(1, 5):  # the same graph over w each time: from the second on, hits that must still write w itself
    w.assign(w + 1).realize()
    assert w.tolist() == [i] * 4
  assert fresh["hits"] >= 2, fresh

def test_copies_between_devices(fresh):
  for v in (1.0, 2.0, 3.0):
    t = Tensor([v, v + 1], device="CPU").realize()
    assert (t.to("CPU:1") * 2).tolist() == [2 * v, 2 * v + 2]
  assert fresh["hits"] >= 1

def test_under_viz_a_repeated_schedule_is_shown_once(fresh):
  """The rewrite explorer gets one schedule context for a graph realized three times; the timeline gets three
  schedule spans, the repeats marked cached."""
  from tinygrad import tracing
  from profiler.events import ContextBegin, Span, from_json
  from profiler.recorder import Recorder
  got: list[dict] = []
  rec = Recorder("viz", sinks=[got.extend])
  a = Tensor([1.0, 2.0]).realize()
  tracing.tracer = rec
  try:
    outs = [(a * 3 + i).realize() for i in range(3)]  # the constant differs: three graphs ...
    outs += [(a * 5).realize() for _ in range(3)]      # ... and one graph three times
  finally:
    tracing.tracer = None
    rec.close()
  events = [from_json(d) for d in got]
  schedules = [e for e in events if isinstance(e, ContextBegin) and e.kind == "schedule"]
  spans = [e for e in events if isinstance(e, Span) and e.cat == "schedule"]
  assert len(schedules) == 4 and len(spans) == 6
  assert [s.args["cached"] for s in spans] == [False] * 4 + [True] * 2 and all("(cached)" in s.name for s in spans[4:])
  assert [o.tolist() for o in outs] == [[3.0, 6.0], [4.0, 7.0], [5.0, 8.0]] + [[5.0, 10.0]] * 3
