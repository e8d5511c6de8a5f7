import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

# Library summaries go to a cache folder of this test session, not the user's cache.
if "GRADAUDIT_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["GRADAUDIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="gradaudit-test-cache-")
    # removed by the process that made it (xdist workers inherit the variable and make none)
    atexit.register(shutil.rmtree, os.environ["GRADAUDIT_CACHE_DIR"], ignore_errors=True)
