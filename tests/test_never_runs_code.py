"""gradaudit never runs the code it checks: not the project's modules, not the libraries it
resolves, not a project file that shadows a standard module, not the project's environment (its
interpreter, its compiled modules, its .pth files). A workspace whose every module would leave a
file behind when imported is analysed by the engine, the CLI (both entry points) and the
language server; no file appears, and the analysis did happen (its finding is there)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time

import pytest
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


# ---------------------------------------------------------------- the project's environment

VENV_TRAIN = """import torch
import torch.nn as nn
from trapmod import Model

model = Model()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    out = model(x).detach()
    loss = (out - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

NATIVE_C = """
#include <Python.h>
#include <stdio.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "_native", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__native(void) {
    FILE *f = fopen(MARKER, "w");
    if (f) { fputs("ran", f); fclose(f); }
    return PyModule_Create(&def);
}
"""


def _compile_native(path, marker) -> bool:
    """A compiled module that leaves `marker` when imported; False when no compiler is at hand."""
    cc = shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths()["include"]
    if cc is None or not os.path.isfile(os.path.join(include, "Python.h")):
        return False
    src = path + ".c"
    with open(src, "w") as fh:
        fh.write(NATIVE_C)
    r = subprocess.run(
        [cc, "-shared", "-fPIC", f"-I{include}", f'-DMARKER="{marker}"', src, "-o", path],
        capture_output=True,
        text=True,
    )
    os.unlink(src)
    return r.returncode == 0


def _workspace_with_venv(tmp_path):
    """A project whose .venv would leave a marker if its interpreter were started, a module of
    its library imported (the package, its compiled part) or a .pth file's code run."""
    ws, markers = tmp_path / "ws", tmp_path / "markers"
    site = ws / ".venv" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    for d in (site / "trapmod", ws / ".venv" / "bin", markers):
        d.mkdir(parents=True)
    (ws / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\ninclude-system-site-packages = false\n")
    python = ws / ".venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho ran > {markers / "python"}\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    (ws / ".venv" / "bin" / "python3").symlink_to("python")
    (site / "trapmod" / "__init__.py").write_text(_trap(markers, "trapmod") + "from ._native import Model\n")
    (site / "trap.pth").write_text(f"import os; open(os.path.join({str(markers)!r}, 'pth'), 'w').write('ran')\n")
    native = str(site / "trapmod" / ("_native" + sysconfig.get_config_var("EXT_SUFFIX")))
    if not _compile_native(native, str(markers / "native")):
        pytest.skip("no C compiler to build the compiled module")
    (ws / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    (ws / "train.py").write_text(VENV_TRAIN)
    return ws, markers, native


def _env_without_venv():
    env = clean_env()
    env.pop("VIRTUAL_ENV", None)
    env.pop("CONDA_PREFIX", None)
    return env


def test_jedi_imports_no_compiled_module_of_the_environment(tmp_path, monkeypatch):
    """The site index cannot follow `from ._native import Model` into a compiled module, so jedi is
    asked; jedi would import the module (in the active virtualenv's interpreter, or its own) to
    look into it. It answers without either, also with the project's .venv active."""
    from gradaudit.analysis.libraries import jedi_resolver
    from gradaudit.analysis.libraries.environment import find_env

    ws, markers, native = _workspace_with_venv(tmp_path)
    monkeypatch.setenv("VIRTUAL_ENV", str(ws / ".venv"))
    monkeypatch.setattr(jedi_resolver, "_projects", {})  # jedi's projects of earlier tests: a fresh one
    env = find_env(None, start=str(ws))
    assert (env.how, env.prefix) == ("virtualenv", str(ws / ".venv"))
    jedi_resolver.define(env, "trapmod.Model", timeout=120)
    assert not jedi_resolver.stats.get("last_timed_out")
    _assert_clean(markers)
    # the same question about a Python module is answered: jedi did follow the import
    os.unlink(native)
    (ws / ".venv" / "lib").joinpath(*os.path.relpath(native, ws / ".venv" / "lib").split(os.sep)).parent.joinpath(
        "_native.py"
    ).write_text("class Model:\n    pass\n")
    jedi_resolver._projects.clear()
    d = jedi_resolver.define(env, "trapmod.Model", timeout=120)
    assert d is not None and d.path.endswith("_native.py") and d.kind == "class"
    _assert_clean(markers)


@pytest.mark.parametrize("active", [False, True], ids=["discovered", "VIRTUAL_ENV"])
def test_the_cli_runs_nothing_of_the_project_environment(tmp_path, active):
    ws, markers, _ = _workspace_with_venv(tmp_path)
    env = _env_without_venv()
    if active:
        env["VIRTUAL_ENV"] = str(ws / ".venv")
    r = subprocess.run(
        [sys.executable, "-m", "gradaudit.analysis.app.cli", "check", "--no-cache", "--format", "json", "train.py"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    import json

    out = json.loads(r.stdout)
    (e,) = out["environments"]
    assert (e["path"], e["how"]) == (str(ws / ".venv"), "virtualenv" if active else "project")
    assert e["libraries"] == ["trapmod"]
    assert [f["code"] for f in out["findings"]] == ["GA101"]
    _assert_clean(markers)


def test_the_language_server_runs_nothing_of_the_project_environment(tmp_path):
    ws, markers, _ = _workspace_with_venv(tmp_path)
    uri = (ws / "train.py").as_uri()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradaudit.server"],
        cwd=ws,
        env=dict(_env_without_venv(), VIRTUAL_ENV=str(ws / ".venv")),
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
                    "initializationOptions": {"gradaudit": {"debounce": 0}},
                },
            )
        )
        proc.stdin.write(notify("initialized", {}))
        proc.stdin.write(
            notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": VENV_TRAIN}},
            )
        )
        proc.stdin.flush()
        logged, published = [], None
        while published is None:
            _, m = reader.until(lambda m: m.get("method") in ("textDocument/publishDiagnostics", "window/logMessage"))
            assert m is not None, proc.stderr.read().decode()[-3000:] if proc.poll() is not None else "no message"
            if m["method"] == "window/logMessage":
                logged.append(m["params"]["message"])
            elif m["params"]["uri"] == uri:
                published = m
        assert [d["code"] for d in published["params"]["diagnostics"]] == ["GA101"]
        proc.stdin.write(request(5, "shutdown"))
        proc.stdin.write(notify("exit"))
        proc.stdin.flush()
        _, m = reader.until(lambda m: m.get("id") == 5 or m.get("method") == "window/logMessage")
        while m.get("id") != 5:
            logged.append(m["params"]["message"])
            _, m = reader.until(lambda m: m.get("id") == 5 or m.get("method") == "window/logMessage")
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    # the server says which environment's libraries it read
    venv = ws / ".venv"
    assert f"gradaudit: Libraries read from {venv} (the active virtualenv, VIRTUAL_ENV)." in logged
    time.sleep(0.2)
    _assert_clean(markers)


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
