"""What the server refuses (docs/server-api.md, Security): a foreign Host (421), a missing or wrong token (401), a
foreign websocket Origin, paths out of the frontend folder; and malformed frames on /ws and /ingest, which get an
error reply on a connection that stays open, in a server that keeps serving."""
from __future__ import annotations
import json, socket
import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from server_kit import Page, Server, wait_for

@pytest.fixture(scope="module")
def server(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("sec")
  s = Server(["serve", "--no-browser", "--state-file", str(tmp / "state.json")], tmp)
  yield s
  assert s.alive(), "the server died"
  s.stop()

def plain(server: Server) -> httpx.Client: return httpx.Client(base_url=server.base, trust_env=False, timeout=10)

def test_foreign_host_is_421(server):
  for host in ("evil.example", f"evil.example:{server.port}", f"127.0.0.1:{server.port + 1}", "localhost"):
    r = server.get("/api/runs", headers={"Host": host})
    assert r.status_code == 421, host
  for host in (f"localhost:{server.port}", f"127.0.0.1:{server.port}"):
    assert server.get("/api/runs", headers={"Host": host}).status_code == 200

def test_token_required_then_cookie(server):
  c = plain(server)
  assert c.get("/api/runs").status_code == 401
  assert c.get("/").status_code == 401
  assert c.get("/api/runs", headers={"X-Tinyviz-Token": "x" * 32}).status_code == 401
  assert c.get("/api/runs", params={"token": server.token}).status_code == 200
  r = c.get("/", params={"token": server.token, "view": "1"})
  assert r.status_code == 303 and r.headers["location"] == "/?view=1"
  cookie = r.headers["set-cookie"]
  assert f"tinyviz_token_{server.port}={server.token}" in cookie and "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
  assert c.get("/api/runs").status_code == 200  # the cookie does it now
  assert c.get("/").status_code == 200

def ws(server: Server, path: str, host: str = "127.0.0.1", **kw):
  """A websocket to the server whose Host header names `host` (the socket goes to 127.0.0.1 whatever the name)."""
  sock = socket.create_connection(("127.0.0.1", server.port))
  return connect(f"ws://{host}:{server.port}{path}", sock=sock, proxy=None, open_timeout=10, **kw)

def test_websocket_origin_host_token(server):
  tok = {"X-Tinyviz-Token": server.token}
  for origin, status in (("http://evil.example", 403), (f"http://localhost:{server.port + 1}", 403), ("null", 403)):
    with pytest.raises(InvalidStatus) as e: ws(server, "/ws", origin=origin, additional_headers=tok)
    assert e.value.response.status_code == status
  with pytest.raises(InvalidStatus) as e: ws(server, "/ws", origin=f"http://127.0.0.1:{server.port}")
  assert e.value.response.status_code == 401
  with pytest.raises(InvalidStatus) as e: ws(server, "/ingest", host="evil.example", additional_headers=tok)
  assert e.value.response.status_code == 421
  with ws(server, "/ws", host="localhost", origin=f"http://localhost:{server.port}", additional_headers=tok) as c:
    assert json.loads(c.recv(timeout=10))["type"] == "runs"

@pytest.mark.parametrize("path", ["/../pyproject.toml", "/%2e%2e/pyproject.toml", "/..%2fpyproject.toml", "/graph/..%2f..%2fserver%2fapp.py",
                                  "/%2fetc%2fpasswd", "/.hidden", "/common/%00x.js", "/..\\pyproject.toml"])
def test_no_path_out_of_the_frontend(server, path):
  r = server.get(path)
  assert r.status_code == 404 and b"[build-system]" not in r.content and b"root:" not in r.content

def test_malformed_browser_frames(server):
  page = Page(server)
  wait_for(lambda: any(m["type"] == "runs" for m in page.messages), what="runs message")
  bad = ["not json", "[1, 2]", json.dumps({"type": "subscribe"}), json.dumps({"type": "resume", "run": "1", "seq": 0}),
         json.dumps({"type": "resume", "run": 999, "seq": 0}), b"\x00\x01binary"]
  for frame in bad: page.send(frame)
  wait_for(lambda: sum(m["type"] == "error" for m in page.messages) == len(bad), what="an error per bad frame")
  assert all(m["message"] for m in page.messages if m["type"] == "error")
  assert not page.closed and server.get("/api/runs").status_code == 200
  page.close()

def test_malformed_ingest_frames(server):
  tok = {"X-Tinyviz-Token": server.token}
  with ws(server, "/ingest", additional_headers=tok) as c:
    hello = json.loads(c.recv(timeout=10))
    assert hello["type"] == "ack" and hello["n"] == 0
    for frame in ("garbage", json.dumps({"type": "run"}), json.dumps([{"type": "span"}]), b"\x01\x02"):
      c.send(frame)
      reply = json.loads(c.recv(timeout=10))
      assert reply["type"] == "error" and reply["message"], frame
    run = {"type": "run", "script": "/x/fake.py", "argv": ["fake.py"], "start_time": 1.0, "clock_ns": 10, "pid": 1, "version": "t", "mode": "viz"}
    good = {"type": "marker", "name": "m", "ts_ns": 20}
    c.send(json.dumps([run, good, {"type": "uop", "id": 1, "op": "X", "dtype": "d", "arg": "a", "src": [7]}, {"type": "nonsense"}, 5]))
    reply = json.loads(c.recv(timeout=10))
    assert reply["type"] == "ack" and reply["n"] == 5 and reply["run"] >= 1
  runs = server.json("/api/runs")
  r = runs[-1]
  assert r["name"] == "fake.py (pid 1)" and r["n_events"] == 5 and len(r["warnings"]) == 3
  assert server.json(f"/api/runs/{r['id']}/tracks")["markers"] == [{"name": "m", "ts_ns": 20}]
