"""Creating trace files and their folders so that no other user can plant a link or read them: folders 0700 and
checked to be this user's own, files 0600, opened with O_NOFOLLOW (a planted link is refused, not followed) and, for
names we made up, O_EXCL (a file planted at the predictable name is refused, never overwritten)."""
from __future__ import annotations
import os, stat

def private_dir(path: str) -> str:
  """Makes `path` (mode 0700) or checks that the existing one is a real folder of this user's; returns it."""
  os.makedirs(path, mode=0o700, exist_ok=True)
  st = os.lstat(path)
  if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
    raise PermissionError(f"{path} is not a folder (a link?): refusing to write traces there")
  if hasattr(os, "getuid") and st.st_uid != os.getuid():
    raise PermissionError(f"{path} belongs to another user (uid {st.st_uid}): refusing to write traces there; "
                          "set TINYVIZ_TRACE_DIR to a folder of your own")
  if st.st_mode & 0o077: os.chmod(path, 0o700)
  return path

def create_private(path: str, exclusive: bool) -> int:
  """Opens `path` for writing as a new 0600 file and returns its descriptor. A link at `path` is refused; with
  `exclusive`, so is any existing file (else an existing regular file is truncated)."""
  if d := os.path.dirname(path):
    if not os.path.isdir(d): os.makedirs(d, mode=0o700, exist_ok=True)
  flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
  flags |= os.O_EXCL if exclusive else os.O_TRUNC
  try: return os.open(path, flags, 0o600)
  except FileExistsError: raise FileExistsError(f"{path} already exists (planted?): not overwriting it") from None
  except OSError as e:
    if os.path.islink(path): raise PermissionError(f"{path} is a symbolic link: refusing to write through it") from None
    raise e
