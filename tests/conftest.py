# Every test session gets its own empty engine cache (compiled kernels, plans, programs, the server's state), as CI's
# fresh machine has: a second run on one machine then tests what the first did, not what an older tree left on disk.
# Subprocesses inherit it; tests that need another cache set TINYVIZ_CACHE themselves. Removed when the session ends.
import atexit, os, shutil, tempfile

os.environ["TINYVIZ_CACHE"] = _cache = tempfile.mkdtemp(prefix="tinyviz-test-cache-")
atexit.register(shutil.rmtree, _cache, ignore_errors=True)
