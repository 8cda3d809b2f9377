"""The `tinyviz` command: a table of subcommands; a plain `tinyviz FILE...` opens the viewer."""
from __future__ import annotations
import sys
from typing import Callable

def summary(args: list[str]) -> int:
  from profiler.summary import main as summary_main
  return summary_main(args)

def export(args: list[str]) -> int:
  """tinyviz export FILE --chrome OUT"""
  from profiler.chrome import write_chrome
  from profiler.load import load
  from profiler.tracefile import TraceError
  if len(args) != 3 or args[1] != "--chrome":
    print("usage: tinyviz export FILE --chrome OUT.json[.gz]", file=sys.stderr)
    return 2
  src, out = args[0], args[2]
  try: trace = load(src)
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

def view(args: list[str]) -> int:
  print("tinyviz: the viewer server is not yet available; try `tinyviz summary FILE`", file=sys.stderr)
  return 2

COMMANDS: dict[str, Callable[[list[str]], int]] = {"summary": summary, "export": export}
USAGE = "usage: tinyviz FILE... | tinyviz summary FILE | tinyviz export FILE --chrome OUT"

def main(argv: list[str] | None = None) -> int:
  args = sys.argv[1:] if argv is None else argv
  if not args or args[0] in ("-h", "--help"):
    print(USAGE, file=sys.stderr if not args else sys.stdout)
    return 2 if not args else 0
  cmd = COMMANDS.get(args[0])
  return cmd(args[1:]) if cmd is not None else view(args)

if __name__ == "__main__": sys.exit(main())
