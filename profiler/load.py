"""Opening any trace we read: ours (JSON Lines) or Chrome JSON, each plain or gzipped (told by bytes, not name).

Input is read as a stream of chunks, decompressed as it arrives, and each event becomes one of ours as soon as it
is decoded: a file is never held whole, nor its text beside a dict per event (a 1M-span Chrome trace took 1.8 GB so).
"""
from __future__ import annotations
import itertools, os, zlib
from typing import Iterable, Iterator
from profiler.tracefile import CHUNK, Trace, TraceError, ReadWarning, read_jsonl_chunks, is_jsonl_trace
from profiler.chrome import read_chrome_chunks
from profiler.tinygrad_import import is_pickle, read_pickles
from profiler.limits import max_bytes, past

GZIP_MAGIC = b"\x1f\x8b"
BLANK_KEPT = 1 << 20  # leading whitespace passed on before the rest of it is dropped
GZIP_STEP = 1 << 13  # compressed bytes fed to zlib at a time: bounds the text one step gives (a 1000x ratio is rare)

def _upto_damage(d: zlib._Decompress, data: bytes) -> tuple[bytes, int, zlib.error]:
  """Feeds data to d a byte at a time: the text zlib gives before it notices the damage, and the index where it does."""
  out = []
  for j in range(len(data)):
    try: out.append(d.decompress(data[j:j + 1]))
    except zlib.error as e: return b"".join(out), j, e
  return b"".join(out), len(data), zlib.error("no error fed byte by byte")  # not reached: zlib is deterministic

def gunzip_chunks(chunks: Iterable[bytes], warnings: list[ReadWarning]) -> Iterator[bytes]:
  """Decompresses gzip members one after another as their bytes arrive. A truncated or corrupt stream ends after
  the text decompressed before the damage, with a warning appended to `warnings`."""
  d = None
  pos = out = 0  # compressed bytes consumed, decompressed bytes given
  rest = b""     # the start of a member too short to check its magic yet
  for data in chunks:
    data, rest, i = rest + data, b"", 0
    while i < len(data):
      if d is None:  # between members: another one, or bytes after the last that we ignore
        if len(data) - i < 2: rest = data[i:]; break
        if data[i:i + 2] != GZIP_MAGIC: return
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
      step, before = data[i:i + GZIP_STEP], d.copy()  # the copy: to go over a damaged step again, a byte at a time
      try: text = d.decompress(step)
      except zlib.error:
        text, at, e = _upto_damage(before, step)
        if text: yield text
        warnings.append(ReadWarning(f"gzip data corrupt ({e}) at compressed byte {pos + at}; "
                                    f"using the {out + len(text)} bytes decompressed before it"))
        return
      used = len(step) - len(d.unused_data) if d.eof else len(step)
      pos, out, i = pos + used, out + len(text), i + used
      if d.eof: d = None
      if text: yield text
  if d is not None: warnings.append(ReadWarning(f"gzip stream truncated; using the {out} bytes decompressed"))

def _skip_blank(chunks: Iterable[bytes], warnings: list[ReadWarning]) -> Iterator[bytes]:
  """Drops whole chunks of whitespace before the first byte of content (a gzip of blanks inflates to gigabytes of
  them; nothing needs to hold them), saying so when that moves the byte offsets of later warnings."""
  kept = skipped = 0
  for c in chunks:
    if c.isspace():
      if kept < BLANK_KEPT: kept += len(c); yield c  # the usual few blanks pass: offsets stay exact
      else: skipped += len(c)
      continue
    if skipped: warnings.append(ReadWarning(f"{skipped} bytes of whitespace skipped before the trace; byte offsets count from after them"))
    yield c
    yield from chunks
    return

def _capped(chunks: Iterable[bytes], warnings: list[ReadWarning]) -> Iterator[bytes]:
  """The input up to TINYVIZ_MAX_TRACE_MB (uncompressed), then a warning naming the limit."""
  left = max_bytes()
  for c in chunks:
    if len(c) > left:
      yield c[:left]
      warnings.append(ReadWarning(past("TINYVIZ_MAX_TRACE_MB", "the uncompressed size")))
      return
    left -= len(c)
    yield c

def _peek(chunks: Iterator[bytes], n: int) -> tuple[bytes, Iterator[bytes]]:
  """The input's first chunks joined, until they hold n bytes and one that is not whitespace (or the input ends);
  and the whole input again, those chunks included."""
  head: list[bytes] = []
  size, seen = 0, False  # seen: a byte that is not whitespace (tracked per chunk: joining each time was quadratic)
  for c in chunks:
    head.append(c)
    size += len(c)
    seen = seen or (bool(c) and not c.isspace())
    if size >= n and seen: break
  first = b"".join(head)
  return first, itertools.chain([first], chunks)

def read_chunks(chunks: Iterator[bytes]) -> Trace:
  """Reads a trace arriving as chunks of bytes. Raises TraceError only when nothing in them is readable."""
  pre: list[ReadWarning] = []
  magic, chunks = _peek(chunks, 2)
  if magic[:2] == GZIP_MAGIC: chunks = gunzip_chunks(chunks, pre)
  chunks = _capped(_skip_blank(chunks, pre), pre)
  head, chunks = _peek(chunks, 400)
  if not head or head.isspace(): raise TraceError("empty trace" + (f" ({pre[0]})" if pre else ""))
  if is_pickle(head):  # tinygrad's own VIZ/PROFILE files: a pickle is read whole (it cannot be read in pieces)
    try: trace = read_pickles([("pickle", b"".join(chunks))])
    except TraceError as e: raise TraceError(f"{e}" + (f" ({pre[0]})" if pre else "")) from None  # e.g. cut at the size limit
    trace.warnings[:0] = pre
    return trace
  read = read_jsonl_chunks if is_jsonl_trace(head) else read_chrome_chunks
  del magic, head  # not held while the rest is read
  trace = read(chunks)
  trace.warnings[:0] = pre
  return trace

def parse(data: bytes, chunk_size: int = CHUNK) -> Trace:
  """Reads a trace from bytes. Raises TraceError only when nothing in them is readable."""
  return read_chunks(data[i:i + chunk_size] for i in range(0, len(data), chunk_size))

def load(path: str, chunk_size: int = CHUNK) -> Trace:
  """Reads a trace file. Raises OSError if it cannot be read, TraceError if nothing in it is readable."""
  with open(path, "rb") as f: return read_chunks(iter(lambda: f.read(chunk_size), b""))

def _head(path: str) -> bytes:
  """The first bytes of a file's content (gunzipped when it is a gzip)."""
  with open(path, "rb") as f: raw = f.read(1 << 12)
  if raw[:2] != GZIP_MAGIC: return raw
  try: return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, 1 << 12)
  except zlib.error: return b""

def _pickle_kind(head: bytes) -> str | None:
  return "rewrites" if b"RewriteTrace" in head else "profile" if b"Profile" in head else None

def group_paths(paths: list[str]) -> list[list[str]]:
  """The files given, as runs: each file is one, except that tinygrad's rewrites.pkl and profile.pkl of one run (told
  by content; paired by name, `rewrites.pkl.X` with `profile.pkl.X`, or as the only two pickles given) make one."""
  pickles = []
  for p in paths:
    try: pickles.append(p) if is_pickle(_head(p)) else None
    except OSError: pass
  key = lambda p: os.path.join(os.path.dirname(p), os.path.basename(p).replace("rewrites", "\0").replace("profile", "\0"))
  pairs: dict[str, list[str]] = {}
  for p in pickles: pairs.setdefault(key(p), []).append(p)
  partner = {p: g for g in pairs.values() if len(g) == 2 for p in g}
  # otherwise, the only two pickles given, when one is a rewrites file and the other a profile (their first class names)
  if not partner and len(pickles) == 2 and {_pickle_kind(_head(p)) for p in pickles} == {"rewrites", "profile"}:
    partner = {p: pickles for p in pickles}
  out, done = [], set()
  for p in paths:
    if p in done: continue
    g = partner.get(p, [p])
    done.update(g)
    out.append(g)
  return out

def load_group(paths: list[str], chunk_size: int = CHUNK) -> Trace:
  """One run from the files of one group (group_paths): a single file, or tinygrad's two pickles read as one."""
  if len(paths) == 1: return load(paths[0], chunk_size)
  if not all(is_pickle(_head(p)) for p in paths):
    raise TraceError("several files make one run only as real tinygrad's rewrites.pkl and profile.pkl; give others one by one")
  blobs = []
  for p in paths:
    with open(p, "rb") as f: blobs.append((p, _pickle_bytes(iter(lambda: f.read(chunk_size), b""), p)))
  return read_pickles(blobs)

def _pickle_bytes(chunks: Iterator[bytes], label: str) -> bytes:
  warnings: list[ReadWarning] = []
  magic, chunks = _peek(chunks, 2)
  if magic[:2] == GZIP_MAGIC: chunks = gunzip_chunks(chunks, warnings)
  data = b"".join(_capped(chunks, warnings))
  if warnings: raise TraceError(f"{label}: {warnings[0]}")
  return data

def load_groups_reporting(groups: list[list[str]]) -> list[tuple[str, Trace]] | None:
  """For the terminal commands: each group read as one run, named by its files, its warnings on stderr; None, after
  saying which and why, when one cannot be read."""
  import sys
  out = []
  for g in groups:
    label = " + ".join(g)
    try: t = load_group(g)
    except (OSError, TraceError) as e:
      print(f"tinyviz: {label}: {e}", file=sys.stderr)
      return None
    for w in t.warnings: print(f"warning: {label}: {w}", file=sys.stderr)
    out.append((label, t))
  return out
