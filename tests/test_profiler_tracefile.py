import os, signal, subprocess, sys
import pytest
from profiler.events import Marker, Run, RunEnd, Span, UOpDef, Rewrite, to_json, header
from profiler.load import load, parse
from profiler.recorder import Recorder
from profiler.tracefile import TraceError, TraceTail, TraceWriter, encode, read_jsonl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def lines(*objs) -> bytes: return b"".join(encode(o).encode() + b"\n" for o in objs)

def test_recorder_file_reads_back(tmp_path):
  path = str(tmp_path / "t.jsonl")
  rec = Recorder("profile", path=path)
  for i in range(100): rec.span("CPU", f"k{i}", i * 10, i * 10 + 5, "kernel", {"i": i})
  rec.counter("CPU", "mem", 3, float("nan"))  # non-finite: written as strict JSON, skipped on read with a warning
  rec.close()
  t = load(path)
  assert isinstance(t.events[0], Run) and isinstance(t.events[-1], RunEnd) and t.kind == "tinyviz"
  assert [s.name for s in t.events if isinstance(s, Span)] == [f"k{i}" for i in range(100)]
  assert "NaN" not in open(path).read()
  assert len(t.warnings) == 1 and "counter.value" in str(t.warnings[0])

def test_truncated_last_line_is_reported(tmp_path):
  data = lines(header(), to_json(Marker("a", 1)), to_json(Marker("b", 2)))
  t = read_jsonl(data[:-7])
  assert [e.name for e in t.events] == ["a"]
  (w,) = [w for w in t.warnings if "truncated last line" in w.message]
  assert w.line == 3 and w.offset == data.index(b'{"type":"marker","name":"b"')
  assert any("no run_end" in str(w) for w in t.warnings)

def test_bad_lines_are_skipped_with_their_line_and_offset():
  good = lines(header(), to_json(Marker("a", 1)))
  data = good + b"{oops\n" + lines({"type": "marker", "name": 3, "ts_ns": 1}, {"type": "future_event"}, to_json(Marker("z", 9)))
  t = read_jsonl(data)
  assert [e.name for e in t.events] == ["a", "z"]
  first = t.warnings[0]
  assert first.line == 3 and first.offset == len(good) and "invalid JSON" in first.message
  assert "marker.name: expected str" in str(t.warnings[1]) and "unknown event type 'future_event'" in str(t.warnings[2])

def test_dangling_uop_references_are_refused():
  u = lambda i, src=(): to_json(UOpDef(i, "CONST", "int", str(i), src))
  data = lines(header(), u(1), u(2, (1,)), u(3, (99,)), to_json(Rewrite(1, None, "r", ("a", 1), 1, [(None, 1, 3)], 2, 0, 1)))
  t = read_jsonl(data)
  assert [e.id for e in t.events] == [1, 2]
  assert "uop 3 refers to an undefined uop" in str(t.warnings[0]) and "rewrite 1" in str(t.warnings[1])

@pytest.mark.parametrize("data,msg", [(b"", "empty"), (b"   \n", "empty"), (b'"just a string"', "not a Chrome trace"),
  (lines({"type": "header", "format": "tinyviz-trace", "version": 99}), "newer"), (b"\x00\x01garbage", "not a Chrome trace"),
  (lines({"type": "header", "format": "tinyviz-trace", "version": "1"}), "first line is not its header")])
def test_unreadable_inputs_raise_trace_error(data, msg):
  with pytest.raises(TraceError) as e: parse(data)
  assert msg in str(e.value)

def test_tail_follows_a_file_being_written(tmp_path):
  path = str(tmp_path / "live.jsonl")
  w = TraceWriter(path)
  tail = TraceTail(path)
  assert tail.poll() == []
  w.write([to_json(Marker("a", 1))])
  with open(path, "ab") as f: f.write(b'{"type":"marker","na')  # half a line: not yet an event
  assert [e.name for e in tail.poll()] == ["a"]
  with open(path, "ab") as f: f.write(b'me":"b","ts_ns":2}\n')
  assert [e.name for e in tail.poll()] == ["b"]
  w.close()

def test_killed_process_leaves_a_file_that_opens(tmp_path):
  path = str(tmp_path / "killed.jsonl")
  script = f"""
import sys, time
from profiler.recorder import Recorder
rec = Recorder("profile", path={path!r}, flush_interval=0.05)
for i in range(1000): rec.span("CPU", "before", i, i + 1, "kernel", {{}})
rec.marker("flushed", 1)
time.sleep(0.5)  # more than the flush interval
print("ready", flush=True)
rec.marker("never flushed", 2)  # the queue only, then SIGKILL
time.sleep(60)
"""
  p = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
  try:
    assert p.stdout.readline().strip() == "ready"
    os.kill(p.pid, signal.SIGKILL)
  finally: p.wait(10)
  assert p.returncode == -signal.SIGKILL
  t = load(path)
  assert sum(isinstance(e, Span) for e in t.events) == 1000
  assert [e.name for e in t.events if isinstance(e, Marker)][0] == "flushed"
  assert any("no run_end" in str(w) for w in t.warnings)
