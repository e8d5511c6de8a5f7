"""Expressions nested deeper than the engine follows are cut out of the tree, with their place.

The interpreter and the rules walk expressions recursively; valid Python can nest `not not ...`,
`x[0][0]...` or `a + a + ...` thousands deep. Such a subtree is replaced by a call of an unknown
function on the names it reads: its value may then carry anything those names carry (an unknown
result, like a call into a library), and nothing confirmed is built on it. Each cut is returned so
that the analysis reports it as incomplete, with its position.

Only expressions long enough to be that deep are walked: every level of nesting adds at least one
character, so a one-line expression shorter than the limit cannot exceed it.
"""

from __future__ import annotations

import ast

MAX_EXPR_DEPTH = 100
SKIPPED_NAME = "__gradaudit_skipped__"
_MAX_NAMES = 32


class DeepCut:
    __slots__ = ("col", "end_col", "end_line", "line")

    def __init__(self, line, col, end_line, end_col):
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col


def _long(e: ast.expr) -> bool:
    end = getattr(e, "end_lineno", None)
    if end is None:
        return True
    return end != e.lineno or (e.end_col_offset or 0) - e.col_offset > MAX_EXPR_DEPTH


def limit_depth(tree: ast.AST) -> list[DeepCut]:
    """Replace expression subtrees nested deeper than MAX_EXPR_DEPTH; return where."""
    cuts: list[DeepCut] = []
    stmts = [tree]
    while stmts:
        node = stmts.pop()
        for _name, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else (value,)
            for child in children:
                if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    stmts.append(child)
                elif isinstance(child, ast.expr):
                    if _long(child):
                        _limit_expr(child, cuts)
                elif isinstance(child, ast.AST):
                    stmts.append(child)  # arguments, keywords, withitems, comprehensions, patterns...
    return cuts


def _limit_expr(root: ast.expr, cuts: list):
    work = [(root, 1)]
    while work:
        node, depth = work.pop()
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        replacement = _visit(child, depth, work, cuts)
                        if replacement is not None:
                            value[i] = replacement
            elif isinstance(value, ast.AST):
                replacement = _visit(value, depth, work, cuts)
                if replacement is not None:
                    setattr(node, name, replacement)


def _visit(child, depth, work, cuts):
    if isinstance(child, ast.expr):
        if isinstance(child, (ast.Name, ast.Constant)):
            return None  # a leaf adds no recursion
        if depth + 1 > MAX_EXPR_DEPTH:
            return _placeholder(child, cuts)
        work.append((child, depth + 1))
    else:
        work.append((child, depth))  # keywords, comprehensions, arguments: no level of their own
    return None


def _placeholder(node: ast.expr, cuts: list) -> ast.expr:
    cuts.append(DeepCut(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset))
    ctx = getattr(node, "ctx", None)
    if isinstance(ctx, (ast.Store, ast.Del)):
        out = ast.Name(id=SKIPPED_NAME, ctx=ctx)
        return ast.copy_location(out, node)
    names: list[ast.expr] = []
    seen: set[str] = set()
    for n in ast.walk(node):  # iterative: safe at any depth
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in seen:
            seen.add(n.id)
            names.append(n)
            if len(names) >= _MAX_NAMES:
                break
    func = ast.copy_location(ast.Name(id=SKIPPED_NAME, ctx=ast.Load()), node)
    return ast.copy_location(ast.Call(func=func, args=names, keywords=[]), node)
