"""Fixtures for the browser tests: Debian's Chromium driven by Playwright (sync API), the real viz server on a
free port of 127.0.0.1, and a real engine trace written by a VIZ=-1 run of trace_script.py.

Each missing piece fails the tests with the reason (a setup that fails must not pass as a skip): no
/usr/bin/chromium, no playwright, a server that is not there or does not start. Screenshots go to tests/ui/artifacts/ (gitignored)."""
from __future__ import annotations
import contextlib, importlib.util, os, re, signal, socket, subprocess, sys, time
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE / "artifacts"
CHROMIUM = os.environ.get("TINYVIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# How to start the server on traces: the first of these whose module exists. TINYVIZ_UI_SERVER_CMD (a command
# with {file} and {port}) tests the page against another server.
SERVER_MODULES = ["viz", "viz.server"]
URL_RE = re.compile(r"http://127\.0\.0\.1:(\d+)/\S*")

def free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]

def server_command(files: list[Path], port: int) -> list[str] | None:
  if (tpl := os.environ.get("TINYVIZ_UI_SERVER_CMD")):
    return [part.format(file=" ".join(map(str, files)), port=port) for part in tpl.split()]
  for mod in SERVER_MODULES:
    try:
      if importlib.util.find_spec(f"{mod}.__main__") is not None:
        return [sys.executable, "-m", mod, *map(str, files), "--no-browser", "--port", str(port)]
    except ModuleNotFoundError: continue
  return None

@pytest.fixture(scope="session")
def trace_file(tmp_path_factory) -> Path:
  out = tmp_path_factory.mktemp("ui") / "trace_script.tinyviz.jsonl"
  env = {**os.environ, "VIZ": "-1", "TINYVIZ_TRACE": str(out), "PYTHONPATH": str(ROOT)}
  env.pop("DEBUG", None)
  proc = subprocess.run([sys.executable, str(HERE / "trace_script.py")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
  if proc.returncode != 0 or not out.exists():
    pytest.fail(f"VIZ=-1 run of trace_script.py failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
  return out

class ServerUnavailable(Exception): pass

@contextlib.contextmanager
def run_server(files: list[Path], log_path: Path):
  """The real viz server on `files`, on a free port of 127.0.0.1: yields {url (with the auth token), base, port,
  token, log}; stopped by its PID on exit. Raises ServerUnavailable (with the server's output) if it does not start."""
  port = free_port()
  cmd = server_command(files, port)
  if cmd is None: raise ServerUnavailable("the viz server is not available: no `python -m viz` (viz/__main__.py) or `python -m viz.server`")
  with open(log_path, "w+") as log:
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            start_new_session=True)
    try:
      m, deadline = None, time.monotonic() + 30
      while m is None and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
        log.seek(0)
        m = URL_RE.search(log.read())
      if m is None:
        log.seek(0)
        raise ServerUnavailable(f"the viz server did not start ({' '.join(cmd)}; exit {proc.poll()}):\n{log.read()[-2000:]}")
      token = re.search(r"token=([\w-]+)", m.group(0))
      yield {"url": m.group(0), "base": f"http://127.0.0.1:{port}", "port": port, "token": token and token.group(1), "log": log_path}
    finally:
      if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try: proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
          os.kill(proc.pid, signal.SIGKILL)
          proc.wait(timeout=10)

@pytest.fixture(scope="session")
def server(trace_file):
  """The real viz server on the engine trace (see run_server)."""
  try:
    with run_server([trace_file], trace_file.parent / "server.log") as srv: yield srv
  except ServerUnavailable as e: pytest.fail(str(e), pytrace=False)

@pytest.fixture(scope="session")
def browser():
  if not Path(CHROMIUM).exists(): pytest.fail(f"no Chromium at {CHROMIUM} (apt-get install chromium)", pytrace=False)
  try: from playwright import sync_api
  except ImportError: pytest.fail("playwright (python) is not installed: pip install -e '.[test]'", pytrace=False)
  with sync_api.sync_playwright() as p:
    b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    yield b
    b.close()

@pytest.fixture
def page(browser, server):
  """A fresh page, already authenticated (the token URL sets the cookie); console errors fail the test."""
  ctx = browser.new_context(viewport={"width": 1500, "height": 900})
  pg = ctx.new_page()
  errors: list[str] = []
  pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))
  pg.on("console", lambda m: errors.append(f"console.error: {m.text}") if m.type == "error" else None)
  pg.goto(server["url"])
  pg.viz_errors = errors  # type: ignore[attr-defined]
  yield pg
  ctx.close()
  bad = [e for e in errors if "Failed to load resource" not in e]  # a 404 the page handles is logged by Chromium too
  assert not bad, "\n".join(bad)

@pytest.fixture(scope="session")
def artifacts() -> Path:
  ARTIFACTS.mkdir(exist_ok=True)
  return ARTIFACTS
