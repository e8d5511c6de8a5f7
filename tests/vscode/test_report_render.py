"""The audit report in the Chromium the end-to-end tests install: its Mermaid blocks rendered by the
real mermaid package (npm), and the HTML page opened from disk with no request but itself.
Screenshots are kept in vscode-extension/.e2e/artifacts/report/."""

import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXT = os.path.join(ROOT, "vscode-extension")
NPM = shutil.which("npm")
ARTIFACTS = os.path.join(EXT, ".e2e", "artifacts", "report")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(NPM is None, reason="npm is not installed")]


def run(cmd, cwd=EXT, timeout=1800):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p.stdout


def test_report_renders_in_chromium(tmp_path):
    lock = os.path.join(EXT, "package-lock.json")
    stamp = os.path.join(EXT, "node_modules", ".package-lock.json")
    if not os.path.exists(stamp) or os.path.getmtime(stamp) < os.path.getmtime(lock):
        run([NPM, "ci", "--no-audit", "--no-fund"])
    run(["bash", os.path.join(EXT, "scripts", "install-e2e.sh")])
    md, html = tmp_path / "report.md", tmp_path / "report.html"
    for out in (md, html):
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "gradaudit.analysis.app.cli",
                "audit",
                "examples",
                os.path.join("vscode-extension", "test", "e2e", "train.py"),
                "-o",
                str(out),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert p.returncode == 1 and out.exists(), p.stderr
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    p = subprocess.run(
        ["node", os.path.join("test", "e2e", "report.mjs"), str(md), str(html), ARTIFACTS],
        cwd=EXT,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert p.stdout.strip(), p.stderr
    seen = json.loads(p.stdout.strip().splitlines()[-1])
    assert p.returncode == 0, seen
    steps = md.read_text().count("```mermaid\n")
    assert seen["blocks"] == steps == 10  # the nine steps of examples/ (one in a notebook) and train.py
    assert all(r["ok"] for r in seen["mermaid"]), seen["mermaid"]
    assert seen["cutEdges"] >= 3  # the .item() and .detach() breaks, drawn red
    assert seen["stopEdges"] >= 1  # the GAN's valid fake.detach(), drawn grey
    assert seen["requests"] == [html.as_uri()]  # nothing but the page itself
    assert seen["htmlGraphs"] == steps and len(seen["htmlSections"]) == 5
    for shot in ("report-mermaid.png", "report-html.png"):
        assert os.path.getsize(os.path.join(ARTIFACTS, shot)) > 20_000
