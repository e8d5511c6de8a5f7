"""Helpers shared by the benchmark scripts (run as `python benchmarks/NAME.py`, so this folder is on
sys.path)."""

from __future__ import annotations

import os
import subprocess


def display(path: str) -> str:
    """The path as the CLI would show it: relative to the working folder when below it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def read_text(path: str) -> str:
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def engine_stamp() -> str:
    """The engine's git commit (with '+dirty' when analysis/ has local changes), for the record."""
    import gradaudit.analysis as ga

    src = os.path.dirname(os.path.abspath(ga.__file__))
    try:
        head = subprocess.run(
            ["git", "-C", src, "rev-parse", "--short", "HEAD"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            timeout=10,
        )
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(
            ["git", "-C", src, "status", "--porcelain", "--", "."],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            timeout=10,
        )
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
