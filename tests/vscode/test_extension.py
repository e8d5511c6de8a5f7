"""The VS Code extension (vscode-extension/): its TypeScript unit tests and type check, the graph
contract with the engine, the packaged .vsix, and real VS Code end to end (code-server + Chromium,
installed by vscode-extension/scripts/install-e2e.sh)."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from gradaudit.analysis.engine import Analyzer
from gradaudit.analysis.summary import graph

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXT = os.path.join(ROOT, "vscode-extension")
NPM = shutil.which("npm")
ARTIFACTS = os.path.join(EXT, ".e2e", "artifacts")

needs_npm = pytest.mark.skipif(NPM is None, reason="npm is not installed")


def run(cmd, timeout=900, env=None, cwd=EXT):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                       env=dict(os.environ, **(env or {})))
    assert p.returncode == 0, f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}"
    return p.stdout


@pytest.fixture(scope="module")
def node_modules():
    lock = os.path.join(EXT, "package-lock.json")
    stamp = os.path.join(EXT, "node_modules", ".package-lock.json")
    if not os.path.exists(stamp) or os.path.getmtime(stamp) < os.path.getmtime(lock):
        run([NPM, "ci", "--no-audit", "--no-fund"])


@needs_npm
def test_unit_tests(node_modules):
    out = run([NPM, "test"])
    assert "# fail 0" in out
    assert int(out.split("# pass ")[1].split()[0]) >= 20


@needs_npm
def test_typecheck(node_modules):
    run([NPM, "run", "typecheck"])


@pytest.mark.parametrize("name", ["gan_training", "finetune_classifier"])
def test_graph_fixture_is_the_engines_output(name):
    # the extension's unit tests draw these files: they must stay what the server returns
    fixture = os.path.join(EXT, "test", "unit", "fixtures", f"graph_{name}.json")
    with open(fixture) as fh:
        expected = json.load(fh)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        result = Analyzer().analyze_file(f"examples/{name}.py")
    finally:
        os.chdir(cwd)
    actual = graph(result.model)
    expected.pop("uri")
    assert actual == expected


def test_settings_match_the_server():
    # every setting the extension sends is one server/settings.py reads, and the reverse
    with open(os.path.join(EXT, "package.json")) as fh:
        manifest = json.load(fh)
    declared = {k.split(".", 1)[1] for k in manifest["contributes"]["configuration"]["properties"]}
    sent = {"select", "ignore", "severity", "codeLens", "debounce", "extraPaths"}
    client_only = {"importStrategy", "interpreter", "path", "trace.server"}
    assert declared == sent | client_only
    from gradaudit.server.settings import Settings
    s = Settings.from_client({"gradaudit": {"select": ["GA1"], "ignore": ["GA105"], "severity": {"suspicious": "hint"},
                                            "codeLens": False, "debounce": 0, "extraPaths": ["src"]}})
    assert (s.select, s.ignore, s.severity, s.code_lens, s.debounce_ms, s.extra_paths) == \
        (("GA1",), ("GA105",), {"suspicious": "hint"}, False, 0, ("src",))


@pytest.fixture(scope="module")
def vsix(node_modules):
    run([NPM, "run", "package"], env={"GRADAUDIT_BUNDLE_PYTHON": sys.executable}, timeout=900)
    return os.path.join(EXT, "gradaudit.vsix")


@pytest.mark.slow
@needs_npm
def test_vsix_ships_the_bundled_server(vsix):
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
    assert "extension/dist/extension.js" in names
    assert "extension/bundled/libs/gradaudit/server/server.py" in names
    assert "extension/bundled/libs/gradaudit/analysis/engine.py" in names
    assert any(n.startswith("extension/bundled/libs/pygls/") for n in names)
    assert not any("/src/" in n and n.endswith(".ts") for n in names)
    assert not any("node_modules" in n for n in names)       # vscode-languageclient is bundled by esbuild
    assert manifest["main"] == "./dist/extension.js"
    assert "onLanguage:python" in manifest["activationEvents"]


@pytest.mark.slow
@needs_npm
def test_bundled_server_runs_without_installing_gradaudit(vsix, tmp_path):
    # what useBundled does: a plain interpreter, the bundle on PYTHONPATH, nothing installed
    with zipfile.ZipFile(vsix) as z:
        z.extractall(tmp_path)
    libs = tmp_path / "extension" / "bundled" / "libs"
    python = shutil.which("python3")
    env = {"PYTHONPATH": str(libs), "PYTHONNOUSERSITE": "1"}
    out = run([python, "-c", "import gradaudit.server.server as s, gradaudit.analysis.engine as e; print(s.__file__)"],
              env=env, cwd=str(tmp_path))
    assert out.strip().startswith(str(libs))
    out = subprocess.run([python, "-m", "gradaudit.analysis.cli", "check", os.path.join(EXT, "test", "e2e", "train.py")],
                         cwd=str(tmp_path), capture_output=True, text=True, env=dict(os.environ, **env), timeout=120)
    assert out.returncode == 1 and "GA101" in out.stdout, out.stdout + out.stderr


@pytest.mark.slow
@needs_npm
def test_real_vscode(vsix):
    """code-server + Chromium: squiggle, Problems row, the audit report in the Markdown preview with its
    Mermaid graphs drawn, Ctrl+. quick fix, row gone, graph view.
    Screenshots are kept in vscode-extension/.e2e/artifacts/."""
    run(["bash", os.path.join(EXT, "scripts", "install-e2e.sh")], timeout=1800)
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    p = subprocess.run(["node", os.path.join(EXT, "test", "e2e", "run.mjs")], cwd=EXT, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL,
                       timeout=900, env=dict(os.environ, E2E_ARTIFACTS=ARTIFACTS, GRADAUDIT_VSIX=vsix))
    print(p.stdout)
    assert p.returncode == 0 and "11 passed, 0 failed" in p.stdout, p.stdout[-4000:] + p.stderr[-4000:]
    for shot in ("1-diagnostic.png", "2-audit-report.png", "2-audit-graph.png", "3-quick-fix-menu.png", "4-fixed.png", "5-graph.png"):
        assert os.path.getsize(os.path.join(ARTIFACTS, shot)) > 10_000
