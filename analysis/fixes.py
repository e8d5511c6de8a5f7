"""Edits that need structure (libcst), and applying edits to source text.

Most fixes are token-level replacements computed from ast positions by the rules themselves;
the few that restructure a block (unwrapping a `with`) use libcst, imported only here, only
when such a fix is asked for, so that a plain check never pays for it.
"""
from __future__ import annotations

import ast

from .findings import Edit
from .model import Span
from .program import split_lines


def _find_with(tree, span: Span):
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for i, item in enumerate(node.items):
                e = item.context_expr
                if e.lineno == span.line and e.end_lineno == span.end_line:
                    return node, i
    return None, None


def unwrap_with(ctx, item_span: Span) -> tuple:
    """Edits removing the `with` item at `item_span` (the whole `with` when it is the only item)."""
    tree = ctx.tree(item_span.path)
    if tree is None:
        return ()
    node, index = _find_with(tree, item_span)
    if node is None:
        return ()
    path = item_span.path
    if len(node.items) > 1:
        item = node.items[index]
        end = item.optional_vars if item.optional_vars is not None else item.context_expr
        nxt = node.items[index + 1] if index + 1 < len(node.items) else None
        if nxt is not None:
            start = Span(path, item.context_expr.lineno, item.context_expr.col_offset,
                         nxt.context_expr.lineno, nxt.context_expr.col_offset)
        else:
            prev = node.items[index - 1]
            pend = prev.optional_vars if prev.optional_vars is not None else prev.context_expr
            start = Span(path, pend.end_lineno, pend.end_col_offset, end.end_lineno, end.end_col_offset)
        return (Edit(start, ""),)
    if node.items[0].optional_vars is not None:
        return ()
    import libcst as cst  # structural edit: libcst keeps comments and formatting of the body

    first, last = node.lineno, node.end_lineno
    lines = [ctx.line(path, n) for n in range(first, last + 1)]
    indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
    stripped = []
    for text in lines:
        if text.startswith(indent):
            stripped.append(text[len(indent):])
        elif not text.strip():
            stripped.append("")
        else:
            return ()
    try:
        module = cst.parse_module("\n".join(stripped) + "\n")
    except Exception:
        return ()
    stmt = module.body[0]
    if not isinstance(stmt, cst.With) or not isinstance(stmt.body, cst.IndentedBlock):
        return ()
    body = list(stmt.body.body)
    if body:
        body[0] = body[0].with_changes(leading_lines=list(stmt.leading_lines) + list(body[0].leading_lines))
    code = module.with_changes(body=body).code
    out = "".join((indent + line if line.strip() else line) + "\n" for line in code.splitlines())
    return (Edit(Span(path, first, 0, last + 1, 0), out),)


def apply_edits(source: str, edits) -> str:
    """Apply non-overlapping edits (1-based lines, 0-based character columns) to `source`."""
    lines = split_lines(source, keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:
        if line - 1 >= len(lines):
            return len(source)
        return starts[line - 1] + col

    ordered = sorted(edits, key=lambda e: (e.span.line, e.span.col, e.span.end_line, e.span.end_col), reverse=True)
    out = source
    last_start = None
    for e in ordered:
        a = offset(e.span.line, e.span.col)
        b = offset(e.span.end_line, e.span.end_col)
        if last_start is not None and b > last_start:
            continue  # overlaps an edit already applied: skip it
        out = out[:a] + e.content + out[b:]
        last_start = a
    return out


def fix_source(source: str, findings, only_safe=True) -> tuple[str, list]:
    """Apply the fixes of `findings` to one file; a fix whose result does not parse is dropped."""
    applied = []
    current = source
    for f in sorted(findings, key=lambda f: (f.span.line, f.span.col), reverse=True):
        if f.fix is None or not f.fix.edits or (only_safe and f.fix.applicability != "safe"):
            continue
        candidate = apply_edits(current, f.fix.edits)
        try:
            ast.parse(candidate)
        except SyntaxError:
            continue
        current = candidate
        applied.append(f)
    return current, applied
