"""Writing notebooks for tests: cells in, an .ipynb as Jupyter writes it (nbformat 4.5, one JSON
line per source line, indent 1, sorted keys), with outputs and metadata to see preserved."""

from __future__ import annotations

import json
import os

from gradaudit.analysis.source.program import split_lines


def cell(source: str, execution_count=None, *, kind: str = "code", outputs=None, cell_id=None, **metadata) -> dict:
    out = {"cell_type": kind, "id": cell_id, "metadata": dict(metadata), "source": split_lines(source, keepends=True)}
    if kind == "code":
        out["execution_count"] = execution_count
        out["outputs"] = list(outputs or [])
    return out


def notebook(cells, language="python") -> dict:
    cells = [c if isinstance(c, dict) else cell(c) for c in cells]
    for i, c in enumerate(cells):
        if c.get("id") is None:
            c["id"] = f"c{i:03d}-{c['cell_type']}"
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"},
            "language_info": {"name": language, "version": "3.11.2"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def dumps(nb: dict) -> str:
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write(path, cells, language="python") -> str:
    text = dumps(notebook(cells, language))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return text


def cells_of_script(source: str) -> list[tuple[int, str]]:
    """A script cut into cells as a notebook author would: one cell per top-level block (top-level
    statements after a blank line start a new cell; a def or class keeps its body). Each cell
    comes with the script line it starts at."""
    lines = split_lines(source, keepends=True)
    cells, current, first = [], [], 1

    def close():
        while current and not current[-1].strip():
            current.pop()
        if current:
            cells.append((first, "".join(current)))

    for n, line in enumerate(lines, 1):
        starts_block = line.strip() and not line[0].isspace() and not line.lstrip().startswith(("#", ")", "]", "}"))
        if starts_block and current and not current[-1].strip():
            close()
            current = []
        if not current:
            if not line.strip():
                continue
            first = n
        current.append(line)
    close()
    return cells
