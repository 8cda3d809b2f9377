"""Running the server: load the traces given, bind a port, print the URL, write the state file that `VIZ=1`
scripts use to find this server, open the browser, serve until Ctrl+C (or until idle, when asked)."""
from __future__ import annotations
import asyncio, gc, ipaddress, json, os, secrets, socket, sys, tempfile, threading, time
from dataclasses import dataclass
from typing import Any
import uvicorn
from profiler.load import group_paths, load_group
from profiler.tracefile import TraceError
from profiler.safefile import private_dir
from viz.server.app import make_app
from viz.server.hub import Hub
from viz.server.run import Run

# one websocket message, either way: a bigger one closes that connection (1009) before it is read, as decoding it would
# stall every page (a 32 MiB frame took 33 s); the engine's sender cuts its frames at 1 MiB (profiler/live.py)
WS_MAX_SIZE = 16 << 20

@dataclass
class Options:
  files: list[str]
  host: str = "127.0.0.1"
  port: int = 0
  open_browser: bool = True
  state_file: str | None = None  # written once listening; removed at exit
  idle_exit_s: float = 0         # 0: serve until Ctrl+C
  start: str = ""                # a view to open first: the URL's fragment ("#/compare?a=1&b=2")
  spool_mb: float | None = None  # the size limit of the server's copies of live runs (None: TINYVIZ_SPOOL_MB)

def is_loopback(host: str) -> bool:
  if host == "localhost": return True
  try: return ipaddress.ip_address(host).is_loopback
  except ValueError: return False

def allowed_hosts(host: str) -> set[str] | None:
  if host in ("0.0.0.0", "::", ""): return None  # any name may reach a wildcard bind: only the token guards it
  names = {"127.0.0.1", "localhost", "[::1]", host.lower()}
  return names | ({f"[{host.lower()}]"} if ":" in host else set())

def bind(host: str, port: int) -> socket.socket:
  family = socket.AF_INET6 if ":" in host else socket.AF_INET
  # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP (else Nagle + delayed ACK add
  # ~40 ms to every response on a kept-alive connection)
  sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
  sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
  sock.bind((host, port))
  sock.listen(2048)
  sock.set_inheritable(True)
  return sock

def load_runs(hub: Hub, files: list[str]) -> int:
  """Adds a run per readable file (tinygrad's rewrites.pkl + profile.pkl pair: one run); says what it skipped.
  Returns how many files could not be opened."""
  bad = 0
  for group in group_paths(files):
    path = " + ".join(group)
    try: trace = load_group(group)
    except (OSError, TraceError) as e:
      print(f"tinyviz: {path}: {e}", file=sys.stderr)
      bad += 1
      continue
    run = Run.from_trace(hub.new_run_id(), os.path.abspath(group[0]), trace)
    if len(group) > 1: run.name = " + ".join(os.path.basename(p) for p in group)
    hub.add_run(run)
    hub.store.add(run, [os.path.abspath(p) for p in group])
    note = f", {len(trace.warnings)} warnings (listed in the page)" if trace.warnings else ""
    print(f"tinyviz: run {run.id}: {path} ({trace.kind}, {run.n_events} events{note})", file=sys.stderr)
    del trace  # the events, once indexed: not held while the next file is read
    hub.store.sweep()  # many files at start: only the last few stay indexed, the others are read again when viewed
  return bad

def open_browser(url: str) -> bool:
  """Opens url in the default browser unless BROWSER=none or there is no display; never blocks."""
  if os.environ.get("BROWSER", "").lower() in ("none", "false", "0"): return False
  if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")): return False
  import webbrowser
  threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
  return True

def write_state(path: str, state: dict[str, Any]) -> None:
  """The state file holds the token: readable by this user only; written whole (rename) so readers never see half."""
  os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
  tmp = f"{path}.{os.getpid()}.tmp"
  fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
  with os.fdopen(fd, "w") as f: json.dump(state, f)
  os.replace(tmp, path)

def remove_state(path: str) -> None:
  try:
    with open(path) as f:
      if json.load(f).get("pid") != os.getpid(): return  # a newer server took over the file
    os.remove(path)
  except (OSError, ValueError): pass

def spool_dir() -> str:
  base = os.environ.get("TINYVIZ_TRACE_DIR") or private_dir(os.path.join(tempfile.gettempdir(), "tinyviz"))
  return private_dir(os.path.join(base, f"server-{os.getpid()}"))

def serve(opts: Options) -> int:
  try: hub = Hub(spool_dir())
  except OSError as e:
    print(f"tinyviz: cannot make the server's run folder: {e}", file=sys.stderr)
    return 1
  if opts.spool_mb is not None: hub.store.spool_bytes = int(opts.spool_mb * 2**20)
  if load_runs(hub, opts.files) and not hub.runs and opts.files: return 1
  # the index of a run is millions of small long-lived tuples: collecting the young generation less often, and
  # leaving what was loaded at start out of collections, keeps the collector from rescanning it on every batch
  gc.freeze()
  gc.set_threshold(50_000, 20, 100)
  try: sock = bind(opts.host, opts.port)
  except OSError as e:
    print(f"tinyviz: cannot listen on {opts.host}:{opts.port}: {e}", file=sys.stderr)
    return 1
  port = sock.getsockname()[1]
  if not is_loopback(opts.host):
    print(f"tinyviz: warning: listening on {opts.host}, reachable from other machines; anyone with the URL's token "
          "can read these traces", file=sys.stderr)
  token = secrets.token_urlsafe(24)
  shown = "127.0.0.1" if opts.host in ("0.0.0.0", "") else ("[::1]" if opts.host == "::" else
          (f"[{opts.host}]" if ":" in opts.host else opts.host))
  url = f"http://{shown}:{port}/?token={token}{opts.start}"
  app = make_app(hub, token, port, allowed_hosts(opts.host),
                 on_shutdown=(lambda: remove_state(opts.state_file)) if opts.state_file else None)  # type: ignore[arg-type]
  config = uvicorn.Config(app, log_level="warning", access_log=False, ws_max_size=WS_MAX_SIZE, ws_per_message_deflate=False,
                          lifespan="on", timeout_graceful_shutdown=1)
  server = uvicorn.Server(config)
  print(f"tinyviz: serving at {url}", flush=True)
  if opts.state_file:
    write_state(opts.state_file, {"pid": os.getpid(), "host": shown.strip("[]"), "port": port, "token": token, "url": url})
  if opts.open_browser and not open_browser(url): print("tinyviz: open that URL in a browser (no display here)", flush=True)

  async def main() -> None:
    watcher = asyncio.create_task(_idle_watch(server, hub, opts.idle_exit_s)) if opts.idle_exit_s > 0 else None
    try: await server.serve(sockets=[sock])
    finally:
      if watcher: watcher.cancel()
  try: asyncio.run(main())
  except KeyboardInterrupt: pass
  finally:
    hub.close()
    if opts.state_file: remove_state(opts.state_file)
  return 0

async def _idle_watch(server: uvicorn.Server, hub: Hub, idle_s: float) -> None:
  """Stops a server started by VIZ=1 once no page and no script has been connected for idle_s seconds."""
  while not server.should_exit:
    await asyncio.sleep(min(idle_s, 5.0))
    if not hub.browsers and not hub.n_ingest and time.monotonic() - hub.last_activity > idle_s:
      server.should_exit = True
