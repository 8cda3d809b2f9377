"""Damaged inputs: truncated and randomly corrupted traces give events and warnings, or a TraceError, never
anything else; and every event wholly before the damage is still there."""
import gzip, json, os, random
import pytest
from profiler.chrome import write_chrome
from profiler.events import Span, from_json
from profiler.load import parse
from profiler.tracefile import TraceError
from profiler import recorder
from tinygrad import Tensor, tracing
from tinygrad.helpers import profile_marker
from tinygrad.uop.ops import UOp, graph_rewrite
from tinygrad.uop.symbolic import symbolic

TORCH = os.path.join(os.path.dirname(__file__), "fixtures", "torch_cpu_trace.json")
TOKENS = b'{}[],:"\\\n 0123456789eE-+.tfn\x00\xff\x1f\x8b'

@pytest.fixture(scope="module")
def ours(tmp_path_factory) -> bytes:
  """A trace of the real engine: schedules, kernels and their codegen, runs, memory, a marker and a user rewrite."""
  path = str(tmp_path_factory.mktemp("fuzz") / "t.jsonl")
  recorder.install("viz", path=path, announce=False, attach=tracing.attach)
  try:
    a = (Tensor.arange(8) * 2 + 1).realize()
    for i in range(8):
      profile_marker(f"step {i}")
      (a * a).sum().realize()
    x = UOp.variable("x", 0, 9)
    graph_rewrite((x + 0) * 1 + x * 0, symbolic, name="user simplify")
  finally: recorder.uninstall()
  return open(path, "rb").read()

def mutations(data: bytes, seed: int, n: int):
  """(what, offset of the first damaged byte, damaged bytes)"""
  r = random.Random(seed)
  for _ in range(n):
    k = r.randrange(len(data))
    kind = r.choice(["truncate", "flip", "tokens", "delete", "garbage"])
    if kind == "truncate": yield kind, k, data[:k]
    elif kind == "flip": yield kind, k, data[:k] + bytes([data[k] ^ (1 << r.randrange(8))]) + data[k + 1:]
    elif kind == "tokens": yield kind, k, data[:k] + bytes(r.choice(TOKENS) for _ in range(r.randrange(1, 6))) + data[k + 1:]
    elif kind == "delete": yield kind, k, data[:k] + data[k + r.randrange(1, 200):]
    else: yield kind, k, data[:k] + r.randbytes(r.randrange(1, 50)) + data[k:]

def safe_parse(data: bytes):
  try: return parse(data)
  except TraceError: return None

def test_our_trace_keeps_every_line_before_the_damage(ours):
  lines, clean, ends = ours.split(b"\n"), [], []
  off = len(lines[0]) + 1
  for raw in lines[1:-1]:
    clean.append(from_json(json.loads(raw)))
    off += len(raw) + 1
    ends.append(off)
  assert {e.TYPE for e in clean} >= {"run", "uop", "pattern", "context_begin", "rewrite", "kernel", "span", "counter", "marker", "run_end"}
  for what, k, bad in mutations(ours, 1, 400):
    t = safe_parse(bad)
    before = sum(e <= k for e in ends)
    if before == 0: continue
    assert t is not None, (what, k)
    assert t.events[:before] == clean[:before], (what, k)
    # cut anywhere but the last byte (the final newline: the complete run_end before it is read, rightly without a warning)
    if what == "truncate" and k < len(ours) - 1: assert t.warnings, (what, k)

def chrome_elements(data: bytes) -> tuple[int, list[tuple[int, dict]]]:
  """Byte offset where the events array starts, and each event with the offset where it ends."""
  text = data.decode()
  assert text.isascii()
  dec, i = json.JSONDecoder(), text.index("[", text.index('"traceEvents"')) + 1
  start, out = i, []
  while True:
    while text[i] in " \n\t\r,": i += 1
    if text[i] == "]": return start, out
    v, i = dec.raw_decode(text, i)
    out.append((i, v))

@pytest.mark.parametrize("source", ["torch", "export"])
def test_chrome_trace_keeps_every_complete_event_before_the_damage(source, ours, tmp_path):
  if source == "torch": data = open(TORCH, "rb").read()
  else:
    write_chrome(parse(ours).events, str(tmp_path / "e.json"))
    data = open(tmp_path / "e.json", "rb").read()
  start, elems = chrome_elements(data)
  origin = json.loads(data).get("otherData", {}).get("tinyviz", {}).get("clock_origin_ns", 0)
  def ns(us: float) -> int: return round(us * 1000)
  for what, k, bad in mutations(data, 2, 300):
    t = safe_parse(bad)
    if k < start: continue
    assert t is not None, (what, k)
    got = {(s.name, s.start_ns, s.end_ns) for s in t.events if isinstance(s, Span)}
    want = {(e["name"], origin + ns(e["ts"]), origin + ns(e["ts"]) + ns(e["dur"])) for end, e in elems if end <= k and e["ph"] == "X"}
    assert want <= got, (what, k, want - got)

@pytest.mark.parametrize("which", ["torch_gz", "ours_gz"])
def test_gzipped_inputs_only_raise_trace_error(which, ours):
  data = open(TORCH + ".gz", "rb").read() if which == "torch_gz" else gzip.compress(ours)
  plain = parse(data)
  n = len(plain.events)
  for what, k, bad in mutations(data, 3, 200):
    t = safe_parse(bad)
    if t is not None: assert len(t.events) <= n + 1000
  for k in range(0, len(data), max(1, len(data) // 50)):
    t = safe_parse(data[:k])
    if t is not None: assert any("gzip" in str(w) for w in t.warnings)

def test_structural_garbage_only_raises_trace_error():
  r = random.Random(4)
  for _ in range(2000):
    blob = bytes(r.choice(TOKENS + b'"ph":"X"') for _ in range(r.randrange(0, 80)))
    safe_parse(blob)
    safe_parse(b"[" + blob)
    safe_parse(b'{"traceEvents":[' + blob)
  safe_parse(b"[" * 100_000)  # nesting deeper than the recursion limit
  safe_parse(b'{"type":"header","format":"tinyviz-trace","version":1}\n' + b"[" * 100_000 + b"\n")
