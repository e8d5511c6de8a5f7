"""gradaudit never runs the code it checks: not the project's modules, not the libraries it
resolves, not a project file that shadows a standard module. A workspace whose every module would
leave a file behind when imported is analysed by the engine, the CLI (both entry points) and the
language server; no file appears, and the analysis did happen (its finding is there)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from clitools import clean_env
from lspwire import Reader, notify, request

from gradaudit.analysis.check.engine import Analyzer

TRAIN = """import torch
import torch.nn as nn

import evil
from pkg.model import Net
from fancylib import helper

model = Net()
opt = torch.optim.SGD(model.parameters(), lr=helper(0.1))
for step in range(evil.steps()):
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    out = model(x).detach()
    loss = (out - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _trap(marker_dir, name) -> str:
    return f"import os\nopen(os.path.join({str(marker_dir)!r}, {name!r}), 'w').write('ran')\n"


def _workspace(tmp_path):
    ws, lib, markers = tmp_path / "ws", tmp_path / "lib", tmp_path / "markers"
    for d in (ws / "pkg", lib / "fancylib", markers):
        d.mkdir(parents=True)
    files = {
        ws / "evil.py": _trap(markers, "evil") + "def steps():\n    return 3\n",
        ws / "pkg" / "__init__.py": _trap(markers, "pkg"),
        ws / "pkg" / "model.py": _trap(markers, "pkg.model")
        + (
            "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n        return self.fc(x)\n"
        ),
        lib / "fancylib" / "__init__.py": _trap(markers, "fancylib") + "def helper(lr):\n    return lr * 0.5\n",
        ws / "setup.py": _trap(markers, "setup"),
        ws / "conftest.py": _trap(markers, "conftest"),
        ws / "sitecustomize.py": _trap(markers, "sitecustomize"),
        ws / "usercustomize.py": _trap(markers, "usercustomize"),
        # project files named like standard modules the tool itself imports
        ws / "argparse.py": _trap(markers, "argparse"),
        ws / "logging.py": _trap(markers, "logging"),
        ws / "pickle.py": _trap(markers, "pickle"),
        ws / "struct.py": _trap(markers, "struct"),
        ws / "difflib.py": _trap(markers, "difflib"),
        ws / "train.py": TRAIN,
    }
    for path, text in files.items():
        path.write_text(text)
    return ws, lib, markers


def _assert_clean(markers):
    assert sorted(os.listdir(markers)) == []


def test_the_engine_runs_nothing(tmp_path):
    ws, lib, markers = _workspace(tmp_path)
    result = Analyzer(extra_roots=[str(ws), str(lib)]).analyze_file(str(ws / "train.py"))
    assert [f.code for f in result.findings] == ["GA101"]
    _assert_clean(markers)


def test_the_cli_runs_nothing_from_inside_the_project(tmp_path):
    ws, lib, markers = _workspace(tmp_path)
    env = clean_env()
    env["PYTHONPATH"] = str(lib)  # the library is importable: it is still only read
    # `python -m` puts the project folder first on sys.path (argparse.py, difflib.py there)
    r = subprocess.run(
        [sys.executable, "-m", "gradaudit.analysis.app.cli", "check", "--diff", "."],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Would fix" in r.stderr, r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "gradaudit.analysis.app.cli", "check", "-j", "2", "."],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "GA101" in r.stdout, r.stderr
    script = os.path.join(os.path.dirname(sys.executable), "gradaudit")
    if os.path.exists(script):
        r = subprocess.run([script, "check", "train.py"], cwd=ws, env=env, capture_output=True, text=True, timeout=300)
        assert "GA101" in r.stdout, r.stderr
    _assert_clean(markers)


def test_the_language_server_runs_nothing(tmp_path):
    ws, lib, markers = _workspace(tmp_path)
    uri = (ws / "train.py").as_uri()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradaudit.server"],
        cwd=ws,
        env=clean_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    reader = Reader(proc.stdout)
    try:
        proc.stdin.write(
            request(
                1,
                "initialize",
                {
                    "processId": os.getpid(),
                    "rootUri": ws.as_uri(),
                    "capabilities": {},
                    "initializationOptions": {"gradaudit": {"debounce": 0, "extraPaths": [str(lib)]}},
                },
            )
        )
        proc.stdin.write(notify("initialized", {}))
        proc.stdin.write(
            notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": TRAIN}},
            )
        )
        proc.stdin.flush()
        _, published = reader.until(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        assert [d["code"] for d in published["params"]["diagnostics"]] == ["GA101"]
        line = TRAIN.splitlines().index("    loss.backward()")
        proc.stdin.write(
            request(
                2, "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": 10}}
            )
        )
        proc.stdin.write(request(3, "textDocument/codeLens", {"textDocument": {"uri": uri}}))
        proc.stdin.write(
            request(4, "workspace/executeCommand", {"command": "gradaudit.showTrainingGraph", "arguments": [uri]})
        )
        proc.stdin.write(notify("textDocument/didSave", {"textDocument": {"uri": uri}}))
        proc.stdin.flush()
        answered = set()
        while not answered >= {2, 3, 4}:
            _, m = reader.until(lambda m: "id" in m)
            answered.add(m["id"])
        proc.stdin.write(request(5, "shutdown"))
        proc.stdin.write(notify("exit"))
        proc.stdin.flush()
        reader.until(lambda m: m.get("id") == 5)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    time.sleep(0.2)
    _assert_clean(markers)
