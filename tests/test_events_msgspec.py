"""The msgspec event model (issue 16): the lines written are the JSON of docs/trace-format.md, the one decoder takes a
line, an /ingest element or a decoded object alike and words every problem as ours, and a batch decoded in one call
gives what decoding each alone gives."""
import json
import pytest
from profiler import events as ev
from profiler.tracefile import TraceWriter, encode_line, encode_lines, read_jsonl
from test_profiler_events import SAMPLES

def plain(e) -> dict:
  """The event's JSON object built by hand from its fields: what the format says a line holds."""
  return {"type": e.TYPE, **{n: list(v) if isinstance(v, tuple) else v for n, v in ((n, getattr(e, n)) for n in ev.field_names(type(e)))}}

@pytest.mark.parametrize("e", SAMPLES, ids=lambda e: e.TYPE)
def test_a_line_is_the_documented_object_and_decodes_back(e):
  line = encode_line(e)
  assert b"\n" not in line and list(json.loads(line))[0] == "type"
  assert json.loads(json.dumps(plain(e))) == json.loads(line)  # tuples as arrays, every field, defaults included
  assert ev.decode(line) == e == ev.from_json(json.loads(line))

def test_values_msgspec_cannot_write_are_written_as_the_json_module_writes_them():
  e = ev.Span("a\ud800", "k", 1, 2, "kernel", {True: 1, "x": float("nan"), "o": object()})
  got = json.loads(encode_line(e))
  assert got["track"] == "a\ud800" and got["args"]["true"] == 1 and got["args"]["x"] is None and got["args"]["o"].startswith("<object")
  assert encode_lines([e, ev.Marker("m", 3)]).count(b"\n") == 2

@pytest.mark.parametrize("bad,msg", [
  (b'{"type":"span","track":"t","name":"n","start_ns":9223372036854775808,"end_ns":1,"cat":"c"}', "span.start_ns: 9223372036854775808 is beyond what 64 bits hold"),
  (b'{"type":"counter","track":"t","name":"n","ts_ns":1,"value":"3"}', "counter.value: expected number, got str"),
  (b'{"type":"context_begin","id":1,"parent":"p","kind":"k","name":"n","loc":["f",1],"ts_ns":0}', "context_begin.parent: expected int, got str"),
  (b'{"type":"uop","id":1,"op":"ADD","dtype":"int","arg":"","src":[1.5]}', "uop.src: expected int, got float"),
  (b'{"type":"rewrite","id":1,"ctx":null,"name":"r","loc":["f",1],"input":1,"matches":[[1,2]],"output":1,"start_ns":0,"dur_ns":0}',
   "rewrite.matches: expected array of 3, got list"),
  (b'{"type":"marker","ts_ns":1}', "marker: missing field 'name'"), (b'{"ts_ns":1}', "unknown event type None"),
  (b'{"type":"nope"}', "unknown event type 'nope'"), (b'[1]', "expected an object, got list")])
def test_decode_words_each_problem_as_from_json_does(bad, msg):
  for f in (ev.decode, lambda b: ev.from_json(json.loads(b))):
    with pytest.raises(ev.SchemaError) as e: f(bad)
    assert str(e.value) == msg

def test_a_batch_of_texts_gives_what_each_alone_gives():
  u = lambda i, src: encode_line(ev.UOpDef(i, "ADD", "int", "", src))
  texts = [u(1, ()), u(2, (1,)), u(3, (9,)), b'{"type":"marker","name":3,"ts_ns":1}', u(2, ()), u(4, (2,)),
           b'{"type":"marker","name":"a","ts_ns":1} {"type":"marker","name":"b","ts_ns":2}', b'']
  batch = ev.Checker().events(texts)
  one = ev.Checker()
  alone = []
  for t in texts:
    try: alone.append(one.event(t))
    except ev.SchemaError as e: alone.append(str(e))
    except Exception as e: alone.append(f"not JSON: {e}")
  assert [b if not isinstance(b, ev.SchemaError) else str(b) for b in batch] == alone
  assert [type(b).__name__ for b in batch] == ["UOpDef", "UOpDef", "SchemaError", "SchemaError", "SchemaError", "UOpDef", "SchemaError", "SchemaError"]
  assert "undefined uop 9" in str(batch[2]) and "marker.name: expected str" in str(batch[3]) and "defined twice" in str(batch[4])

def test_a_file_read_at_once_names_the_lines_a_line_by_line_read_would(tmp_path):
  w = TraceWriter(str(tmp_path / "t.jsonl"))
  w.write([ev.Marker("a", 1), ev.UOpDef(1, "X", "int", "", (7,)), ev.Marker("b", 2)])
  w.close()
  data = (tmp_path / "t.jsonl").read_bytes()
  t = read_jsonl(data)
  assert [e.TYPE for e in t.events] == ["marker", "marker"]
  at = data.index(b'{"type":"uop"')
  assert str(t.warnings[0]) == f"line 3, byte {at}: uop 1 refers to an undefined uop 7; skipped"
  two = data.replace(b'{"type":"marker","name":"b"', b'\n{"type":"marker","name":"b"').replace(b'\n{"type":"uop"', b' {"type":"uop"')
  t = read_jsonl(two)  # two values on line 2 and a blank line 3: each said where it is
  assert [e.TYPE for e in t.events] == ["marker"] and "line 2" in str(t.warnings[0]) and "extra data" in str(t.warnings[0])
