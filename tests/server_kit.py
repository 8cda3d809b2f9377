"""Helpers for the server tests: the real server as a subprocess on a free port of 127.0.0.1, a page (a websocket
client on /ws that counts what it is sent), HTTP with the token, and real engine runs as subprocesses."""
from __future__ import annotations
import json, os, re, signal, socket, subprocess, sys, threading, time
from pathlib import Path
from typing import Any, Callable
import httpx
from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parent.parent
URL_RE = re.compile(r"serving at (http://127\.0\.0\.1:(\d+)/\?token=([\w-]+))")

# a real engine workload: matmul, ReLU, a sum, per step; STEPS steps with PAUSE seconds between them
ENGINE_SCRIPT = """
import sys, time
import numpy as np
from tinygrad import Tensor
steps, pause = int(sys.argv[1]), float(sys.argv[2])
x = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
a = Tensor(x)
for i in range(steps):
  b = ((a @ a.T).relu() + i).sum(axis=1)
  np.testing.assert_allclose(b.numpy(), (np.maximum(x @ x.T, 0) + i).sum(axis=1), rtol=1e-4)
  time.sleep(pause)
print("done")
"""

def free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]

def env(**extra: str) -> dict[str, str]:
  e = {k: v for k, v in os.environ.items() if k not in ("VIZ", "PROFILE", "DEBUG", "TINYVIZ_URL", "TINYVIZ_TRACE")}
  e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
  e["BROWSER"] = "none"
  e.update(extra)
  return e

class Server:
  """`python -m viz ARGS` until stop(); url/port/token from the line it prints."""
  def __init__(self, args: list[str], tmp: Path, **extra_env: str):
    self.log_path = tmp / f"server-{time.monotonic_ns()}.log"
    self.log = open(self.log_path, "w+")
    self.proc = subprocess.Popen([sys.executable, "-m", "viz", *args], cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT,
                                 env=env(TINYVIZ_SERVER_DIR=str(tmp / "home"), TINYVIZ_TRACE_DIR=str(tmp / "spool"), **extra_env))
    deadline = time.monotonic() + 30
    while True:
      m = URL_RE.search(self.text())
      if m: break
      if self.proc.poll() is not None or time.monotonic() > deadline:
        self.stop()
        raise RuntimeError(f"server did not start: {self.text()}")
      time.sleep(0.05)
    self.url, self.port, self.token = m.group(1), int(m.group(2)), m.group(3)
    self.base = f"http://127.0.0.1:{self.port}"
    self.http = httpx.Client(base_url=self.base, headers={"X-Tinyviz-Token": self.token}, timeout=30, trust_env=False)

  def text(self) -> str:
    self.log.flush()
    return self.log_path.read_text()

  def get(self, path: str, **kw: Any) -> httpx.Response: return self.http.get(path, **kw)

  def json(self, path: str) -> Any:
    r = self.get(path)
    assert r.status_code == 200, (path, r.status_code, r.text)
    return r.json()

  def alive(self) -> bool: return self.proc.poll() is None

  def stop(self) -> None:
    if self.proc.poll() is None:
      self.proc.send_signal(signal.SIGINT)
      try: self.proc.wait(timeout=10)
      except subprocess.TimeoutExpired: self.proc.kill(); self.proc.wait()
    self.log.close()

class Page:
  """A browser's websocket on /ws (with the Origin a browser sends), reading in a thread: keeps every message,
  the events messages per run by seq (a repeat after a resume is dropped, as the frontend does)."""
  def __init__(self, server: Server, origin: str | None = None, read: bool = True):
    self.server = server
    self.ws = connect(f"ws://127.0.0.1:{server.port}/ws", origin=origin or f"http://127.0.0.1:{server.port}",  # type: ignore[arg-type]
                      additional_headers={"X-Tinyviz-Token": server.token}, proxy=None, max_size=None, open_timeout=10).__enter__()
    self.messages: list[dict[str, Any]] = []
    self.events: dict[int, dict[int, dict[str, Any]]] = {}  # run -> seq -> message
    self.lock = threading.Lock()
    self.closed = False
    if read: threading.Thread(target=self._read, daemon=True).start()

  def _read(self) -> None:
    try:
      for text in self.ws:
        msg = json.loads(text)
        with self.lock:
          if self.closed: break
          self.messages.append(msg)
          if msg.get("type") == "events": self.events.setdefault(msg["run"], {}).setdefault(msg["seq"], msg)
    except Exception: pass
    self.closed = True

  def counts(self, run: int) -> dict[str, int]:
    out: dict[str, int] = {}
    with self.lock:
      for m in self.events.get(run, {}).values():
        for k, v in m["counts"].items(): out[k] = out.get(k, 0) + v
    return out

  def last_seq(self, run: int) -> int:
    with self.lock:
      seqs = sorted(self.events.get(run, {}))
    assert seqs == list(range(1, len(seqs) + 1)), f"gap in seqs of run {run}: {seqs}"
    return len(seqs)

  def send(self, obj: Any) -> None: self.ws.send(obj if isinstance(obj, (str, bytes)) else json.dumps(obj))

  def close(self) -> None: self.ws.close()

  def kill(self) -> None:
    """Drops the TCP connection without a closing handshake, as a crashed browser tab does; what this page
    has is what it got before."""
    with self.lock: self.closed = True
    self.ws.socket.shutdown(socket.SHUT_RDWR)
    self.ws.socket.close()

def wait_for(pred: Callable[[], Any], timeout: float = 30, what: str = "condition") -> Any:
  deadline = time.monotonic() + timeout
  while time.monotonic() < deadline:
    if (v := pred()): return v
    time.sleep(0.02)
  raise AssertionError(f"timed out waiting for {what}")

def trace_counts(path: Path) -> dict[str, int]:
  """Events per type in a trace file (the header line left out)."""
  out: dict[str, int] = {}
  with open(path) as f:
    next(f)
    for line in f:
      t = json.loads(line)["type"]
      out[t] = out.get(t, 0) + 1
  return out

def engine_run(tmp: Path, name: str, steps: int = 3, pause: float = 0.0, **extra_env: str) -> tuple[subprocess.CompletedProcess, Path]:
  """Runs ENGINE_SCRIPT in a fresh process; returns it and the path of the trace it wrote."""
  script = tmp / f"{name}.py"
  script.write_text(ENGINE_SCRIPT)
  trace = tmp / f"{name}.tinyviz.jsonl"
  proc = subprocess.run([sys.executable, str(script), str(steps), str(pause)], cwd=ROOT, capture_output=True, text=True,
                        timeout=120, env=env(TINYVIZ_TRACE=str(trace), TINYVIZ_SERVER_DIR=str(tmp / "home"),
                                                         TINYVIZ_TRACE_DIR=str(tmp / "spool"), **extra_env))
  assert proc.returncode == 0, proc.stdout + proc.stderr
  return proc, trace
