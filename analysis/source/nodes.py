"""Questions about a syntax tree answered without walking all of it."""

from __future__ import annotations

import ast

_DECORATED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _first_line(node: ast.AST) -> int | None:
    line = getattr(node, "lineno", None)
    if line is not None and isinstance(node, _DECORATED) and node.decorator_list:
        # a decorator sits above the `def` line that the node's own position names
        line = min(line, *(d.lineno for d in node.decorator_list))
    return line


def holds(tree: ast.AST, node: object) -> bool:
    """`node` is one of `tree`'s nodes (the same object, not an equal one). Only the nodes whose
    lines cover `node`'s are entered: a descent along one path, where a walk of a 3,000-line file
    visits some 17,000 nodes (once per keystroke in the editor)."""
    line = getattr(node, "lineno", None)
    if line is None:
        return any(n is node for n in ast.walk(tree))
    todo = [tree]
    while todo:
        n = todo.pop()
        if n is node:
            return True
        fstring = isinstance(n, ast.JoinedStr)
        for child in ast.iter_child_nodes(n):
            first = _first_line(child)
            # nodes without a position (arguments, comprehension...) are entered: they hold some;
            # so is all of an f-string, whose parts had positions of their own before Python 3.12
            if first is None or fstring or first <= line <= getattr(child, "end_lineno", line):
                todo.append(child)
    return False


def accumulates(e) -> bool:
    """`accelerator.accumulate(model)` (Hugging Face accelerate's gradient-accumulation context),
    given the model it accumulates for."""
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == "accumulate"
        and bool(e.args or e.keywords)
    )


def summed(e, whole: bool = False):
    """`x` of `x.sum(...)` / `torch.sum(x, ...)`, else None; with `whole`, only of a sum over every
    element (no dim or keyword)."""
    if not isinstance(e, ast.Call) or not isinstance(e.func, ast.Attribute) or e.func.attr != "sum":
        return None
    if whole and e.keywords:
        return None
    if isinstance(e.func.value, ast.Name) and e.func.value.id in ("torch", "th"):
        return e.args[0] if e.args and not (whole and len(e.args) > 1) else None
    return None if whole and e.args else e.func.value
