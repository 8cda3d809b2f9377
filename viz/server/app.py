"""The viz server's HTTP and websocket endpoints (docs/server-api.md): the route table first, then one function
per endpoint, then the security wrapper every request passes (Host, token, Origin)."""
from __future__ import annotations
import contextlib, hmac, json, math, mimetypes, os
from importlib import resources
from pathlib import Path
from typing import Any, AsyncIterator, Callable
from urllib.parse import urlencode
from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket
from profiler.tracefile import encode
from viz.server.compare_api import compare_runs, kernel_passes
from viz.server.hub import Hub
from viz.server.run import Run
from viz.server.runstore import RunLoader
from viz.server.schedule import schedule_json
from viz.server.timeline import Track

def routes() -> list[Route | WebSocketRoute]:
  return [
    Route("/api/runs", runs),
    Route("/api/runs/{run:int}/contexts", contexts),
    Route("/api/runs/{run:int}/contexts/{ctx:int}/schedule", schedule),
    Route("/api/runs/{run:int}/patterns", patterns),
    Route("/api/runs/{run:int}/rewrites/{rw:int}/step/{k:int}", step),
    Route("/api/runs/{run:int}/kernels/{kernel:int}", kernel),
    Route("/api/runs/{run:int}/uops/{uop}", uop),  # ids of nodes the engine never interned are negative
    Route("/api/runs/{run:int}/tracks", tracks),
    Route("/api/runs/{run:int}/spans", spans),
    Route("/api/runs/{run:int}/spans/{track}/{index:int}", span),
    Route("/api/runs/{run:int}/counters/{counter:int}", counter),
    Route("/api/runs/{run:int}/flows", flows),
    Route("/api/runs/{run:int}/file", trace_file),
    Route("/api/compare", compare_endpoint),
    Route("/api/runs/{run:int}/kernels/{kernel:int}/passes", kernel_passes_endpoint),
    WebSocketRoute("/ws", browser_ws),
    WebSocketRoute("/ingest", ingest_ws),
  ]

# *** endpoints ***

class NotFound(Exception): pass

def _hub(request: Request | WebSocket) -> Hub: return request.app.state.hub

def _run(request: Request) -> Run:
  run = _hub(request).runs.get(request.path_params["run"])
  if run is None: raise NotFound(f"no run {request.path_params['run']}")
  return run

def _json_text(text: str) -> Response: return Response(text, media_type="application/json")

def _json(obj: Any) -> Response:
  """Strict JSON (a NaN from a sloppy Chrome trace becomes null; browsers reject NaN)."""
  return _json_text(encode(obj))

async def runs(request: Request) -> Response:
  return _json([r.summary() for r in _hub(request).runs.values()])

async def contexts(request: Request) -> Response:
  return _json(_run(request).contexts_json())

async def schedule(request: Request) -> Response:
  run, ctx = _run(request), request.path_params["ctx"]
  if ctx not in run.schedules: raise NotFound(f"run {run.id} has no schedule for context {ctx}")
  return _json(schedule_json(run, ctx))

async def patterns(request: Request) -> Response:
  """The patterns the trace captured from one file (?file=, as a pattern's `file`), by line: the table around a match's pattern."""
  run, file = _run(request), request.query_params.get("file")
  if not file: raise NotFound("which file? give ?file=PATH (a pattern's file)")
  found = sorted((p for p in run.patterns.values() if p["file"] == file), key=lambda p: (p["line"], p["id"]))
  if not found: raise NotFound(f"run {run.id} captured no pattern from {file!r}")
  return _json({"file": file, "patterns": found})

async def step(request: Request) -> Response:
  run, rw, k = _run(request), request.path_params["rw"], request.path_params["k"]
  if rw not in run.rewrites: raise NotFound(f"run {run.id} has no rewrite {rw}")
  n = len(run.rewrites[rw]["matches"])
  if not 0 <= k <= n: raise NotFound(f"rewrite {rw} has steps 0..{n}, not {k}")
  return _json_text(run.step_json(rw, k))

async def kernel(request: Request) -> Response:
  run, kid = _run(request), request.path_params["kernel"]
  if kid not in run.kernels: raise NotFound(f"run {run.id} has no kernel {kid}")
  return _json(run.kernel_json(kid, full=True))

async def uop(request: Request) -> Response:
  run = _run(request)
  try: uid = int(request.path_params["uop"])
  except ValueError: raise NotFound(f"not a uop id: {request.path_params['uop']!r}") from None
  if uid not in run.uops.rows: raise NotFound(f"run {run.id} has no uop {uid}")
  return _json(run.uop_json(uid))

async def tracks(request: Request) -> Response:
  return _json(_run(request).timeline.tracks_json())

def _track(run: Run, ref: str | None) -> Track:
  if ref is None: raise NotFound("which track? give ?track=ID")
  if (t := run.timeline.find(ref)) is None: raise NotFound(f"run {run.id} has no track {ref!r}")
  return t

def _num(v: str | None, what: str) -> float | None:
  if v is None or v == "": return None
  try: x = float(v)
  except ValueError: x = math.nan
  if not math.isfinite(x): raise NotFound(f"{what} must be a finite number of ns, not {v[:40]!r}")
  return x

async def spans(request: Request) -> Response:
  run, q = _run(request), request.query_params
  t = _track(run, q.get("track"))
  body = run.timeline.chunk(t, _num(q.get("start"), "start"), _num(q.get("end"), "end"))
  return Response(body, media_type="application/octet-stream")

async def span(request: Request) -> Response:
  run = _run(request)
  t = _track(run, request.path_params["track"])
  i = request.path_params["index"]
  if not 0 <= i < len(t): raise NotFound(f"track {t.id} has spans 0..{len(t) - 1}, not {i}")
  return _json(run.timeline.span_json(t, i))

async def counter(request: Request) -> Response:
  run, cid = _run(request), request.path_params["counter"]
  if not 0 <= cid < len(run.timeline.counters): raise NotFound(f"run {run.id} has no counter {cid}")
  return _json(run.timeline.counter_json(cid))

async def flows(request: Request) -> Response:
  return _json(_run(request).timeline.flows)

def _run_param(request: Request, key: str) -> Run:
  v = request.query_params.get(key)
  if v is None or not (v.isascii() and v.isdigit() and len(v) < 12): raise NotFound(f"give ?{key}=RUN_ID (a run id from /api/runs)")
  if (run := _hub(request).runs.get(int(v))) is None: raise NotFound(f"no run {v}")
  return run

async def compare_endpoint(request: Request) -> Response:
  return _json(compare_runs(_run_param(request, "a"), _run_param(request, "b")))

async def kernel_passes_endpoint(request: Request) -> Response:
  run, kid = _run(request), request.path_params["kernel"]
  if kid not in run.kernels: raise NotFound(f"run {run.id} has no kernel {kid}")
  return _json(kernel_passes(run, kid))

async def trace_file(request: Request) -> Response:
  run = _run(request)
  if not run.path or not os.path.isfile(run.path): raise NotFound(f"run {run.id} has no trace file")
  return FileResponse(run.path, media_type="application/octet-stream", filename=os.path.basename(run.path))

async def browser_ws(ws: WebSocket) -> None: await _hub(ws).browser(ws)

async def ingest_ws(ws: WebSocket) -> None: await _hub(ws).ingest(ws)

PLACEHOLDER = """<!doctype html><meta charset="utf-8"><title>tinyviz</title>
<body style="font: 14px system-ui; margin: 2em"><h1>tinyviz</h1>
<p>The server is running, but the frontend (<code>viz/frontend/index.html</code>) is not there yet.</p>
<p>The API answers: <a href="/api/runs">/api/runs</a>.</p>"""
# what FileResponse sends as Content-Type: a module script needs a JavaScript type, whatever the system's tables say
for _ext, _type in {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".wasm": "application/wasm"}.items():
  mimetypes.add_type(_type, _ext)

def frontend_root() -> Path:
  """viz/frontend as installed: package data (pip install .) or the checkout."""
  return Path(str(resources.files("viz") / "frontend")).resolve()

class Frontend(StaticFiles):
  """The frontend's own files and nothing else: starlette's StaticFiles (no `..`, no link out of the folder, ETags),
  and no hidden file, backslash or NUL in the path. Revalidated on every load (no-cache): an edit shows on reload."""
  async def get_response(self, path: str, scope: Scope) -> Response:
    rel = scope["path"].lstrip("/") or "index.html"
    if any(p in ("", ".", "..") or p.startswith(".") or "\\" in p or "\0" in p for p in rel.split("/")):
      raise NotFound(f"no file {rel!r}")
    try: response = await super().get_response(path, scope)
    except HTTPException as e:
      if e.status_code != 404: raise
      if rel == "index.html": return HTMLResponse(PLACEHOLDER)
      raise NotFound(f"no file {rel!r}") from None
    response.headers["Cache-Control"] = "no-cache"
    return response

async def not_found(request: Request, exc: Exception) -> Response:
  return JSONResponse({"error": str(exc)}, status_code=404)

# *** security: every request, HTTP and websocket ***

class Guard:
  """Host must be ours (else 421: DNS rebinding); the token must come with the request, as the cookie, ?token=
  or X-Tinyviz-Token (else 401); a page visit with ?token= sets the cookie and redirects to the URL without it;
  a websocket's Origin, when present, must be ours (else refused: cross-site websocket hijacking)."""
  def __init__(self, app: ASGIApp, token: str, port: int, hosts: set[str] | None):
    self.app, self.token, self.port = app, token, port
    self.hosts = hosts  # accepted Host names; None: any (a wildcard bind, where the token is the guard)
    self.cookie = f"tinyviz_token_{port}"  # per port: cookies ignore ports, and two servers must not log each other out

  def host_ok(self, host: str | None) -> bool:
    if not host: return False
    name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if port != str(self.port): return False
    return self.hosts is None or name.lower() in self.hosts

  def token_of(self, conn: HTTPConnection) -> str | None:
    cookies = conn.cookies
    return conn.headers.get("x-tinyviz-token") or conn.query_params.get("token") or cookies.get(self.cookie) or cookies.get("tinyviz_token")

  async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] not in ("http", "websocket"): return await self.app(scope, receive, send)
    conn = HTTPConnection(scope)
    host = conn.headers.get("host")
    if not self.host_ok(host):
      return await _deny(scope, receive, send, 421, f"unknown Host {host!r}: this server answers to 127.0.0.1:{self.port}")
    if scope["type"] == "websocket" and (origin := conn.headers.get("origin")) is not None and origin.lower() != f"http://{host.lower()}":
      return await _deny(scope, receive, send, 403, f"websocket Origin {origin!r} is not this server's")
    token = self.token_of(conn)
    if token is None or not hmac.compare_digest(token.encode(), self.token.encode()):
      return await _deny(scope, receive, send, 401, "missing or wrong token: open the URL the server printed")
    if scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and not scope["path"].startswith("/api/") \
       and "token" in conn.query_params:
      rest = urlencode([(k, v) for k, v in conn.query_params.multi_items() if k != "token"])
      # only ever a path on this server: "//host/" or "/\\host/" would send the browser (and the cookie's token) away
      here = "/" + scope["path"].lstrip("/\\")
      response = Response(status_code=303, headers={"Location": here + (f"?{rest}" if rest else "")})
      response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict", path="/")
      return await response(scope, receive, send)
    await self.app(scope, receive, send)

async def _deny(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
  if scope["type"] == "http":
    return await JSONResponse({"error": message}, status_code=status)(scope, receive, send)
  await receive()  # websocket.connect
  if "websocket.http.response" in scope.get("extensions", {}):
    await send({"type": "websocket.http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "websocket.http.response.body", "body": json.dumps({"error": message}).encode()})
  else: await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})

def make_app(hub: Hub, token: str, port: int, hosts: set[str] | None, frontend_dir: Path | None = None,
             on_shutdown: Callable[[], None] | None = None) -> ASGIApp:
  @contextlib.asynccontextmanager
  async def lifespan(app: Starlette) -> AsyncIterator[None]:
    yield
    hub.close()
    if on_shutdown is not None: on_shutdown()  # here, not after serve(): uvicorn re-raises SIGTERM once it returns
  files = Frontend(directory=(frontend_dir or frontend_root()).resolve(), html=True, check_dir=False)
  app = Starlette(routes=[*routes(), Mount("/", files)], exception_handlers={NotFound: not_found}, lifespan=lifespan)
  app.state.hub = hub
  return Guard(RunLoader(app, hub), token, port, hosts)  # RunLoader: a run that was let go is read again first
