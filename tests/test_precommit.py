"""The pre-commit hook (.pre-commit-hooks.yaml) with the real pre-commit, as docs/ci.md says to
use it: a project's .pre-commit-config.yaml naming a clone of gradaudit and a rev, `pre-commit
install`, then `git commit` refused while a training script has a finding, and accepted once it is
fixed. Slow: pre-commit builds gradaudit's environment (pygls and lsprotocol from PyPI)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from clitools import REPO, example, write

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]

GIT = [
    "git",
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@example.invalid",
    "-c",
    "init.defaultBranch=main",
    "-c",
    "commit.gpgsign=false",
]


def sh(*cmd, cwd, env=None, check=True):
    r = subprocess.run(
        [str(c) for c in cmd],
        cwd=str(cwd),
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    if check:
        assert r.returncode == 0, f"{' '.join(map(str, cmd))}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """A clone of this working tree (what `git ls-files` would commit), as a git repository."""
    where = tmp_path_factory.mktemp("gradaudit-clone")
    files = sh("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO).stdout.split("\0")
    for rel in filter(None, files):
        src = REPO / rel
        if src.is_file():
            (where / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, where / rel)
    sh(*GIT, "init", "-q", cwd=where)
    sh(*GIT, "add", "-A", cwd=where)
    sh(*GIT, "commit", "-q", "-m", "gradaudit", cwd=where)
    return where, sh("git", "rev-parse", "HEAD", cwd=where).stdout.strip()


def project(tmp_path, config: str):
    proj = tmp_path / "proj"
    proj.mkdir()
    sh(*GIT, "init", "-q", cwd=proj)
    source, _, ex = example("GA101")
    write(proj / "train.py", source)
    write(proj / "clean.py", "x = 1\n")
    write(proj / ".pre-commit-config.yaml", config)
    return proj, source, ex.fixed


def env_for(tmp_path, path_first=None):
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), HOME=str(tmp_path / "home"))
    env.pop("PYTHONPATH", None)
    if path_first:
        env["PATH"] = path_first + os.pathsep + env.get("PATH", "")
    return env


def commit_flow(proj, env, fixed):
    pre_commit = [sys.executable, "-m", "pre_commit"]
    sh(*pre_commit, "install", cwd=proj, env=env)
    sh(*GIT, "add", "-A", cwd=proj)
    refused = sh(*GIT, "commit", "-m", "add training", cwd=proj, env=env, check=False)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0, out
    assert "gradaudit" in out and "Failed" in out and "train.py:12:13: GA101 [confirmed]" in out, out
    write(proj / "train.py", fixed)
    sh(*GIT, "add", "-A", cwd=proj)
    accepted = sh(*GIT, "commit", "-m", "add training", cwd=proj, env=env, check=False)
    out = accepted.stdout + accepted.stderr
    assert accepted.returncode == 0 and "Passed" in out, out
    # and on demand, as docs/ci.md shows
    assert sh(*pre_commit, "run", "gradaudit", "--all-files", cwd=proj, env=env).returncode == 0


def ci_doc_configs() -> list:
    """The .pre-commit-config.yaml examples of docs/ci.md, as written."""
    text = (REPO / "docs" / "ci.md").read_text()
    return [b for b in re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M) if b.startswith("repos:")]


def test_hook_from_a_clone_of_gradaudit(tmp_path, hook_repo):
    repo, rev = hook_repo
    config = ci_doc_configs()[0]
    assert "repo: /path/to/gradaudit" in config and "rev: main" in config
    config = config.replace("/path/to/gradaudit", str(repo))  # rev: main, the clone's branch
    proj, _, fixed = project(tmp_path, config)
    commit_flow(proj, env_for(tmp_path), fixed)


def test_local_hook_with_gradaudit_installed(tmp_path):
    # docs/ci.md's second form: `language: system`, gradaudit on PATH
    config = ci_doc_configs()[1]
    assert "repo: local" in config
    proj, _, fixed = project(tmp_path, config)
    commit_flow(proj, env_for(tmp_path, os.path.dirname(sys.executable)), fixed)
