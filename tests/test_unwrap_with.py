"""The `with`-unwrap fix (GA102) is a position-exact text edit from the ast and the tokens, with no
third-party parser: it must give the same program as the `with` statement's body put in its
place, keep multi-line strings byte for byte, keep line endings, and work on every Python."""

from __future__ import annotations

import ast

import pytest
from helpers import analyze
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradaudit.analysis.model.model import ProgramModel, Span
from gradaudit.analysis.rules.base import RuleContext
from gradaudit.analysis.rules.fixes import apply_edits, unwrap_with
from gradaudit.analysis.source.program import parse_source


def unwrap(source: str, which: int = 0) -> str | None:
    """The source with the `which`-th `with` statement unwrapped, or None when no edit is offered."""
    sf = parse_source("t.py", source)
    ctx = RuleContext(ProgramModel("t.py"), {"t.py": sf})
    node = [n for n in ast.walk(sf.tree) if isinstance(n, (ast.With, ast.AsyncWith))][which]
    e = node.items[0].context_expr
    edits = unwrap_with(ctx, Span("t.py", e.lineno, e.col_offset, e.end_lineno, e.end_col_offset))
    return apply_edits(source, edits) if edits else None


class _Unwrap(ast.NodeTransformer):
    """The reference: the same tree with the first single-item `with` replaced by its body."""

    def __init__(self):
        self.done = False

    def generic_visit(self, node):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and not self.done:
                out = []
                for stmt in block:
                    if not self.done and isinstance(stmt, (ast.With, ast.AsyncWith)) and len(stmt.items) == 1:
                        self.done = True
                        out.extend(stmt.body)
                    else:
                        out.append(stmt)
                setattr(node, name, out)
        return super().generic_visit(node)


def reference(source: str) -> str:
    return ast.dump(_Unwrap().visit(ast.parse(source)))


CASES = {
    "plain": (
        """import torch
def f(model, x):
    with torch.no_grad():
        y = model(x)
        loss = y.sum()
    return loss
""",
        """import torch
def f(model, x):
    y = model(x)
    loss = y.sum()
    return loss
""",
    ),
    "comments, continuation lines and a multi-line string": (
        '''def f(model, x):
    with torch.no_grad():  # the header's comment goes with the header
        # a comment
        y = model(x,
                  x)
# a comment left of the block
        s = """a
    b
        c"""
        if y:
            loss = y.sum()
    return loss
''',
        '''def f(model, x):
    # a comment
    y = model(x,
              x)
# a comment left of the block
    s = """a
    b
        c"""
    if y:
        loss = y.sum()
    return loss
''',
    ),
    "tabs": ("with torch.no_grad():\n\ty = 1\n\tz = 2\n", "y = 1\nz = 2\n"),
    "header over two lines, blank line, multi-line f-string": (
        '''def f():
    with torch.no_grad(
    ):
        y = 1

        z = f"""{y}
  x"""
''',
        '''def f():
    y = 1

    z = f"""{y}
  x"""
''',
    ),
    "async with": ("async def f():\n    async with torch.no_grad():\n        y = 1\n", "async def f():\n    y = 1\n"),
    "body on the header line": ("with torch.no_grad(): y = 1; z = 2\n", "y = 1; z = 2\n"),
    "CRLF line endings stay CRLF": ("with torch.no_grad():\r\n    y = 1\r\n    z = 2\r\n", "y = 1\r\nz = 2\r\n"),
    "nested blocks and a backslash continuation": (
        """class A:
    def g(self):
        with torch.no_grad():
            for i in range(3):
                y = \\
                    i
            z = [1,
 2]
""",
        """class A:
    def g(self):
        for i in range(3):
            y = \\
                i
        z = [1,
 2]
""",
    ),
    "a colon inside the header's brackets": ("with ctx(a[1:2], key=lambda v: v):\n    y = 1\n", "y = 1\n"),
    "non-ASCII before the body": ("with torch.no_grad(): é = 1\n", "é = 1\n"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_unwrap(name):
    source, expected = CASES[name]
    out = unwrap(source)
    assert out == expected
    assert ast.dump(ast.parse(out)) == reference(source)


def test_with_as_is_not_unwrapped():
    assert unwrap("with open(p) as fh:\n    data = fh.read()\n") is None


def test_one_item_of_several_is_removed():
    out = unwrap("with torch.no_grad(), open(p) as fh:\n    y = fh.read()\n")
    assert out == "with open(p) as fh:\n    y = fh.read()\n"


def test_ga102_fix_end_to_end_has_no_third_party_parser(monkeypatch):
    # the fix must not need libcst (or any compiled parser) to exist
    import sys

    monkeypatch.setitem(sys.modules, "libcst", None)
    source = """import torch
import torch.nn as nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(3, 4)
with torch.no_grad():
    # comment
    loss = model(x).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
"""
    [f] = [f for f in analyze(source).findings if f.code == "GA102"]
    assert f.fix is not None and f.fix.applicability == "safe"
    assert apply_edits(source, f.fix.edits) == source.replace(
        "with torch.no_grad():\n    # comment\n    loss", "# comment\nloss"
    )


# random blocks: statements, nested blocks, comments anywhere, strings, continuations, blank lines

_LEAF = st.sampled_from(
    [
        ["y = f(x)"],
        ["loss = (a +", "        b)"],
        ["s = '''one", "  two", "three'''"],
        ["t = f'''{y}", "    inside'''"],
        ["v = 1 + \\", "    2"],
        ["# a comment"],
        ["@@# a comment at column 0"],
        [""],
        ["w = [1,", "@@2]"],
    ]
)


@st.composite
def block(draw, depth=0):
    lines = []
    for item in draw(st.lists(_LEAF if depth >= 2 else st.one_of(_LEAF, st.just(None)), min_size=1, max_size=5)):
        if item is None:
            inner = draw(block(depth + 1))
            lines.append("if cond:")
            lines.extend(
                ["@@" + line[2:] if line.startswith("@@") else ("    " + line if line else "") for line in inner]
            )
        else:
            lines.extend(item)
    if not any(line.strip() and not line.lstrip("@").lstrip().startswith("#") for line in lines):
        lines.append("pass")
    return lines


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    block(), st.sampled_from(["", "    ", "\t"]), st.sampled_from(["    ", "  ", "\t"]), st.sampled_from(["\n", "\r\n"])
)
def test_random_blocks_unwrap_to_their_body(body, outer, step, newline):
    inner = outer + step
    lines = ["def g():" if outer else "import torch"]
    lines.append(outer + "with torch.no_grad():")
    for line in body:
        if line.startswith("@@"):
            lines.append(line[2:])  # deliberately left of the block
        elif line.startswith(("  two", "three'''", "    inside'''", "    2", "        b)")):
            lines.append(line)  # continuation lines keep their own indentation
        else:
            lines.append(inner + line.replace("    ", step) if line else "")
    lines.append(outer + "done = True")
    source = newline.join(lines) + newline
    try:
        ast.parse(source)
    except SyntaxError:
        return  # an arrangement Python itself rejects (e.g. a comment-only block)
    out = unwrap(source)
    assert out is not None
    assert ast.dump(ast.parse(out)) == reference(source)
    # line endings kept, and nothing outside the statement touched
    assert out.count("\r\n") == out.count("\n") if newline == "\r\n" else "\r" not in out
    assert out.endswith(outer + "done = True" + newline)
