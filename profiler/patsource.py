"""The source text of a pattern, found from its (file, line) when the trace is recorded.

Read at record time, not view time, so the text matches the code that ran even after an edit; and taken
from the AST, so a pattern entry spread over several lines comes out whole.
"""
from __future__ import annotations
import ast, re, tokenize

def _split_lines(text: str) -> list[str]:
  # the line breaks the tokenizer knows (str.splitlines also splits on form feeds and other separators)
  out, start = [], 0
  for m in re.finditer(r"\r\n|\r|\n", text):
    out.append(text[start:m.end()])
    start = m.end()
  return out + ([text[start:]] if start < len(text) else [])

class _File:
  """A source file parsed once: its lines, and its expression/statement nodes by first line with their parents."""
  def __init__(self, path: str):
    self.tree: ast.AST | None = None
    self.lines: list[bytes] = []
    self.parents: dict[ast.AST, ast.AST] = {}
    self.by_line: dict[int, list[ast.AST]] = {}
    try:
      with tokenize.open(path) as f: text = f.read()
      self.tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError): return
    self.lines = [l.encode() for l in _split_lines(text)]  # ast columns are UTF-8 byte offsets
    stack = [self.tree]
    while stack:
      node = stack.pop()
      if isinstance(node, (ast.expr, ast.stmt)): self.by_line.setdefault(node.lineno, []).append(node)
      for child in ast.iter_child_nodes(node):
        self.parents[child] = node
        stack.append(child)

  def segment(self, n: ast.AST) -> str:
    first, last = n.lineno - 1, (n.end_lineno or n.lineno) - 1  # type: ignore[attr-defined]
    if last >= len(self.lines): return ""
    if first == last: return self.lines[first][n.col_offset:n.end_col_offset].decode(errors="replace")  # type: ignore[attr-defined]
    parts = [self.lines[first][n.col_offset:]] + self.lines[first + 1:last] + [self.lines[last][:n.end_col_offset]]  # type: ignore[attr-defined]
    return b"".join(parts).decode(errors="replace")

  def line_text(self, line: int) -> str:
    return self.lines[line - 1].decode(errors="replace").strip() if 0 < line <= len(self.lines) else ""

_files: dict[str, _File] = {}

def pattern_source(path: str, line: int) -> str:
  """The pattern entry starting at path:line: the `(UPat(...), fn)` list element, a function's `def` line (a whole-graph
  step, uop.ops.graph_step), else the outermost expression starting on that line, else the line itself; "" when the
  file cannot be read."""
  f = _files.get(path)
  if f is None: f = _files[path] = _File(path)
  if f.tree is None: return ""
  starts = f.by_line.get(line, [])
  if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in starts): return f.line_text(line)  # a traced step's function: its def line
  exprs = [n for n in starts if isinstance(n, ast.expr)]
  if not exprs: return f.line_text(line)
  # a PatternMatcher entry: a tuple inside a list/tuple whose first element starts on this line
  entries = [n for n in exprs if isinstance(n, ast.Tuple) and n.elts and n.elts[0].lineno == line
             and isinstance(f.parents.get(n), (ast.List, ast.Tuple))]
  if len(entries) == 1: return f.segment(entries[0])
  if len(entries) > 1: return f.line_text(line)  # several patterns on one line: the line is the honest answer
  # otherwise the outermost expression that starts here (e.g. `UPat.var("x") + 0` or `pat = UPat(...)`'s value)
  outer = [n for n in exprs if not (isinstance(p := f.parents.get(n), ast.expr) and p.lineno == line)]
  best = max(outer or exprs, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0, -n.col_offset))
  return f.segment(best)

def clear_cache() -> None: _files.clear()
