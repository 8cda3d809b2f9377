"""The timeline's lanes, assigned on the server only (viz/server/timeline.py; the page draws the `depth` it is sent):
spans of one lane never overlap, a call tree stacks as a flame, and no more lanes are used than the deepest overlap."""
from __future__ import annotations
import random
from viz.server.timeline import assign_lanes

def random_spans(n: int, seed: int, overlap: float) -> tuple[list[int], list[int]]:
  """n spans sorted by start: mostly back to back, some overlapping (concurrent kernels), durations over 4 decades."""
  r, starts, ends, t = random.Random(seed), [], [], 0
  for _ in range(n):
    d = int(10 ** (1 + 4 * r.random()))
    starts.append(t); ends.append(t + d)
    t += int(d * r.random()) if r.random() < overlap else d + r.randrange(50)
  return starts, ends

def max_overlap(starts: list[int], ends: list[int]) -> int:
  ev = sorted([(s, 1) for s in starts] + [(e, -1) for e in ends])  # an end before a start at one time: touching spans share
  cur = best = 0
  for _, d in ev: cur += d; best = max(best, cur)
  return best

def test_overlapping_spans_never_share_a_lane_and_use_as_few_as_the_deepest_overlap():
  for seed in (1, 2, 3, 4):
    starts, ends = random_spans(3000, seed, 0.5)
    lanes, last_end = assign_lanes(starts, ends), {}
    for i, lane in enumerate(lanes):
      assert last_end.get(lane, -1) <= starts[i], f"span {i} overlaps the previous span of lane {lane}"
      last_end[lane] = ends[i]
    assert max(lanes) + 1 == max_overlap(starts, ends)

def test_nested_spans_stack_as_a_flame():
  r, spans = random.Random(7), []
  def grow(s: int, e: int, depth: int) -> None:
    spans.append((s, e, depth))
    if depth == 5: return
    k, t = r.randint(1, 3), s
    for _ in range(k):
      n = (e - s) // (k + 1)
      a = t + 1 + r.randrange(max(n // 3, 1)); b = a + n // 2
      if b >= e: break
      grow(a, b, depth + 1); t = b
  for i in range(4): grow(i * 10**6, i * 10**6 + 800_000, 0)
  spans.sort(key=lambda x: (x[0], x[0] - x[1]))  # the server's order: by start, longer first
  assert len(spans) > 50
  assert assign_lanes([s for s, _, _ in spans], [e for _, e, _ in spans]) == [d for _, _, d in spans]

def test_touching_spans_share_a_lane_and_a_freed_lane_is_reused_lowest_first():
  assert assign_lanes([0, 10, 20, 25], [10, 20, 25, 26]) == [0, 0, 0, 0]
  assert assign_lanes([0, 1, 2], [10, 11, 12]) == [0, 1, 2]
  assert assign_lanes([], []) == []
  # lanes 0, 1, 2 busy; 1 frees first, so the next span takes 1, not 3
  assert assign_lanes([0, 1, 2, 6], [100, 5, 102, 9]) == [0, 1, 2, 1]
