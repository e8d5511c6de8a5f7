"""Which files a check covers: given files as they are, folders walked recursively (skipping tool
and build folders, virtualenvs, the configured `exclude` and what .gitignore files ignore)."""
from __future__ import annotations

import os

from .gitignore import GitIgnore

SKIP_DIRS = {
    ".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", "node_modules", "build", "dist", "site-packages", ".eggs", ".ipynb_checkpoints", ".idea",
    ".vscode", "__pypackages__", ".hypothesis",
}


def _is_env(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg")) or os.path.isfile(
        os.path.join(path, "conda-meta", "history"))


def discover(paths, config=None) -> tuple[list[str], list[str]]:
    """(files, missing): Python files under `paths` in a stable order, and paths that do not exist."""
    files, missing, seen = [], [], set()

    def add(p):
        norm = os.path.normpath(p)
        if norm not in seen:
            seen.add(norm)
            files.append(norm)

    for p in paths:
        if os.path.isfile(p):
            add(p)       # given explicitly: checked even if excluded or not *.py
        elif os.path.isdir(p):
            ignore = GitIgnore(p) if config is None or config.respect_gitignore else None
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(
                    d for d in dirnames
                    if d not in SKIP_DIRS and not d.endswith(".egg-info") and not _is_env(os.path.join(dirpath, d))
                    and not (config is not None and config.excluded(os.path.join(dirpath, d) + "/"))
                    and not (ignore is not None and ignore.ignored(os.path.join(dirpath, d), True)))
                for name in sorted(filenames):
                    if name.endswith(".py"):
                        full = os.path.join(dirpath, name)
                        if (config is None or not config.excluded(full)) and not (
                                ignore is not None and ignore.ignored(full, False)):
                            add(full)
        else:
            missing.append(p)
    return files, missing
