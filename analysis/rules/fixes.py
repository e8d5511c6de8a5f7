"""Edits that restructure a block (unwrapping a `with`), and applying edits to source text.

Most fixes are token-level replacements computed from ast positions by the rules themselves.
Unwrapping a `with` is a position-exact text edit from the ast and the tokens: no third-party
parser, so the fixes work on every Python and platform the server runs on.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable

from ..model.findings import Edit, Finding
from ..model.model import Span, Step
from ..source.program import SourceFile, split_lines
from .base import RuleContext

With = ast.With | ast.AsyncWith
Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef

_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)


def _find_with(tree: ast.AST, span: Span) -> tuple[With, int] | None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for i, item in enumerate(node.items):
                e = item.context_expr
                if e.lineno == span.line and e.end_lineno == span.end_line:
                    return node, i
    return None


def unwrap_with(ctx: RuleContext, item_span: Span) -> tuple[Edit, ...]:
    """Edits removing the `with` item at `item_span` (the whole `with` when it is the only item)."""
    tree = ctx.tree(item_span.path)
    if tree is None:
        return ()
    found = _find_with(tree, item_span)
    if found is None:
        return ()
    node, index = found
    path = item_span.path
    if len(node.items) > 1:
        item = node.items[index]
        end = item.optional_vars if item.optional_vars is not None else item.context_expr
        nxt = node.items[index + 1] if index + 1 < len(node.items) else None
        if nxt is not None:
            start = Span(
                path,
                item.context_expr.lineno,
                item.context_expr.col_offset,
                nxt.context_expr.lineno,
                nxt.context_expr.col_offset,
            )
        else:
            prev = node.items[index - 1]
            pend = prev.optional_vars if prev.optional_vars is not None else prev.context_expr
            start = Span(
                path,
                pend.end_lineno or pend.lineno,
                pend.end_col_offset or 0,
                end.end_lineno or end.lineno,
                end.end_col_offset or 0,
            )
        return (Edit(start, ""),)
    if node.items[0].optional_vars is not None:
        return ()
    sf = ctx.files.get(path)
    if sf is None:
        return ()
    return _unwrap_block(sf, node)


def _unwrap_block(sf: SourceFile, node: With) -> tuple[Edit, ...]:
    """Edits replacing `with ctx:` and its body by the body, one indentation level out.

    Only the starts of logical lines decide Python's block structure, so every body line loses
    the body's extra indentation except the lines inside a multi-line string (their text is the
    string's value); comment and continuation lines lose what they can of it."""
    path = sf.path
    body = node.body[0]
    if body.lineno == node.lineno:
        # `with torch.no_grad(): loss = f(x)`: keep what follows the colon
        start = Span(
            path,
            node.lineno,
            sf.char_col(node.lineno, node.col_offset),
            body.lineno,
            sf.char_col(body.lineno, body.col_offset),
        )
        return (Edit(start, ""),)
    lines = split_lines(sf.source, keepends=True)
    header_end, in_string = _header_end_and_strings(sf.source, node, body)
    if header_end is None:
        return ()
    head = sf.line_text(node.lineno)
    outer = head[: len(head) - len(head.lstrip())]
    inner_line = sf.line_text(body.lineno)
    inner = inner_line[: len(inner_line) - len(inner_line.lstrip())]
    if not inner.startswith(outer) or len(inner) == len(outer):
        return ()
    extra = len(inner) - len(outer)
    out = []
    last = node.end_lineno or node.lineno
    for n in range(header_end + 1, last + 1):
        raw = lines[n - 1]
        text = raw.rstrip("\r\n")
        ending = raw[len(text) :]
        if n in in_string:
            out.append(raw)
        elif not text.strip():
            out.append(ending)
        elif text.startswith(outer):
            rest = text[len(outer) :]
            drop = min(extra, len(rest) - len(rest.lstrip(" \t")))
            out.append(outer + rest[drop:] + ending)
        else:
            out.append(raw)  # a comment left of the block: comments may sit anywhere
    return (Edit(Span(path, node.lineno, 0, last + 1, 0), "".join(out)),)


def _header_end_and_strings(source: str, node: With, body: ast.stmt) -> tuple[int | None, set[int]]:
    """The line of the `:` closing the `with` header, and the lines that continue a string token."""
    header_end = None
    in_string: set[int] = set()
    fstrings: list[int] = []
    depth = 0
    last = node.end_lineno or node.lineno
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            (l0, _), (l1, _) = tok.start, tok.end
            if l0 > last:
                break
            if l1 < node.lineno:
                continue
            if tok.type == tokenize.STRING:
                in_string.update(range(l0 + 1, l1 + 1))
            elif tok.type == _FSTRING_START:  # Python 3.12+: f-strings are several tokens
                fstrings.append(l0)
            elif tok.type == _FSTRING_END and fstrings:
                in_string.update(range(fstrings.pop() + 1, l1 + 1))
            if header_end is None and tok.type == tokenize.OP and (l0, tok.start[1]) >= (node.lineno, 0):
                if tok.string in "([{":
                    depth += 1
                elif tok.string in ")]}":
                    depth -= 1
                elif tok.string == ":" and depth == 0 and l0 < body.lineno:
                    header_end = l0
    except (tokenize.TokenError, SyntaxError):
        return None, in_string
    return header_end, in_string


def apply_edits(source: str, edits: Iterable[Edit]) -> str:
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


def fix_source(source: str, findings: Iterable[Finding], only_safe: bool = True) -> tuple[str, list[Finding]]:
    """Apply the fixes of `findings` to one file; a fix whose result does not parse is dropped."""
    applied = []
    current = source
    for f in sorted(findings, key=lambda f: (f.span.line, f.span.col), reverse=True):
        if f.fix is None or not f.fix.edits or (only_safe and f.fix.applicability != "safe"):
            continue
        candidate = apply_edits(current, f.fix.edits)
        try:
            ast.parse(candidate)
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # not parseable, or past the parser's limits
            continue
        current = candidate
        applied.append(f)
    return current, applied


# ---------------------------------------------------------------- fix safety
# A fix is safe only when, in its context, it restores the flow of gradient and changes nothing
# else. These read the enclosing function to tell.


def enclosing_function(tree: ast.Module, line: int) -> Scope:
    """The innermost function whose body holds `line` (the module when none does). Only nodes
    that span `line` are entered (rules ask this once per optimizer, on every edit)."""
    best: Scope = tree
    stack: list[ast.AST] = [tree]
    while stack:
        for child in ast.iter_child_nodes(stack.pop()):
            start = getattr(child, "lineno", None)
            if start is None:
                stack.append(child)  # no position of its own (a match case, the arguments)
            elif start <= line <= (getattr(child, "end_lineno", None) or start):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    isinstance(best, ast.Module) or child.lineno >= best.lineno  # the module: `tree` itself
                ):
                    best = child
                stack.append(child)
    return best


def _loaded_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stored_names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def loss_dependencies(scope: ast.AST, loss_text: str) -> set[str]:
    """Names the loss expression depends on inside `scope`, following assignments backwards
    (flow-insensitive: a name assigned anywhere in the scope counts)."""
    try:
        deps = _loaded_names(ast.parse(loss_text, mode="eval"))
    except SyntaxError:
        return set()
    defs: dict[str, set[str]] = {}
    for node in ast.walk(scope):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            reads = _loaded_names(node.value)
            for t in targets:
                for name in _stored_names(t) if not isinstance(t, ast.Name) else {t.id}:
                    defs.setdefault(name, set()).update(reads)
    todo = list(deps)
    while todo:
        for r in defs.get(todo.pop(), ()):
            if r not in deps:
                deps.add(r)
                todo.append(r)
    return deps


def with_only_feeds_loss(ctx: RuleContext, item_span: Span, step: Step | None) -> bool:
    """Removing this `with` changes nothing but the loss's flow: it sits in the function of the
    backward() (not a helper shared with evaluation), and every statement in it assigns a name the
    loss depends on (no metrics, logging or evaluation inside)."""
    tree = ctx.tree(item_span.path)
    if tree is None or step is None or step.span.path != item_span.path:
        return False
    found = _find_with(tree, item_span)
    if found is None:
        return False
    node = found[0]
    scope = enclosing_function(tree, node.lineno)
    if enclosing_function(tree, step.span.line) is not scope:
        return False
    deps = loss_dependencies(scope, step.loss)
    for stmt in node.body:
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or stmt.value is None:
            return False
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        assigned: set[str] = set()
        for t in targets:
            assigned |= {t.id} if isinstance(t, ast.Name) else _stored_names(t)
        if not assigned & deps:
            return False
    return True


def called_once(ctx: RuleContext, path: str, func_line: int) -> bool:
    """The function defined at `func_line` is referenced once in its file (one caller to change)."""
    tree = ctx.tree(path)
    if tree is None:
        return False
    fn = next(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and min([n.lineno] + [d.lineno for d in n.decorator_list]) <= func_line <= n.body[0].lineno
        ),
        None,
    )
    if fn is None:
        return False
    uses = sum(
        1
        for n in ast.walk(tree)
        if (isinstance(n, ast.Name) and n.id == fn.name and isinstance(n.ctx, ast.Load))
        or (isinstance(n, ast.Attribute) and n.attr == fn.name)
    )
    return uses == 1


def mutated_after(ctx: RuleContext, span: Span) -> bool:
    """The name the statement at `span` assigns is changed in place later in its function."""
    tree = ctx.tree(span.path)
    if tree is None:
        return True
    scope = enclosing_function(tree, span.line)
    stmt = next(
        (
            n
            for n in ast.walk(scope)
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.lineno <= span.line <= (n.end_lineno or n.lineno)
        ),
        None,
    )
    if stmt is None:
        return False
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names: set[str] = set()
    for t in targets:
        names |= {t.id} if isinstance(t, ast.Name) else _stored_names(t)
    stmt_end = stmt.end_lineno or stmt.lineno
    for n in ast.walk(scope):
        if getattr(n, "lineno", 0) <= stmt_end:
            continue
        if isinstance(n, ast.AugAssign) and isinstance(n.target, (ast.Name, ast.Subscript)):
            base = n.target if isinstance(n.target, ast.Name) else n.target.value
            if isinstance(base, ast.Name) and base.id in names:
                return True
        if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in names for t in n.targets
        ):
            return True
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr.endswith("_")
            and not n.func.attr.startswith("_")
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id in names
        ):
            return True
    return False
