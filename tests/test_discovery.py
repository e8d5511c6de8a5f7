"""Which files `gradaudit check` walks: .gitignore respected as git does (issue 14: `gradaudit
check .` at the repository's root analysed the 457 bundled files under vscode-extension/bundled),
and the rules of .gitignore compared with git itself on random trees."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from clitools import REPO, codes_in, run_cli, write, write_example
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradaudit.analysis.check.config import Config
from gradaudit.analysis.check.discovery import discover
from gradaudit.analysis.check.gitignore import GitIgnore

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def rel(files, root):
    return sorted(os.path.relpath(f, root).replace(os.sep, "/") for f in files)


def test_check_at_the_repository_root_skips_what_gitignore_ignores(tmp_path):
    # this repository's own .gitignore, with a bundle built into vscode-extension/bundled
    proj = tmp_path / "repo"
    (proj / ".git").mkdir(parents=True)
    shutil.copy(REPO / ".gitignore", proj / ".gitignore")
    write_example(proj / "train.py", "GA101")
    write_example(proj / "vscode-extension" / "bundled" / "libs" / "gradaudit" / "x.py", "GA101")
    write_example(proj / "vscode-extension" / "out" / "y.py", "GA101")
    write_example(proj / "build" / "lib" / "z.py", "GA101")
    r = run_cli("check", ".", cwd=proj)
    assert r.returncode == 1 and "in 1 file checked." in r.stdout, r.stdout
    r = run_cli("check", "--no-respect-gitignore", ".", cwd=proj)
    assert "in 3 files checked." in r.stdout, r.stdout  # build/ stays skipped by name
    write(proj / "pyproject.toml", "[tool.gradaudit]\nrespect-gitignore = false\n")
    assert "in 3 files checked." in run_cli("check", ".", cwd=proj).stdout
    # a file named on the command line is checked anyway
    r = run_cli("check", "vscode-extension/out/y.py", cwd=proj)
    assert codes_in(r.stdout) == {"GA101"}


def test_the_real_repository_root():
    files, _ = discover([str(REPO)], Config())
    names = rel(files, REPO)
    assert not any(n.startswith(("vscode-extension/bundled/", "vscode-extension/.e2e/", ".venv/")) for n in names)
    assert "analysis/check/engine.py" in names and "examples/gan_training.py" in names


def test_gitignore_rules(tmp_path):
    root = tmp_path / "r"
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "info" / "exclude").write_text("secret_*.py\n")
    (root / ".gitignore").write_text(
        "# comment\n*.gen.py\n/top_only.py\nlogs/\n!keep.gen.py\ndocs/**/draft.py\n\\#hash.py\n[ab]x.py\n"
    )
    (root / "sub" / ".gitignore").parent.mkdir()
    (root / "sub" / ".gitignore").write_text("local.py\n!/../top_only.py\n")
    names = [
        "a.py",
        "x.gen.py",
        "keep.gen.py",
        "top_only.py",
        "sub/top_only.py",
        "logs/l.py",
        "sub/logs/l.py",
        "docs/draft.py",
        "docs/a/b/draft.py",
        "#hash.py",
        "ax.py",
        "cx.py",
        "sub/local.py",
        "local.py",
        "secret_1.py",
        "sub/secret_2.py",
    ]
    for n in names:
        write(root / n, "x = 1\n")
    files, _ = discover([str(root)], Config())
    assert rel(files, root) == sorted(["a.py", "keep.gen.py", "sub/top_only.py", "cx.py", "local.py"])
    if shutil.which("git"):
        shutil.rmtree(root / ".git")
        subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
        (root / ".git" / "info").mkdir(exist_ok=True)
        (root / ".git" / "info" / "exclude").write_text("secret_*.py\n")
        git = subprocess.run(
            ["git", "ls-files", "--others", "--exclude-standard"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.split()
        assert sorted(p for p in git if p.endswith(".py")) == rel(files, root)


def test_gitignore_of_the_folders_above_up_to_the_repository(tmp_path):
    root = tmp_path / "r"
    (root / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("generated/\n")
    write(root / "pkg" / "generated" / "g.py", "x = 1\n")
    write(root / "pkg" / "m.py", "x = 1\n")
    assert rel(discover([str(root / "pkg")], Config())[0], root / "pkg") == ["m.py"]
    # above the repository nothing applies
    (tmp_path / ".gitignore").write_text("*.py\n")
    assert rel(discover([str(root / "pkg")], Config())[0], root / "pkg") == ["m.py"]


# random trees and .gitignore files: the files gradaudit walks are those git does not ignore

NAMES = ["a", "b", "c.gen", "dist2", "logs", "x"]
PATTERNS = [
    "*.gen.py",
    "a.py",
    "/a.py",
    "b/",
    "logs/",
    "!a.py",
    "!b/c.gen.py",
    "x/**/a.py",
    "**/b.py",
    "b/*.py",
    "*",
    "!*.py",
    "c*",
    "!logs/",
    "/x/",
    "?.py",
    "[ab].py",
    "x/b",
    "dist2/a.py",
]


@st.composite
def tree(draw):
    paths = draw(st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3), min_size=1, max_size=8))
    ignores = {}
    for folder in ["", "x", "b"]:
        if draw(st.booleans()):
            ignores[folder] = draw(st.lists(st.sampled_from(PATTERNS), max_size=4))
    return ["/".join(p) + ".py" for p in paths], ignores


@needs_git
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(tree())
def test_gitignore_agrees_with_git(tmp_path_factory, case):
    files, ignores = case
    root = tmp_path_factory.mktemp("tree")
    made = []
    for f in files:
        path = root / f
        if any((root / Path).is_file() for Path in _parents(f)):
            continue  # a file where a folder is wanted
        if path.is_dir():
            continue
        write(path, "x = 1\n")
        made.append(f)
    for folder, patterns in ignores.items():
        if (root / folder).is_file():
            continue
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / ".gitignore").write_text("\n".join(patterns) + "\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    git = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "-z"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    want = sorted(p for p in git if p.endswith(".py"))
    got = rel(discover([str(root)], Config())[0], root)
    assert got == want, (ignores, made)


def _parents(f):
    parts = f.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def test_gitignore_outside_any_repository_applies_from_the_walked_folder(tmp_path):
    (tmp_path / ".gitignore").write_text("skip/\n")
    write(tmp_path / "skip" / "a.py", "x = 1\n")
    write(tmp_path / "b.py", "x = 1\n")
    assert rel(discover([str(tmp_path)], Config())[0], tmp_path) == ["b.py"]
    assert GitIgnore(str(tmp_path)).ignored(str(tmp_path / "skip"), True)
