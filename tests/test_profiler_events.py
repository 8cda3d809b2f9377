import json, os, re
import pytest
from profiler import events as ev
from profiler.tracefile import encode, read_jsonl

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "trace-format.md")

SAMPLES = [ev.Run("/a.py", ["a.py", "-x"], 1.5, 10, 7, "0.1.0", "viz"), ev.RunEnd(99),
           ev.UOpDef(3, "ADD", "dtypes.int", "None", (1, 2)), ev.PatternDef(1, "/s.py", 4, "(UPat(), fn)"),
           ev.ContextBegin(1, None, "kernel", "E_4", ("/r.py", 3), 5), ev.ContextEnd(1, 6),
           ev.Rewrite(1, 1, "simplify", ("/r.py", 9), 3, [(1, 3, 1), (None, 4, 5)], 1, 10, 20),
           ev.Kernel(1, "E_4", "CPU", "void E_4(){}", (4, 1, 1), (), 4, 32, None, ["STORE"]),
           ev.ContextBegin(2, None, "schedule", "train_step · a.py:9", ("/a.py", 9), 7, "(4,)"),
           ev.Schedule(2, [{"kind": "kernel", "ast": 3, "kernel": 1, "reads": [1], "writes": [2]}]),
           ev.TrackDef("CPU", "device"), ev.Span("CPU", "E_4", 1, 2, "kernel", {"kernel": 1}), ev.Counter("CPU", "memory", 3, 1024.0),
           ev.Marker("epoch", 4), ev.Flow("7", "s", "CPU", "f", "c", 5)]

def test_every_event_type_has_a_sample():
  assert {type(s) for s in SAMPLES} == set(ev.EVENT_TYPES.values())

@pytest.mark.parametrize("e", SAMPLES, ids=lambda e: e.TYPE)
def test_json_round_trip(e):
  assert ev.from_json(json.loads(encode(ev.to_json(e)))) == e

@pytest.mark.parametrize("bad,msg", [
  ({"type": "uop", "id": 1, "op": "ADD", "dtype": "int", "arg": "", "src": [1.5]}, "uop.src: expected int"),
  ({"type": "uop", "id": True, "op": "ADD", "dtype": "int", "arg": "", "src": []}, "uop.id: expected int"),
  ({"type": "rewrite", "id": 1, "ctx": None, "name": "r", "loc": ["f", 1], "input": 1, "matches": [[1, 2]], "output": 1,
    "start_ns": 0, "dur_ns": 0}, "rewrite.matches: expected array of 3"),
  ({"type": "span", "track": "t", "name": "n", "start_ns": 0, "cat": "c"}, "missing field 'end_ns'"),
  ({"type": "nope"}, "unknown event type"), ({"type": ["span"]}, "unknown event type"), ([1, 2], "expected an object")])
def test_schema_errors_say_what_is_wrong(bad, msg):
  with pytest.raises(ev.SchemaError) as e: ev.from_json(bad)
  assert msg in str(e.value)

def test_optional_and_extra_fields():
  assert ev.from_json({"type": "span", "track": "t", "name": "n", "start_ns": 0, "end_ns": 1, "cat": "c", "new": 1}).args == {}

def test_docs_describe_every_event_and_field():
  doc = open(DOC).read()
  sections = {m.group(1): m.group(0) for m in re.finditer(r"^### (.*?)\n(.*?)(?=^##)", doc, re.S | re.M)}
  for tag, cls in ev.EVENT_TYPES.items():
    (text,) = [body for head, body in sections.items() if f"`{tag}`" in head]
    for name in ev.field_names(cls): assert f"`{name}`" in text, f"{tag}.{name} is not documented"

def test_docs_example_is_a_valid_trace():
  doc = open(DOC).read()
  block = re.search(r"## A short example\n\n```\n(.*?)```", doc, re.S).group(1)
  t = read_jsonl(block.encode())
  assert t.warnings == [] and [e.TYPE for e in t.events][0] == "run" and t.events[-1].TYPE == "run_end"

def test_checker_checks_references_and_schedule_items():
  c = ev.Checker()
  c.event({"type": "uop", "id": 1, "op": "BUFFER", "dtype": "dtypes.float", "arg": "4", "src": []})
  good = {"kind": "kernel", "ast": 1, "kernel": 3, "reads": [1], "writes": [1]}
  assert c.event({"type": "schedule", "ctx": 1, "items": [good]}).items == [good]
  for bad, why in [({**good, "kind": "sink"}, "kind 'sink'"), ({**good, "reads": [7]}, "undefined uop 7"), (5, "expected object"),
                   ({**good, "kernel": "3"}, "kernel must be an id")]:
    with pytest.raises(ev.SchemaError, match=why): c.event({"type": "schedule", "ctx": 1, "items": [bad]})
  with pytest.raises(ev.SchemaError, match="undefined uop 9"): c.event({"type": "uop", "id": 2, "op": "ADD", "dtype": "d", "arg": "", "src": [1, 9]})
  with pytest.raises(ev.SchemaError, match="defined twice"): c.event({"type": "uop", "id": 1, "op": "X", "dtype": "d", "arg": "", "src": []})
  with pytest.raises(ev.SchemaError, match="src"): c.event({"type": "uop", "id": 3, "op": "X", "dtype": "d", "arg": "", "src": [True]})
  assert c.event({"type": "track", "name": "a.json//host:CPU/python3", "kind": "thread", "process": "a.json//host:CPU"}).process == "a.json//host:CPU"
  with pytest.raises(ev.SchemaError, match="process 'b' is not the start of its name"): c.event({"type": "track", "name": "a/t", "kind": "thread", "process": "b"})
