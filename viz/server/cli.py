"""The `tinyviz` command: a table of subcommands; a plain `tinyviz FILE...` opens the viewer."""
from __future__ import annotations
import argparse, json, os, signal, sys, time
from typing import Callable

def summary(args: list[str]) -> int:
  from profiler.summary import main as summary_main
  return summary_main(args)

def compare(args: list[str]) -> int:
  from profiler.compare import main as compare_main
  return compare_main(args)

def export(args: list[str]) -> int:
  """tinyviz export FILE --chrome OUT (FILE: one trace, or tinygrad's rewrites.pkl and profile.pkl of one run)"""
  from profiler.chrome import write_chrome
  from profiler.load import load_group
  from profiler.tracefile import TraceError
  if len(args) not in (3, 4) or args[-2] != "--chrome":
    print("usage: tinyviz export FILE [FILE2] --chrome OUT.json[.gz]", file=sys.stderr)
    return 2
  src, out = " + ".join(args[:-2]), args[-1]
  try: trace = load_group(args[:-2])
  except (OSError, TraceError) as e:
    print(f"tinyviz: {src}: {e}", file=sys.stderr)
    return 1
  for w in trace.warnings: print(f"warning: {src}: {w}", file=sys.stderr)
  try: write_chrome(trace.events, out)
  except OSError as e:
    print(f"tinyviz: {out}: {e}", file=sys.stderr)
    return 1
  print(f"wrote {out}")
  return 0

def _server_args(prog: str, files_required: bool) -> argparse.ArgumentParser:
  p = argparse.ArgumentParser(prog=prog)
  p.add_argument("files", nargs="+" if files_required else "*", metavar="FILE",
                 help="trace files: tinyviz (.jsonl), Chrome trace-event JSON (.json, .json.gz) or tinygrad's rewrites.pkl/"
                      "profile.pkl (read safely; the two of one run make one); each becomes a run")
  p.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
  p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; others print a warning)")
  p.add_argument("--no-browser", action="store_true", help="print the URL, do not open a browser")
  return p

def view(args: list[str]) -> int:
  """tinyviz FILE... [--port N] [--host H] [--no-browser] [--merge]: serves saved traces until Ctrl+C."""
  from viz.server.serve import Options, serve
  p = _server_args("tinyviz", True)
  p.add_argument("--merge", action="store_true", help="show the files as one run on one clock, each process's tracks under it")
  p.add_argument("--compare", action="store_true", help="open the compare view on the two runs given")
  a = p.parse_args(args)
  if a.compare:
    from profiler.load import group_paths
    if a.merge or len(group_paths(a.files)) != 2: p.error("--compare takes exactly two runs (and no --merge)")
    return serve(Options(a.files, a.host, a.port, not a.no_browser, start="#/compare?a=1&b=2"))
  if not a.merge: return serve(Options(a.files, a.host, a.port, not a.no_browser))
  import shutil, tempfile
  from profiler.merge import main as merge_main
  d = tempfile.mkdtemp(prefix="tinyviz-merge-")  # 0700, ours; gone when the viewer stops
  try:
    out = os.path.join(d, "merged.tinyviz.jsonl")
    if (rc := merge_main([*a.files, "-o", out])) != 0: return rc
    return serve(Options([out], a.host, a.port, not a.no_browser))
  finally: shutil.rmtree(d, ignore_errors=True)

def merge(args: list[str]) -> int:
  from profiler.merge import main as merge_main
  return merge_main(args)

def serve_cmd(args: list[str]) -> int:
  """tinyviz serve [FILE...]: the server VIZ=1 scripts stream to (VIZ=1 starts it by itself when none runs)."""
  from profiler.live import state_path
  from viz.server.serve import Options, serve
  p = _server_args("tinyviz serve", False)
  p.add_argument("--state-file", default=None, help=f"where scripts find this server (default {state_path()})")
  p.add_argument("--idle-exit", type=float, default=0, metavar="S",
                 help="exit after S seconds with no page and no script connected (default: never)")
  p.add_argument("--spool-mb", type=float, default=None, metavar="MB",
                 help="size limit of the server's copies of live runs; past it the oldest finished runs are closed "
                      "(default: TINYVIZ_SPOOL_MB, else 2048)")
  a = p.parse_args(args)
  if a.spool_mb is not None and not a.spool_mb > 0: p.error(f"--spool-mb must be a positive number of MB, not {a.spool_mb}")
  return serve(Options(a.files, a.host, a.port, not a.no_browser, a.state_file or state_path(), a.idle_exit, spool_mb=a.spool_mb))

def stop(args: list[str]) -> int:
  """tinyviz stop: ends this user's server (the one VIZ=1 started)."""
  from profiler.live import alive, read_state
  st = read_state()
  if st is None:
    print("tinyviz: no server is running", file=sys.stderr)
    return 1
  os.kill(int(st["pid"]), signal.SIGTERM)
  for _ in range(100):  # until it has exited (and removed its state file)
    if not alive(int(st["pid"])): break
    time.sleep(0.05)
  print(f"tinyviz: stopped the server (pid {st['pid']}) at http://{st['host']}:{st['port']}/")
  return 0

def status(args: list[str]) -> int:
  """tinyviz status: the URL of this user's server, if one runs."""
  from profiler.live import read_state
  st = read_state()
  if st is None:
    print("tinyviz: no server is running")
    return 1
  print(json.dumps({k: st[k] for k in ("pid", "url")}))
  return 0

COMMANDS: dict[str, Callable[[list[str]], int]] = {"summary": summary, "compare": compare, "merge": merge, "export": export, "serve": serve_cmd, "stop": stop,
                                                   "status": status}
USAGE = """usage: tinyviz FILE... [--port N] [--host H] [--no-browser] [--merge | --compare]   serve saved traces in the browser
       tinyviz summary FILE [FILE2] [--json]                    top kernels and totals per device (--json: every row, self times, duration)
       tinyviz compare A B [--json]                             two runs kernel by kernel: count, total, mean, self, B - A
       tinyviz merge A B ... -o OUT                             several processes' traces as one run on one clock
       tinyviz export FILE [FILE2] --chrome OUT.json[.gz]       the timeline for Perfetto / chrome://tracing
       (FILE: ours, Chrome JSON, or real tinygrad's rewrites.pkl.USER / profile.pkl.USER; those two make one run)
       tinyviz serve [FILE...] [--state-file P] [--idle-exit S] [--spool-mb MB]
                                                                the server VIZ=1 scripts stream to
       tinyviz status | tinyviz stop                            this user's server: its URL / end it"""

def main(argv: list[str] | None = None) -> int:
  args = sys.argv[1:] if argv is None else argv
  if not args or args[0] in ("-h", "--help"):
    print(USAGE, file=sys.stderr if not args else sys.stdout)
    return 2 if not args else 0
  cmd = COMMANDS.get(args[0])
  return cmd(args[1:]) if cmd is not None else view(args)

if __name__ == "__main__": sys.exit(main())
