import collections
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

# Library summaries go to a cache folder of this test session, not the user's cache.
if "GRADAUDIT_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["GRADAUDIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="gradaudit-test-cache-")
    # removed by the process that made it (xdist workers inherit the variable and make none)
    atexit.register(shutil.rmtree, os.environ["GRADAUDIT_CACHE_DIR"], ignore_errors=True)


@pytest.fixture
def runs(monkeypatch):
    """How many times each function's body was analysed (interp.calls._run_function), by qualified
    name: what repeats.py and summaries.py spare."""
    from gradaudit.analysis.interp import calls

    count: collections.Counter = collections.Counter()
    run = calls._run_function

    def counted(ip, fn, *rest):
        count[fn.qual] += 1
        return run(ip, fn, *rest)

    monkeypatch.setattr(calls, "_run_function", counted)
    return count
