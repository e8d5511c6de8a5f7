"""Writing notebooks for tests: cells in, an .ipynb as Jupyter writes it (nbformat 4.5, one JSON
line per source line, indent 1, sorted keys), with outputs and metadata to see preserved."""

from __future__ import annotations

import json

from gradaudit.analysis.source.program import split_lines


def cell(source: str, kind: str = "code", execution_count=None, outputs=None, cell_id=None, **metadata) -> dict:
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
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return text


def cells_of_script(source: str) -> list[str]:
    """A script cut into cells as a notebook author would: one cell per top-level block (a run of
    top-level statements with no blank line between them, a def or class with its body)."""
    lines = split_lines(source, keepends=True)
    cells, current = [], []
    for line in lines:
        starts_block = line.strip() and not line[0].isspace() and not line.lstrip().startswith(("#", ")", "]", "}"))
        if starts_block and current and not current[-1].strip():
            while current and not current[-1].strip():
                current.pop()
            if current:
                cells.append("".join(current))
            current = []
        current.append(line)
    while current and not current[-1].strip():
        current.pop()
    if current:
        cells.append("".join(current))
    return cells
