"""Parsing an edited file again by its changed top-level statements only.

In the editor every keystroke sends the whole text, and parsing a 3,000-line file is a third of
its analysis. The new text is compared with the previous version's by lines; the top-level
statements wholly before the change keep their syntax trees, and so do those wholly after it when
the edit left the line count as it was (typing within a line, the usual keystroke). Only the
statements in between are parsed again, at their own line numbers. When the line count changed,
the rest of the file is parsed again rather than renumbered: shifting a tree's lines walks all of
it, which costs about what parsing it does.

A statement only ever ends before the next one begins, so a region that parses on its own as whole
statements gives the same trees as parsing the whole file. Anything else (an unclosed bracket or
string, a decorator left without its function, a syntax error) makes `reparse` return None, and
the caller parses the whole text, with its recovery of broken statements. Reused statements are
shared between the two versions' trees, never modified: what is cached on a node (flags.py,
settings.py) describes its own subtree, which is unchanged.
"""

from __future__ import annotations

import ast
import warnings

from .program import SourceFile, split_lines

_DECORATED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _first(stmt: ast.stmt) -> int:
    if isinstance(stmt, _DECORATED) and stmt.decorator_list:
        return min(stmt.lineno, *(d.lineno for d in stmt.decorator_list))
    return stmt.lineno


def _end(stmt: ast.stmt) -> int:
    return stmt.end_lineno or stmt.lineno


def _indented(lines: list[str], start: int, stop: int) -> bool:
    """The first line of lines[start..stop] (1-based) that holds code is indented."""
    for text in lines[start - 1 : stop]:
        code = text.lstrip()
        if code and not code.startswith("#"):
            return text[0] in " \t\f"
    return False


def reparse(prev: SourceFile, path: str, source: str, abspath: str) -> SourceFile | None:
    """`source`'s SourceFile, reusing `prev`'s statements outside the edit; None when the edit
    cannot be parsed on its own (the caller parses the whole text)."""
    if prev.broken or prev.deep or prev.depth_limited or source == prev.source:
        return None
    if source.startswith("\ufeff") or "\x00" in source:
        return None  # parse_source's own cases
    old, new = split_lines(prev.source, keepends=True), split_lines(source, keepends=True)
    # a last line without its newline differs from the same line with one: compare whole lines
    common = min(len(old), len(new))
    head = 0
    while head < common and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < common - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    delta = len(new) - len(old)
    changed_from, changed_to = head + 1, len(old) - tail  # 1-based lines of the old text
    body = prev.tree.body
    before = 0  # statements kept from the start
    while before < len(body) and _end(body[before]) < changed_from:
        before += 1
    after = len(body)  # statements kept to the end, from body[after]
    if delta == 0:
        while after > before and _first(body[after - 1]) > changed_to:
            after -= 1
    # two statements on one line (`a = 1; b = 2`): both or neither
    while 0 < before < len(body) and _first(body[before]) <= _end(body[before - 1]):
        before -= 1
    while after < len(body) and after > before and _first(body[after]) <= _end(body[after - 1]):
        after += 1
    stop = _first(body[after]) - 1 + delta if after < len(body) else len(new)
    start = _end(body[before - 1]) + 1 if before else 1  # the region parsed again, in the new text's lines
    if before and _indented(new, start, stop):
        # a line typed at the end of a block (`    opt.zero_grad()` under a `for`) belongs to the
        # statement before the change: it is parsed again with it
        before -= 1
        start = _end(body[before - 1]) + 1 if before else 1
    region = "".join(new[start - 1 : stop])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # as parse_source: Python's warnings are not ours
            middle = ast.parse("\n" * (start - 1) + region, filename=path).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    tree = ast.Module(body=[*body[:before], *middle, *body[after:]], type_ignores=[])
    return SourceFile(path, abspath, source, tree)
