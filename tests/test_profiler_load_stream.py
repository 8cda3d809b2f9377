"""The readers stream: input arrives in chunks (read from a file, decompressed as it comes) and each event is
decoded on its own. Whatever the chunk size, events and warnings (with their byte offsets and lines) are those of
the whole input read at once; and loading holds the events, not the file's text and a dict per event."""
import gzip, json, os, re, tracemalloc, zlib
import pytest
from profiler.chrome import _Scanner, read_chrome_chunks, write_chrome
from profiler.events import Counter, Kernel, Marker, Run, Span, to_json, header
from profiler.load import load, parse
from profiler.tracefile import TraceError, Warnings, encode, read_jsonl_chunks

FIX = os.path.join(os.path.dirname(__file__), "fixtures")
TORCH = os.path.join(FIX, "torch_cpu_trace.json")
SIZES = [1, 2, 3, 5, 64, 1000]

def X(name: str, ts: float, dur: float = 1, pid=1, tid=1, **kw) -> dict:
  return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, **kw}

def pieces(data: bytes, size: int) -> list[bytes]: return [data[i:i + size] for i in range(0, len(data), size)]

def same(a, b) -> None:
  assert a.events == b.events and a.kind == b.kind and a.meta == b.meta
  assert [(w.message, w.offset, w.line) for w in a.warnings] == [(w.message, w.offset, w.line) for w in b.warnings]

def our_trace() -> list:
  run = Run("/x/train.py", ["train.py"], 1.7e9, 5_000_000_123, 42, "0.1.0", "viz")
  k = Kernel(1, "r_16_4", "CPU", "", (16, 1, 1), (4, 1, 1), 2048, 4096, None, [])
  return [run, k, Span("CPU", "r_16_4", 5_000_001_000, 5_000_004_321, "kernel", {"kernel": 1}),
          Span("CPU/copy", "copy 64B", 5_000_005_001, 5_000_005_999, "copy", {"bytes": 64}),
          Span("HOST", "schédule ✓", 5_000_000_500, 5_000_000_900, "schedule", {}),
          Counter("CPU", "memory", 5_000_001_500, 4096.0), Marker("epoch 1", 5_000_006_000)]

UNICODE = ("[\n" + ",\n".join(json.dumps(X(n, i, tid=t), ensure_ascii=False) for i, (n, t) in
           enumerate([("café", "流 1"), ("日本語カーネル", 2), ("🚀 launch", "🧵"), ("plain", 1)])) + ",\n").encode()
CHROME_CASES = {
  "torch": open(TORCH, "rb").read(),
  "unterminated with {} and commas": b'[' + b",".join(json.dumps(X(f"k{i}", i)).encode() for i in range(3)) + b',{},\n',
  "bare numbers split across chunks": b"[12345, 678.25e1, -90, {}, 1e5]",
  "syntax error after non-ascii": UNICODE + b'{"ph": "X", "name": oops},\n' + json.dumps(X("after", 9)).encode() + b"]",
  "invalid utf-8 in a name": b'[' + json.dumps(X("a", 1)).encode()[:-1] + b', "args": {"s": "\xff\xfe\xc3"}}, {"ph": "X", x}]',
  "BOM and object form": b"\xef\xbb\xbf" + json.dumps({"displayTimeUnit": "ns", "traceEvents": [X("a", 1), X("b", 2)], "traceName": "t"}).encode(),
  "damage after the events": b'{"traceEvents": [' + json.dumps(X("a", 1)).encode() + b'], "otherData": {"x": tru',
  "B/E, async, flows, counters, metadata last": json.dumps([
    {"ph": "B", "name": "outer", "ts": 1, "pid": 1, "tid": 1}, {"ph": "E", "ts": 9, "pid": 1, "tid": 1},
    {"ph": "b", "name": "req", "cat": "net", "id": "0x1", "ts": 4, "pid": 1}, {"ph": "e", "name": "req", "cat": "net", "id": "0x1", "ts": 8, "pid": 1},
    {"ph": "s", "name": "f", "id": 7, "ts": 1, "pid": 1, "tid": 1}, {"ph": "f", "name": "f", "id": 7, "ts": 3, "pid": 1, "tid": 2},
    {"ph": "C", "name": "mem", "ts": 1, "pid": 1, "args": {"used": 10, "free": 5}}, {"ph": "B", "name": "open", "ts": 20, "pid": 1, "tid": 2},
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "GPU"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "stream 7"}}]).encode(),
  "deep nesting": b'[{"ph": "X"}, ' + b"[" * 5000,
}

@pytest.mark.parametrize("case", list(CHROME_CASES))
def test_chrome_any_chunk_size_reads_as_the_whole(case):
  data = CHROME_CASES[case]
  whole = parse(data)
  for size in SIZES: same(read_chrome_chunks(pieces(data, size)), whole)  # parse() takes a first 400 bytes whole

def test_what_the_whole_read_gives_is_right():
  # the reference above is itself checked: offsets and lines of a syntax error after multi-byte characters
  t = read_chrome_chunks(pieces(CHROME_CASES["syntax error after non-ascii"], 3))
  assert [s.name for s in t.events] == ["café", "日本語カーネル", "🚀 launch", "plain"]
  assert [s.track for s in t.events] == ["pid 1/流 1", "pid 1/tid 2", "pid 1/🧵", "pid 1/tid 1"]
  (w,) = t.warnings
  assert w.offset == len(UNICODE) + len(b'{"ph": "X", "name": ') and w.line == 6 and "stopped reading" in w.message
  t = read_chrome_chunks(pieces(CHROME_CASES["B/E, async, flows, counters, metadata last"], 2))
  assert {s.name: s.track for s in t.events if isinstance(s, Span)} == {"outer": "GPU/stream 7", "req": "GPU/async", "open": "GPU/tid 2"}
  t = read_chrome_chunks(pieces(CHROME_CASES["bare numbers split across chunks"], 2))
  assert [w.message for w in t.warnings] == [f"event {k}: not an object; skipped" for k in (0, 1, 2, 4)]

def test_our_export_with_other_data_after_the_events(tmp_path):
  write_chrome(our_trace(), str(tmp_path / "e.json"))
  doc = json.load(open(tmp_path / "e.json"))
  first = parse(json.dumps(doc).encode())
  assert first.events == our_trace()
  moved = json.dumps({"traceEvents": doc["traceEvents"], **{k: v for k, v in doc.items() if k != "traceEvents"}}).encode()
  for size in (1, 7, 1 << 20): same(read_chrome_chunks(pieces(moved, size)), first)

# A whole window of complete events is decoded in one call (_Scanner.batch); what it gives must be what decoding
# them one at a time gives, damaged or not: any failure in a batch hands the window back to the one-at-a-time path.
BATCHY = ("[\n" + ",\n".join(json.dumps(e, ensure_ascii=False) for e in [
  X("aten::mm", 1.5, 2, args={"in": [{"a": 1}, {"b": "}, {"}], "s": "x\\"}),  # a '}, {' inside an event, and in a string
  X("café", 3, -1, pid="p", tid=2.0), {"ph": "f", "id": 4, "ts": 3, "pid": 1, "tid": 1, "cat": "ac2g", "name": "ac2g"},
  {}, {"ph": "X", "name": "no ts"}, X("big", 1e308), X("k", 5, tid=True, cat=7, args=3),
  {"ph": "C", "name": "mem", "ts": 6, "pid": 1, "args": {"used": 10}}, X("last", 7)]) + "\n]").encode()

def one_at_a_time(monkeypatch, data: bytes, size: int):
  with monkeypatch.context() as m:
    m.setattr(_Scanner, "batch", lambda self, i: None)
    return read_chrome_chunks(pieces(data, size))

def test_batches_are_taken(monkeypatch):
  data = CHROME_CASES["torch"] + b" "
  got = [(len(evs), batched) for evs, batched in _Scanner(pieces(data, 1 << 20), Warnings()).events()]
  assert sum(n for n, b in got if b) > 0.9 * sum(n for n, _ in got)
  got = [(len(evs), batched) for evs, batched in _Scanner([BATCHY], Warnings()).events()]
  assert got[0] == (8, True)  # up to the last event: what follows it might still be cut off
  for size in (len(data), 4096): same(read_chrome_chunks(pieces(data, size)), one_at_a_time(monkeypatch, data, size))

# the array ends before the window does, and what follows looks like events ("}, {")
AFTER = json.dumps({"traceEvents": [X("a", 1), X("b", 2)], "deviceProperties": [{"id": 0}, {"id": 1}], "x": 1}).encode()

@pytest.mark.parametrize("size", [1 << 20, 5])
@pytest.mark.parametrize("trace", [BATCHY, AFTER], ids=["array", "object"])
def test_batch_and_one_at_a_time_agree_on_every_cut_and_damage(monkeypatch, size, trace):
  whole = read_chrome_chunks([trace])
  assert (len(whole.events), len(whole.warnings)) == ((6, 3) if trace is BATCHY else (2, 0))
  # the reader names each thread's process (its pid, or the pid's process_name)
  assert whole.meta == {"processes": {"pid 1/tid 1": "pid 1", "p/tid 2": "p", "pid 1/true": "pid 1"} if trace is BATCHY else {"pid 1/tid 1": "pid 1"}}
  for n in range(1, len(trace) + 1):  # cut short, a byte made wrong, a comma added
    for data in (trace[:n], trace[:n - 1] + b"x" + trace[n:], trace[:n] + b"," + trace[n:]):
      try: got = read_chrome_chunks(pieces(data, size))
      except TraceError as e:
        with pytest.raises(TraceError, match=re.escape(e.message)): one_at_a_time(monkeypatch, data, size)
      else: same(got, one_at_a_time(monkeypatch, data, size))

def jsonl_case() -> bytes:
  lines = [encode(o).encode() for o in [header()] + [to_json(e) for e in our_trace()]]
  lines.insert(3, b"{oops")
  lines.insert(5, json.dumps({"type": "marker", "name": 3, "ts_ns": 1}).encode())
  return b"\n".join(lines) + b'\n{"type":"marker","na'

def test_jsonl_any_chunk_size_reads_as_the_whole():
  data = jsonl_case()
  whole = parse(data)
  assert len(whole.events) == len(our_trace()) and len(whole.warnings) == 4
  assert whole.warnings[0].line == 4 and whole.warnings[0].offset == data.index(b"{oops")
  for size in SIZES: same(read_jsonl_chunks(pieces(data, size)), whole)
  with pytest.raises(TraceError, match="newer"): parse(b'{"type":"header","format":"tinyviz-trace","version":99}\n', chunk_size=4)

def gz_members(data: bytes, cut: int) -> bytes: return gzip.compress(data[:cut]) + gzip.compress(data[cut:])

@pytest.mark.parametrize("data", [CHROME_CASES["torch"], jsonl_case()], ids=["chrome", "jsonl"])
def test_gzip_members_and_chunk_boundaries(data):
  whole = parse(data)
  for cut in (1, len(data) // 3, len(data) - 1):  # a member boundary in the middle of an event
    gz = gz_members(data, cut)
    m2 = len(gzip.compress(data[:cut]))
    for size in (1, m2 - 1, m2 + 1, 1000, 1 << 20):  # also the next member's magic split across two chunks
      if size > 0: same(parse(gz, chunk_size=size), whole)

def damaged(data: bytes, cut: int) -> tuple[bytes, int]:
  """data[:cut] compressed and flushed to a byte boundary, then a deflate block of the reserved type: corrupt right there."""
  c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
  good = c.compress(data[:cut]) + c.flush(zlib.Z_FULL_FLUSH)
  return good + b"\x07" + os.urandom(64), len(good)

def test_gzip_damage_mid_chunk_keeps_the_text_before_it():
  data = CHROME_CASES["torch"]
  start = data.index(b"[", data.index(b'"traceEvents"')) + 1
  cut = data.index(b"\n  {", start + len(data) // 2) + 1  # between two events
  bad, at = damaged(data, cut)
  whole = parse(data[:cut])
  for size in (3, 500, at + 7, 1 << 20):  # the damage inside a chunk, wherever it falls
    t = parse(bad, chunk_size=size)
    assert t.events == whole.events
    g = t.warnings[0]
    assert g.message.startswith("gzip data corrupt") and f"at compressed byte {at};" in g.message
    assert f"using the {cut} bytes decompressed" in g.message
    assert [w.message for w in t.warnings[1:]] == [w.message for w in whole.warnings]

def test_gzip_truncated_and_empty():
  data = jsonl_case()
  gz = gzip.compress(data)
  t = parse(gz[:-9], chunk_size=5)  # the trailer cut: all text arrived, its check did not
  assert "gzip stream truncated" in str(t.warnings[0]) and t.events == parse(data).events
  with pytest.raises(TraceError, match="empty trace.*gzip"): parse(gz[:12], chunk_size=1)
  with pytest.raises(TraceError, match="empty trace"): parse(gzip.compress(b" \n" * 1000), chunk_size=3)

class CountingFile:
  def __init__(self, f): self.f, self.reads = f, []
  def read(self, n: int = -1) -> bytes: self.reads.append(n); return self.f.read(n)
  def __enter__(self): return self
  def __exit__(self, *a): self.f.close()

def test_load_reads_the_file_in_chunks(tmp_path, monkeypatch):
  import builtins, profiler.load
  opened: list[CountingFile] = []
  def counting_open(path, mode="r"): opened.append(CountingFile(builtins.open(path, mode))); return opened[-1]
  monkeypatch.setattr(profiler.load, "open", counting_open, raising=False)
  t = load(TORCH, chunk_size=4096)
  assert opened and all(n == 4096 for n in opened[0].reads) and len(opened[0].reads) > os.path.getsize(TORCH) // 4096
  assert t.events == parse(CHROME_CASES["torch"]).events

def big_chrome(n: int) -> bytes:
  evs = [X(f"kernel {i % 50}", i * 2.5, 1.25, tid=i % 4, cat="kernel", args={"External id": i, "stream": 7, "grid": [i, 1, 1]})
         for i in range(n)]
  return json.dumps({"traceEvents": evs, "displayTimeUnit": "ms"}, indent=1).encode()

@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_loading_holds_the_events_not_the_text(tmp_path, gz):
  data = big_chrome(20_000)
  path = tmp_path / ("big.json.gz" if gz else "big.json")
  path.write_bytes(gzip.compress(data) if gz else data)
  tracemalloc.start()
  try:
    t = load(str(path), chunk_size=1 << 16)
    kept, peak = tracemalloc.get_traced_memory()
  finally: tracemalloc.stop()
  assert len(t.events) == 20_000 and t.warnings == []
  # what was held beyond the result while reading: a few copies of a chunk's text (~0.2-1 MB here), not the 4.7 MB
  # text (the old reader's peak held the text, a dict per event and the result: ~4x what is kept)
  assert peak - kept < len(data) / 2, (peak, kept, len(data))

def test_jsonl_line_whose_type_is_not_a_string_is_skipped():
  # damaged gzip hands over the text right up to the damage: garbage such as this reaches the reader
  t = parse(encode(header()).encode() + b'\n{"type": [1]}\n{"type": {"a": 1}}\n' + encode(to_json(Marker("m", 1))).encode() + b"\n")
  assert [e.name for e in t.events] == ["m"] and [w.line for w in t.warnings[:2]] == [2, 3]
