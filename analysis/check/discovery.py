"""Which files a check covers: given files as they are, folders walked recursively (skipping tool
and build folders, virtualenvs, the configured `exclude` and what .gitignore files ignore)."""

from __future__ import annotations

import errno
import os

from .gitignore import GitIgnore

SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "node_modules",
    "build",
    "dist",
    "site-packages",
    ".eggs",
    ".ipynb_checkpoints",
    ".idea",
    ".vscode",
    "__pypackages__",
    ".hypothesis",
}


def _is_env(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg")) or os.path.isfile(
        os.path.join(path, "conda-meta", "history")
    )


def discover(paths, config=None, nested_repos: bool = True) -> tuple[list[str], list]:
    """(files, problems): Python files and Jupyter notebooks under `paths` in a stable order, and what could not be
    looked at (problems.Problem: a path that does not exist, a symlink loop, an unreadable folder). Without
    `nested_repos`, folders below a given one that hold their own `.git` (other checkouts) are skipped."""
    from .problems import Problem

    files, problems, seen = [], [], set()

    def add(p):
        norm = os.path.normpath(p)
        if norm not in seen:
            seen.add(norm)
            files.append(norm)

    def unreadable(exc: OSError):
        where = exc.filename or "?"
        problems.append(Problem("read", os.path.normpath(where), f"could not read folder: {exc.strerror or exc}"))

    for p in paths:
        if os.path.isfile(p):
            add(p)  # given explicitly: checked even if excluded or not *.py
        elif os.path.isdir(p):
            ignore = GitIgnore(p) if config is None or config.respect_gitignore else None
            for dirpath, dirnames, filenames in os.walk(p, onerror=unreadable):
                dirnames[:] = sorted(
                    d
                    for d in dirnames
                    if d not in SKIP_DIRS
                    and not d.endswith(".egg-info")
                    and not _is_env(os.path.join(dirpath, d))
                    and (nested_repos or not os.path.exists(os.path.join(dirpath, d, ".git")))
                    and not (config is not None and config.excluded(os.path.join(dirpath, d) + "/"))
                    and not (ignore is not None and ignore.ignored(os.path.join(dirpath, d), True))
                )
                for name in sorted(filenames):
                    if name.endswith((".py", ".ipynb")):
                        full = os.path.join(dirpath, name)
                        if (config is None or not config.excluded(full)) and not (
                            ignore is not None and ignore.ignored(full, False)
                        ):
                            add(full)
        else:
            problems.append(Problem("missing", p, _why_missing(p)))
    return files, problems


def _why_missing(p: str) -> str:
    """Why `p` is neither a file nor a folder: say what the system says (a symlink loop is not
    'no such file')."""
    try:
        os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return "no such file or directory"
        return (exc.strerror or str(exc)).lower()
    return "not a file or folder"
