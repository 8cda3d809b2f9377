"""VIZ=1: stream a running script's events to the viz server, live, without ever making the engine wait.

The recorder writes every event to the trace file anyway; the trace file is the send queue. A sender thread
finds this user's server (or starts one, as its own process, which outlives the script), reads the lines
the recorder appended, sends them over the `/ingest` websocket in frames of whole lines and counts the
server's acks. A slow server only makes the sender fall behind in the file; a lost connection is reopened
and the server's hello says how many events it has, so exactly the rest is sent again. Without a trace file
(a read-only disk) the lines are kept in memory instead. When the script ends the sender gets a few seconds
to finish; whatever it could not send is still in the trace file, whose path is printed.

Stdlib + websockets only: the engine never imports the server (it is started with `python -m viz serve`).
"""
from __future__ import annotations
import atexit, json, math, os, secrets, socket, subprocess, sys, threading, time
from collections import deque
from typing import Any
from urllib.parse import parse_qs, urlsplit
from profiler.tracefile import encode

FRAME_BYTES = 1 << 20     # one websocket frame: about 7k events
WINDOW_BYTES = 8 << 20    # sent but not yet acked
def env_seconds(name: str, default: float) -> float:
  """A number of seconds from the environment; a bad value is named on stderr and the default used (the user's
  script must not fail to import over a viewer setting)."""
  v = os.environ.get(name)
  try: x = float(v) if v not in (None, "") else default
  except ValueError: x = math.nan
  if not (math.isfinite(x) and x >= 0):
    print(f"tinyviz: {name}={v!r} is not a number of seconds; using {default:g}", file=sys.stderr)
    return default
  return x

EXIT_WAIT_S = env_seconds("TINYVIZ_EXIT_WAIT", 10.0)
START_WAIT_S = 20.0
IDLE_EXIT_S = f"{env_seconds('TINYVIZ_IDLE_EXIT', 3600.0):g}"

def state_dir() -> str:
  """Where this user's server says where it listens: TINYVIZ_SERVER_DIR, else ~/.cache/tinyviz/server
  ($XDG_CACHE_HOME for ~/.cache). Holds server.json (port, token, pid), server.lock and server.log."""
  if d := os.environ.get("TINYVIZ_SERVER_DIR"): return d
  return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tinyviz", "server")

def state_path() -> str: return os.path.join(state_dir(), "server.json")

def alive(pid: int) -> bool:
  try: os.kill(pid, 0)
  except ProcessLookupError: return False
  except PermissionError: return True
  try:  # an exited process its parent has not reaped yet (a zombie) is not alive
    with open(f"/proc/{pid}/stat") as f: return f.read().rsplit(")", 1)[1].split()[0] != "Z"
  except (OSError, IndexError): return True

def _listening(host: str, port: int) -> bool:
  try:
    with socket.create_connection((host, port), timeout=1): return True
  except OSError: return False

def read_state() -> dict[str, Any] | None:
  """The running server of this user, from its state file, if its process is alive and listening."""
  try:
    with open(state_path()) as f: st = json.load(f)
    if alive(int(st["pid"])) and _listening(st["host"], int(st["port"])): return st
  except (OSError, ValueError, KeyError, TypeError): pass
  return None

def server_from_url(url: str) -> dict[str, Any]:
  """TINYVIZ_URL (the URL a server printed) -> {host, port, token, url}."""
  u = urlsplit(url)
  token = parse_qs(u.query).get("token", [""])[0]
  if not u.hostname or not u.port or not token: raise ValueError(f"TINYVIZ_URL {url!r} is not a tinyviz URL with ?token=")
  return {"host": u.hostname, "port": u.port, "token": token, "url": url, "pid": None}

_spawned: list[subprocess.Popen] = []  # keep a reference: the server outlives us, its Popen must not be collected

def find_or_start() -> dict[str, Any]:
  """This user's server: TINYVIZ_URL if set, else the one in the state file, else a new one (started under a
  lock so that two scripts starting at once share one server)."""
  if url := os.environ.get("TINYVIZ_URL"): return server_from_url(url)
  if st := read_state(): return st
  os.makedirs(state_dir(), mode=0o700, exist_ok=True)
  with open(os.path.join(state_dir(), "server.lock"), "w") as lock:
    try:
      import fcntl
      fcntl.flock(lock, fcntl.LOCK_EX)
    except ImportError: pass  # no flock (Windows): two scripts starting at the same moment may start two servers
    if st := read_state(): return st
    return _start_server()

def _start_server() -> dict[str, Any]:
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # where the profiler and viz packages live
  env = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "TINYVIZ_TRACE", "DEBUG")}
  env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
  log_path = os.path.join(state_dir(), "server.log")
  cmd = [sys.executable, "-m", "viz", "serve", "--no-browser", "--state-file", state_path(), "--idle-exit", IDLE_EXIT_S]
  with open(log_path, "ab") as log:
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, cwd=state_dir(),
                            start_new_session=True, close_fds=True)
  _spawned.append(proc)
  deadline = time.monotonic() + START_WAIT_S
  while time.monotonic() < deadline:
    if proc.poll() is not None: raise RuntimeError(f"the viz server exited at start (code {proc.returncode}); see {log_path}")
    try:
      with open(state_path()) as f: st = json.load(f)
      if st.get("pid") == proc.pid: return st
    except (OSError, ValueError): pass
    time.sleep(0.05)
  raise RuntimeError(f"the viz server did not start within {START_WAIT_S:.0f} s; see {log_path}")

def _display() -> bool:
  if os.environ.get("BROWSER", "").lower() in ("none", "false", "0"): return False
  return not sys.platform.startswith("linux") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))

class _FileSource:
  """The recorder's trace file, read as event lines from any event index."""
  def __init__(self, path: str):
    self.f = open(path, "rb")
    self.start = len(self.f.readline())  # after the header line
    self.pos, self.index = self.start, 0
    self.marks: deque[tuple[int, int]] = deque([(0, self.start)])  # (event index, byte offset) to seek back to

  def read(self, max_bytes: int) -> list[str]:
    self.f.seek(self.pos)
    data = self.f.read(max_bytes)
    cut = data.rfind(b"\n")
    while cut < 0 and len(data) >= max_bytes:  # one line longer than a frame: take it whole
      more = self.f.read(max_bytes)
      if not more: break
      data += more
      cut = data.rfind(b"\n")
    if cut < 0: return []  # nothing, or only a line still being written
    lines = data[:cut].decode("utf-8", "replace").split("\n")
    self.marks.append((self.index, self.pos))
    self.pos += cut + 1
    self.index += len(lines)
    return lines

  def seek(self, n: int) -> None:
    """Continue from event n (what the server has)."""
    index, pos = max((m for m in self.marks if m[0] <= n), default=(0, self.start))
    self.f.seek(pos)
    for _ in range(n - index):
      line = self.f.readline()
      if not line.endswith(b"\n"): break
      pos += len(line)
      index += 1
    self.index, self.pos = index, pos

  def acked(self, n: int) -> None:
    while len(self.marks) > 1 and self.marks[1][0] <= n: self.marks.popleft()

class _MemorySource:
  """Lines kept in memory when there is no trace file; the acked ones are dropped."""
  def __init__(self) -> None:
    self.lines: deque[str] = deque()
    self.base = self.index = 0
    self.lock = threading.Lock()

  def append(self, lines: list[str]) -> None:
    with self.lock: self.lines.extend(lines)

  def read(self, max_bytes: int) -> list[str]:
    out, size = [], 0
    with self.lock:
      while self.index - self.base < len(self.lines) and size < max_bytes:
        line = self.lines[self.index - self.base]
        out.append(line)
        size += len(line) + 2
        self.index += 1
    return out

  def seek(self, n: int) -> None: self.index = max(n, self.base)

  def acked(self, n: int) -> None:
    with self.lock:
      while self.base < n and self.lines: self.lines.popleft(); self.base += 1

class LiveSink:
  """A recorder sink (called with each flushed batch) that streams the run to the viz server from its own thread."""
  def __init__(self, trace_path: str | None, open_page: bool = True):
    self.source: _FileSource | _MemorySource = _FileSource(trace_path) if trace_path else _MemorySource()
    self.key = f"{os.getpid()}-{time.time_ns()}-{secrets.token_hex(4)}"
    self.server: dict[str, Any] | None = None
    self.run_id: int | None = None
    self.acked = 0
    self.error: str | None = None
    self.open_page = open_page
    self.page_opened = False
    self.failures = 0
    self.closed = False
    self.wake, self.done = threading.Event(), threading.Event()
    self._warned: set[str] = set()
    self.thread = threading.Thread(target=self._main, name="tinyviz-live", daemon=True)
    self.thread.start()

  def __call__(self, batch: list[dict[str, Any]]) -> None:
    if isinstance(self.source, _MemorySource): self.source.append([encode(o) for o in batch])
    self.wake.set()

  def close(self, timeout: float = EXIT_WAIT_S) -> bool:
    """No more events will come; waits (up to timeout) until the server has acked them all."""
    self.closed = True
    self.wake.set()
    return self.done.wait(timeout)

  @property
  def page_url(self) -> str | None:
    if self.server is None: return None
    return self.server["url"] + (f"#/rewrites?run={self.run_id}" if self.run_id is not None else "")

  def _warn(self, message: str) -> None:
    if message not in self._warned:
      self._warned.add(message)
      print(f"tinyviz: {message}", file=sys.stderr)

  GIVE_UP = 30  # failed connections in a row (about two minutes) before streaming stops; the trace file goes on

  def _main(self) -> None:
    self.failures = 0  # in a row; a connection that gets its hello resets it
    try:
      while True:
        try:
          # a server that failed twice in a row may be gone: look for (or start) one again
          if self.server is None or (self.failures and self.failures % 2 == 0): self.server = find_or_start()
          if self._session(): break
        except Exception as e:  # any failure of the server or the network: the trace file has everything
          self.error = f"{type(e).__name__}: {e}"
          self.failures += 1
          if self.closed and self.failures >= 3: break
          if self.failures == 8: self._warn(f"viz server unreachable ({self.error}); the trace file still records everything")
          if self.failures >= self.GIVE_UP:
            self._warn(f"stopped streaming to the viz server ({self.error}); the trace file has the whole run")
            break
          time.sleep(min(0.2 * 2 ** self.failures, 5.0))
    finally: self.done.set()

  def _session(self) -> bool:
    """One connection: sends until everything is acked after close(). True when done; raises when the connection fails."""
    from websockets.sync.client import connect  # here: importing the profiler must not need websockets
    from websockets.exceptions import ConnectionClosed
    st = self.server
    assert st is not None
    headers = {"X-Tinyviz-Token": st["token"], "X-Tinyviz-Run": self.key}
    with connect(f"ws://{st['host']}:{st['port']}/ingest", additional_headers=headers, proxy=None, compression=None,
                 max_size=None, open_timeout=5, ping_interval=None, user_agent_header=None) as ws:
      hello = json.loads(ws.recv(timeout=5))
      if hello.get("type") != "ack": raise RuntimeError(f"unexpected hello {hello!r}")
      self.failures = 0
      src = self.source
      self.acked = hello["n"]
      src.seek(self.acked)
      if hello.get("run") is not None: self.run_id = hello["run"]
      no_page = hello.get("browsers", 0) == 0
      inflight: deque[tuple[int, int]] = deque()  # (events up to, bytes) per frame sent
      inflight_bytes = 0
      try:
        while True:
          closed = self.closed  # read before the source: close() comes after the recorder's last flush
          drained = False
          while inflight_bytes < WINDOW_BYTES:
            lines = src.read(FRAME_BYTES)
            if not lines: drained = True; break
            frame = "[\n" + ",\n".join(lines) + "\n]"  # one event per line: the server stores the lines as they are
            ws.send(frame)
            inflight.append((src.index, len(frame)))
            inflight_bytes += len(frame)
          if not inflight:
            if closed and drained: return True
            self.wake.wait(0.25); self.wake.clear()
            continue
          try: msg = json.loads(ws.recv(timeout=0.25))
          except TimeoutError: continue
          if msg.get("type") == "error":  # the server dropped a frame (it answers each frame in order)
            self._warn(f"viz server: {msg.get('message')}")
            if inflight: inflight_bytes -= inflight.popleft()[1]
            continue
          if msg.get("type") != "ack": continue
          self.acked = msg["n"]
          src.acked(self.acked)
          while inflight and inflight[0][0] <= self.acked: inflight_bytes -= inflight.popleft()[1]
          if self.run_id is None and msg.get("run") is not None:
            self.run_id = msg["run"]
            if self.open_page and no_page and not self.page_opened: self._open()
      except ConnectionClosed as e: raise ConnectionError(f"connection closed: {e}") from None

  def _open(self) -> None:
    self.page_opened = True
    if not _display():
      print(f"tinyviz: live at {self.page_url}", file=sys.stderr)
      return
    import webbrowser
    threading.Thread(target=webbrowser.open, args=(self.page_url,), daemon=True).start()

# *** installing: VIZ=1 ***

_sink: LiveSink | None = None

def wanted() -> bool:
  """VIZ=1 (any positive number): live. VIZ=-1 records to the trace file only, as PROFILE=1 does."""
  from profiler import settings
  return settings.live()

def start(rec: Any, open_page: bool = True) -> LiveSink:
  """Streams `rec` (an installed Recorder) to the viz server; at exit, prints where to look."""
  global _sink
  _sink = LiveSink(rec.path, open_page)
  rec.add_sink(_sink)
  atexit.register(_at_exit, rec, _sink, os.getpid())
  return _sink

def _at_exit(rec: Any, sink: LiveSink, pid: int) -> None:
  if os.getpid() != pid: return  # a forked child: the parent streams
  from profiler import recorder
  if recorder.installed() is rec: recorder.uninstall(announce=False)  # the last flush, with run_end, reaches the sink
  elif not rec.closed: rec.close()
  finished = sink.close()
  if rec.path: print(f"tinyviz: trace saved to {rec.path}", file=sys.stderr)
  if sink.server is None or sink.run_id is None:  # never connected, or never got as far as an ack
    print(f"tinyviz: no viz server ({sink.error or 'it did not start in time'}); open the trace with `tinyviz {rec.path}`", file=sys.stderr)
    return
  if not finished:
    print(f"tinyviz: the viz server had not taken every event after {EXIT_WAIT_S:.0f} s; the trace file has them all", file=sys.stderr)
  pid_note = f"server pid {sink.server['pid']} keeps running; `tinyviz stop` ends it" if sink.server.get("pid") else "server keeps running"
  print(f"tinyviz: view at {sink.page_url}  ({pid_note})", file=sys.stderr)
