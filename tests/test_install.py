"""Installing gradaudit into a fresh virtualenv, as a user would: `pip install .` and
`pip install -e .`; then `gradaudit check` from another folder. Slow: builds venvs, reaches PyPI."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from clitools import REPO, clean_env, write, write_example

pytestmark = pytest.mark.slow

RUNTIME_DEPS = {"pygls", "lsprotocol", "jedi", "tomli"}
COPY_IGNORE = shutil.ignore_patterns(
    ".venv",
    "venv",
    ".git",
    "*.egg-info",
    "build",
    "dist",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    "node_modules",
    ".cache",
    "*.vsix",
)

PROBE = r"""
import importlib.metadata as md, importlib.util as iu, json, sys, sysconfig
import gradaudit.analysis, gradaudit.analysis.app.cli, gradaudit.analysis.rules
print(json.dumps({
    "analysis_file": gradaudit.analysis.__file__,
    "rules": len(gradaudit.analysis.rules.RULES),
    "requires": md.requires("gradaudit") or [],
    "version": md.version("gradaudit"),
    "found": {name: iu.find_spec(name) is not None
              for name in ("torch", "analysis", "server", "pygls", "lsprotocol")},
    "purelib": sysconfig.get_paths()["purelib"],
    "rule_page": __import__("gradaudit.server.convert", fromlist=["rule_page"]).rule_page("GA101"),
    "platlib": sysconfig.get_paths()["platlib"],
}))
"""


def base_python() -> str:
    """The interpreter the project's .venv was made from."""
    v = sys.version_info
    for name in (f"python{v.major}.{v.minor}", f"python{v.major}", "python"):
        candidate = Path(sys.base_prefix) / "bin" / name
        if candidate.exists():
            return str(candidate)
    return getattr(sys, "_base_executable", sys.executable)


def sh(*cmd, cwd, timeout=900) -> subprocess.CompletedProcess:
    r = subprocess.run(
        [str(c) for c in cmd], cwd=str(cwd), env=clean_env(), capture_output=True, text=True, timeout=timeout
    )
    return r


def make_venv(where: Path) -> Path:
    r = sh(base_python(), "-m", "venv", where, cwd=where.parent)
    assert r.returncode == 0, r.stderr
    return where / "bin"


def pip_install(bindir: Path, *args, cwd):
    r = sh(bindir / "python", "-m", "pip", "install", "--disable-pip-version-check", *args, cwd=cwd)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def check_installed(bindir: Path, workdir: Path, editable: bool, source_root: Path):
    elsewhere = workdir / "elsewhere"
    elsewhere.mkdir()
    r = sh(bindir / "python", "-c", PROBE, cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)

    # import names live under gradaudit.: no bare `analysis` / `server` package anywhere on the path
    assert info["found"]["analysis"] is False
    assert info["found"]["server"] is False
    for lib in {info["purelib"], info["platlib"]}:
        top = set(os.listdir(lib))
        assert not top & {"analysis", "server", "analysis.py", "server.py"}, sorted(top)
    if editable:
        assert Path(info["analysis_file"]).resolve() == (source_root / "analysis" / "__init__.py").resolve()
    else:
        assert Path(info["analysis_file"]).resolve().is_relative_to(Path(info["purelib"]).resolve())
        assert "gradaudit" in os.listdir(info["purelib"])
    n_rules = len(list((source_root / "analysis" / "rules").glob("ga[0-9][0-9][0-9]_*.py")))
    assert info["rules"] == n_rules
    # the rule pages ship inside the package: diagnostics link to them (nothing written elsewhere)
    page = Path(info["rule_page"])
    assert page.is_file() and page.read_text().splitlines()[1].startswith("# GA101 ")
    if editable:
        assert page.resolve() == (source_root / "docs" / "rules" / "GA101.md").resolve()
    else:
        assert page.resolve() == (Path(info["purelib"]) / "gradaudit" / "docs" / "rules" / "GA101.md").resolve()

    # runtime dependencies: exactly these; torch only as a test extra, and not installed
    assert info["found"]["torch"] is False
    assert all(info["found"][name] for name in ("pygls", "lsprotocol"))
    runtime = [req for req in info["requires"] if "extra ==" not in req]
    names = {re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower() for req in runtime}
    assert names == RUNTIME_DEPS
    [tomli] = [req for req in runtime if req.lower().startswith("tomli")]
    assert re.search(r"python_version\s*<\s*[\"']3\.11[\"']", tomli), tomli
    assert any(req.startswith("torch") and "extra ==" in req for req in info["requires"])
    pip_list = sh(bindir / "python", "-m", "pip", "list", "--format", "json", cwd=elsewhere)
    assert "torch" not in {p["name"].lower() for p in json.loads(pip_list.stdout)}
    assert sh(bindir / "python", "-m", "pip", "check", cwd=elsewhere).returncode == 0

    # the console script, from another folder
    write_example(elsewhere / "train.py", "GA101")
    write(elsewhere / "clean.py", "x = 1\n")
    r = sh(bindir / "gradaudit", "check", "train.py", cwd=elsewhere)
    assert r.returncode == 1, r.stderr
    assert r.stdout.startswith("train.py:12:13: GA101 [confirmed] "), r.stdout
    r = sh(bindir / "gradaudit", "check", "--format", "json", str(elsewhere), cwd=workdir)
    findings = json.loads(r.stdout)["findings"]
    assert [(Path(f["path"]).name, f["line"], f["code"]) for f in findings] == [("train.py", 12, "GA101")]
    assert sh(bindir / "gradaudit", "check", "clean.py", cwd=elsewhere).returncode == 0
    r = sh(bindir / "gradaudit", "rules", cwd=elsewhere)
    assert r.returncode == 0 and len(r.stdout.strip().splitlines()) == n_rules
    assert sh(bindir / "gradaudit", "rule", "GA999", cwd=elsewhere).returncode == 2
    r = sh(bindir / "gradaudit", "--version", cwd=elsewhere)
    assert r.stdout.strip() == f"gradaudit {info['version']}"


def test_pip_install(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=COPY_IGNORE)
    bindir = make_venv(tmp_path / "venv")
    pip_install(bindir, str(src), cwd=tmp_path)
    check_installed(bindir, tmp_path, editable=False, source_root=src)


def test_pip_install_editable(tmp_path):
    bindir = make_venv(tmp_path / "venv")
    pip_install(bindir, "-e", str(REPO), cwd=tmp_path)
    check_installed(bindir, tmp_path, editable=True, source_root=REPO)
