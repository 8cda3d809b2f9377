import json, os
import pytest
from profiler.chrome import to_chrome, write_chrome
from profiler.events import Counter, Flow, Kernel, Marker, Run, Span
from profiler.load import load, parse
from profiler.tracefile import TraceError

FIX = os.path.join(os.path.dirname(__file__), "fixtures")
TORCH = os.path.join(FIX, "torch_cpu_trace.json")

def spans(t) -> list[Span]: return [e for e in t.events if isinstance(e, Span)]
def X(name: str, ts: float, dur: float = 1, pid=1, tid=1, **kw) -> dict:
  return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, **kw}

def test_torch_trace_imports_every_event():
  raw = json.load(open(TORCH))["traceEvents"]
  t = load(TORCH)
  assert t.kind == "chrome" and t.warnings == []
  xs = [e for e in raw if e["ph"] == "X"]
  got = spans(t)
  assert len(got) == len(xs) and sorted(s.name for s in got) == sorted(e["name"] for e in xs)
  assert sorted(s.start_ns for s in got) == sorted(round(e["ts"] * 1000) for e in xs)
  pname = next(e["args"]["name"] for e in raw if e["ph"] == "M" and e["name"] == "process_name")
  tname = next(e["args"]["name"] for e in raw if e["ph"] == "M" and e["name"] == "thread_name")
  assert f"{pname}/{tname}" in {s.track for s in got}
  assert "Spans/PyTorch Profiler" in {s.track for s in got}  # PyTorch's string pid/tid row
  flows = [e for e in t.events if isinstance(e, Flow)]
  assert len(flows) == sum(e["ph"] in "stf" for e in raw) > 0
  assert {f.id for f in flows if f.phase == "s"} == {f.id for f in flows if f.phase == "f"}
  mem = [e for e in t.events if isinstance(e, Counter)]
  assert len(mem) == sum(e["name"] == "[memory]" for e in raw) > 0 and all(c.name == "memory allocated" for c in mem)

def test_gzip_is_detected_by_bytes_not_name(tmp_path):
  plain = load(TORCH)
  assert load(TORCH + ".gz").events == plain.events
  odd = tmp_path / "looks_plain.json"
  odd.write_bytes(open(TORCH + ".gz", "rb").read())
  assert load(str(odd)).events == plain.events
  odd2 = tmp_path / "not_really.json.gz"
  odd2.write_bytes(open(TORCH, "rb").read())
  assert load(str(odd2)).events == plain.events

def test_sloppy_array_unterminated_trailing_comma_and_empty_object():
  data = b'[' + b",".join(json.dumps(X(f"k{i}", i)).encode() for i in range(3)) + b',{},\n'
  t = parse(data)
  assert [s.name for s in spans(t)] == ["k0", "k1", "k2"]
  assert len(t.warnings) == 1 and "unterminated array" in str(t.warnings[0])
  t = parse(b'[' + json.dumps(X("a", 1)).encode() + b',{},]')
  assert [s.name for s in spans(t)] == ["a"] and t.warnings == []

def test_string_pids_huge_tids_and_metadata_names():
  big = 2**40 + 7
  evs = [X("a", 1, pid="12", tid=str(big)), X("b", 2, pid=12, tid=big), X("c", 3, pid=12.0, tid=3),
         {"ph": "M", "name": "process_name", "pid": 12, "tid": 0, "args": {"name": "GPU 0"}},
         {"ph": "M", "name": "thread_name", "pid": "12", "tid": big, "args": {"name": "stream 7"}}]
  t = parse(json.dumps({"traceEvents": evs}).encode())
  assert [s.track for s in spans(t)] == ["GPU 0/stream 7", "GPU 0/stream 7", "GPU 0/tid 3"]

def test_overlapping_complete_events_are_all_kept():
  evs = [X("k1", 0, 10), X("k2", 5, 10), X("k3", 5, 10), X("k4", 6, 1)]
  t = parse(json.dumps(evs).encode())
  assert sorted((s.name, s.start_ns, s.end_ns) for s in spans(t)) == [("k1", 0, 10000), ("k2", 5000, 15000),
                                                                      ("k3", 5000, 15000), ("k4", 6000, 7000)]

def test_begin_end_pairs_nest_by_time_and_report_strays():
  evs = [{"ph": "E", "ts": 9, "pid": 1, "tid": 1}, {"ph": "B", "name": "outer", "ts": 1, "pid": 1, "tid": 1, "args": {"a": 1}},
         {"ph": "B", "name": "inner", "ts": 2, "pid": 1, "tid": 1}, {"ph": "E", "ts": 3, "pid": 1, "tid": 1, "args": {"b": 2}},
         {"ph": "E", "ts": 12, "pid": 1, "tid": 1}, {"ph": "B", "name": "open", "ts": 20, "pid": 1, "tid": 2},
         X("last", 30, 5, tid=3), {"ph": "b", "name": "req", "cat": "net", "id": "0x1", "ts": 4, "pid": 1},
         {"ph": "e", "name": "req", "cat": "net", "id": "0x1", "ts": 8, "pid": 1}]
  t = parse(json.dumps(evs).encode())
  got = {s.name: (s.start_ns, s.end_ns, s.args) for s in spans(t)}
  assert got["inner"] == (2000, 3000, {"b": 2}) and got["outer"][:2] == (1000, 9000) and got["req"][:2] == (4000, 8000)
  assert got["open"][:2] == (20000, 35000)  # never ended: kept up to the last timestamp
  msgs = " | ".join(map(str, t.warnings))
  assert "no matching begin" in msgs and "never ends" in msgs

def test_counters_markers_and_flows():
  evs = [{"ph": "C", "name": "mem", "ts": 1, "pid": 1, "args": {"used": 10, "free": 5}},
         {"ph": "C", "name": "q", "ts": 2, "pid": 1, "args": {"depth": 3}},
         {"ph": "i", "name": "mark", "ts": 3, "pid": 1, "tid": 1, "s": "g"},
         {"ph": "s", "name": "f", "cat": "c", "id": 7, "ts": 1, "pid": 1, "tid": 1},
         {"ph": "t", "name": "f", "cat": "c", "id": 7, "ts": 2, "pid": 1, "tid": 2},
         {"ph": "f", "name": "f", "cat": "c", "id": 7, "ts": 3, "pid": 1, "tid": 3, "bp": "e"},
         {"ph": "O", "name": "snapshot", "ts": 1, "pid": 1, "id": 1}]
  t = parse(json.dumps(evs).encode())
  assert sorted((c.name, c.value) for c in t.events if isinstance(c, Counter)) == [("mem.free", 5), ("mem.used", 10), ("q", 3)]
  assert [(m.name, m.ts_ns) for m in t.events if isinstance(m, Marker)] == [("mark", 3000)]
  assert [(f.phase, f.id, f.track) for f in t.events if isinstance(f, Flow)] == [("s", "7", "pid 1/tid 1"), ("t", "7", "pid 1/tid 2"), ("f", "7", "pid 1/tid 3")]
  assert any("unsupported phase 'O'" in str(w) for w in t.warnings)

def test_malformed_file_names_offset_and_line_and_keeps_what_came_before():
  good = "[\n" + ",\n".join(json.dumps(X(f"k{i}", i)) for i in range(3)) + ",\n"
  data = (good + '{"ph": "X", "name": oops},\n' + json.dumps(X("after", 9)) + "]").encode()
  t = parse(data)
  assert [s.name for s in spans(t)] == ["k0", "k1", "k2"]
  (w,) = t.warnings
  assert w.line == 5 and w.offset == len(good) + len('{"ph": "X", "name": ') and "stopped reading" in w.message
  assert f"line 5, byte {w.offset}" in str(w)

def test_object_form_with_damage_after_the_events_keeps_them_all():
  data = b'{"displayTimeUnit": "ns", "traceEvents": [' + json.dumps(X("a", 1)).encode() + b'], "otherData": {"x": tru'
  t = parse(data)
  assert [s.name for s in spans(t)] == ["a"] and "invalid JSON" in str(t.warnings[0])

def test_bad_events_are_skipped_one_by_one():
  evs = [X("ok", 1), {"ph": "X", "name": "no ts"}, X("nan", float("nan")), X("str ts", "5"), 42, {"name": "no ph", "ts": 1}]
  t = parse(json.dumps(evs).encode())
  assert sorted(s.name for s in spans(t)) == ["ok", "str ts"]
  msgs = " | ".join(map(str, t.warnings))
  assert "event 1" in msgs and "event 2" in msgs and "event 4: not an object" in msgs and "event 5: no 'ph'" in msgs

def test_not_json_at_all_raises_trace_error():
  with pytest.raises(TraceError) as e: parse(b"hello world")
  assert "byte 0" in str(e.value)

def our_events() -> list:
  run = Run("/x/train.py", ["train.py"], 1.7e9, 5_000_000_123, 42, "0.1.0", "viz")
  k = Kernel(1, "r_16_4", "CPU", "void r_16_4() {}", (16, 1, 1), (4, 1, 1), 2048, 4096, 3, ["LOAD"])
  return [run, k,
          Span("CPU", "r_16_4", 5_000_001_000, 5_000_004_321, "kernel", {"kernel": 1}),
          Span("CPU", "r_16_4", 5_000_002_000, 5_000_003_007, "kernel", {"kernel": 1}),  # overlaps the first
          Span("CPU/copy", "copy 64B", 5_000_005_001, 5_000_005_999, "copy", {"bytes": 64}),
          Span("HOST", "schedule", 5_000_000_500, 5_000_000_900, "schedule", {}),
          Counter("CPU", "memory", 5_000_001_500, 4096.0), Marker("epoch 1", 5_000_006_000)]

def test_round_trip_keeps_every_span_exactly(tmp_path):
  evs = our_events()
  for name in ("out.json", "out.json.gz"):
    path = str(tmp_path / name)
    write_chrome(evs, path)
    t = load(path)
    assert t.warnings == [] and t.kind == "chrome"
    assert spans(t) == [e for e in evs if isinstance(e, Span)]
    assert [e for e in t.events if isinstance(e, Kernel)] == [Kernel(1, "r_16_4", "CPU", "", (16, 1, 1), (4, 1, 1), 2048, 4096, None, [])]
    assert sorted(map(repr, (e for e in t.events if isinstance(e, (Counter, Marker))))) == \
           sorted(map(repr, (e for e in evs if isinstance(e, (Counter, Marker)))))
    assert t.events[0] == evs[0]
  assert open(str(tmp_path / "out.json.gz"), "rb").read(2) == b"\x1f\x8b"

def test_export_shape_for_perfetto():
  doc = to_chrome(our_events())
  evs = doc["traceEvents"]
  procs = {e["args"]["name"]: e["pid"] for e in evs if e.get("name") == "process_name"}
  threads = {e["args"]["name"]: (e["pid"], e["tid"]) for e in evs if e.get("name") == "thread_name"}
  assert set(procs) == {"CPU", "HOST"} and threads["CPU/copy"][0] == threads["CPU"][0] == procs["CPU"]
  ks = [e for e in evs if e["ph"] == "X" and e["cat"] == "kernel"]
  assert len(ks) == 2 and ks[0]["ts"] == 0.877 and ks[0]["dur"] == 3.321 and ks[0]["args"]["kernel_info"]["flops"] == 2048
  assert [e["ph"] for e in evs if e["ph"] in "Ci"] == ["C", "i"]
  json.dumps(doc, allow_nan=False)

def test_torch_trace_round_trips_through_our_export(tmp_path):
  first = load(TORCH)
  write_chrome(first.events, str(tmp_path / "again.json"))
  second = load(str(tmp_path / "again.json"))
  assert spans(second) == spans(first)
  assert len([e for e in second.events if isinstance(e, Flow)]) == len([e for e in first.events if isinstance(e, Flow)])
