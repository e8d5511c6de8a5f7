"""`gradaudit server --check`: editors run it to test an installation before starting the server,
so it must import everything the server and its workers import, and name what fails."""

import json
import os
import subprocess
import sys

import pytest

from gradaudit.server import __main__ as entry

SERVER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "server")
MODULES = sorted(f[:-3] for f in os.listdir(SERVER) if f.endswith(".py") and f not in ("__main__.py", "__init__.py"))


def test_check_passes_here():
    p = subprocess.run(
        [sys.executable, "-m", "gradaudit.server", "--check"], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["ok"] is True and got["python"] == ".".join(map(str, sys.version_info[:3]))


@pytest.mark.parametrize("module", MODULES + ["pygls.lsp.server", "gradaudit.analysis.check.engine"])
def test_a_module_that_cannot_be_imported_fails_the_check(module, monkeypatch, capsys):
    # None in sys.modules makes its import fail, as a missing file or dependency does
    name = module if "." in module else f"gradaudit.server.{module}"
    monkeypatch.setitem(sys.modules, name, None)
    assert entry.check() == 1
    got = json.loads(capsys.readouterr().out)
    assert got["ok"] is False and name in got["error"]
