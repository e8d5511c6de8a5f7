import fcntl
import hashlib
import os
import tempfile

import pytest

EXT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "vscode-extension")


@pytest.fixture(scope="module", autouse=True)
def one_extension_module_at_a_time():
    """The modules here share vscode-extension/ (node_modules, the .vsix, .e2e and its artifacts),
    which their set-up rewrites: with pytest-xdist, one module at a time uses it, whole."""
    key = hashlib.sha256(EXT.encode()).hexdigest()[:16]
    with open(os.path.join(tempfile.gettempdir(), f"gradaudit-vscode-extension-{key}.lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
