"""The gradaudit engine: a static model of PyTorch training steps, and the rules that read it."""

__version__ = "0.1.0"

import sys as _sys

# `python -m gradaudit...` puts the current folder (a user's project) first on sys.path: their
# `logging.py` or `queue.py` would be imported in place of the standard library's, that is, their
# code run. gradaudit never runs user code: the folder comes off the path before anything imports.
if _sys.argv[:1] == ["-m"] and _sys.path and _sys.path[0] in ("", __import__("os").getcwd()):
    del _sys.path[0]
