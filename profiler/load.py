"""Opening any trace we read: ours (JSON Lines) or Chrome JSON, each plain or gzipped (told by bytes, not name)."""
from __future__ import annotations
import zlib
from profiler.tracefile import Trace, TraceError, ReadWarning, read_jsonl, is_jsonl_trace
from profiler.chrome import read_chrome

GZIP_MAGIC = b"\x1f\x8b"

def gunzip(data: bytes) -> tuple[bytes, list[ReadWarning]]:
  """Decompresses what it can: a truncated or corrupt stream gives the bytes before the damage and a warning."""
  out, warnings = [], []
  while data[:2] == GZIP_MAGIC:  # several members may follow one another
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    for i in range(0, len(data), 1 << 13):
      try: out.append(d.decompress(data[i:i + (1 << 13)]))
      except zlib.error as e:
        warnings.append(ReadWarning(f"gzip data corrupt ({e}) within compressed bytes {i}..{i + (1 << 13)}; "
                                    f"using the {sum(map(len, out))} bytes decompressed before it"))
        return b"".join(out), warnings
      if d.eof: break
    if not d.eof:
      warnings.append(ReadWarning(f"gzip stream truncated; using the {sum(map(len, out))} bytes decompressed"))
      break
    data = d.unused_data
  return b"".join(out), warnings

def parse(data: bytes) -> Trace:
  """Reads a trace from bytes. Raises TraceError only when nothing in them is readable."""
  pre: list[ReadWarning] = []
  if data[:2] == GZIP_MAGIC: data, pre = gunzip(data)
  if not data or data.isspace(): raise TraceError("empty trace" + (f" ({pre[0]})" if pre else ""))
  trace = read_jsonl(data) if is_jsonl_trace(data) else read_chrome(data)
  trace.warnings[:0] = pre
  return trace

def load(path: str) -> Trace:
  """Reads a trace file. Raises OSError if it cannot be read, TraceError if nothing in it is readable."""
  with open(path, "rb") as f: return parse(f.read())
