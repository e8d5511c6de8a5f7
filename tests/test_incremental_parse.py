"""An edited document parsed by its changed statements gives the trees a whole parse gives, and
a node's membership in a tree is answered without walking it."""

from __future__ import annotations

import ast
import glob
import os
import random
import warnings

import pytest

from gradaudit.analysis.check.engine import Analyzer
from gradaudit.analysis.source.incremental import reparse
from gradaudit.analysis.source.nodes import holds
from gradaudit.analysis.source.program import ParseError, Program, parse_source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BASE = """\
import torch
import torch.nn as nn


@torch.no_grad()
def evaluate(model, x):
    return model(x).mean()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


a = 1; b = 2
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(3, 4)).sum()
    loss.backward()
    opt.step()
print(f"{a + b} done")
"""


def _dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def _parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes made by the random edits
        return ast.parse(text)


def _edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    "old,new",
    [
        ("lr=0.1", "lr=0.01"),  # within a line, in the middle
        ("return self.fc(x)", "return self.fc(x).relu()"),  # inside a class
        ("a = 1; b = 2", "a = 3; b = 2"),  # two statements on one line
        ("@torch.no_grad()", "@torch.enable_grad()"),  # a decorator, above its `def` line
        ("    opt.step()\n", "    opt.step()\n    opt.zero_grad()\n"),  # a line added at the end of a block
        # a method added at the end of a class, after a comment
        ("        return self.fc(x)\n", "        return self.fc(x)\n\n    # later\n    def g(self):\n        pass\n"),
        ("model = Net()\n", ""),  # a line removed
        ('print(f"{a + b} done")', 'print(f"{a - b} done")'),  # the last statement, an f-string
        ("import torch\n", "import torch\nimport math\n"),  # the first statement
    ],
)
def test_a_reparse_gives_the_trees_of_a_whole_parse(old, new):
    prev = parse_source("t.py", BASE)
    text = _edit(BASE, old, new)
    got = reparse(prev, "t.py", text, prev.abspath)
    assert got is not None and got.source == text
    assert _dump(got.tree) == _dump(_parse(text))


def test_statements_outside_the_edit_are_the_same_objects():
    prev = parse_source("t.py", BASE)
    got = reparse(prev, "t.py", _edit(BASE, "lr=0.1", "lr=0.01"), prev.abspath)
    assert got is not None
    kept = [a for a, b in zip(prev.tree.body, got.tree.body) if a is b]
    # everything but the statement holding the edit, before it and after it
    assert len(kept) == len(prev.tree.body) - 1
    assert got.tree.body[-1] is prev.tree.body[-1]


@pytest.mark.parametrize(
    "old,new",
    [
        ("lr=0.1", "lr=(0.1"),  # an unclosed bracket
        ("model = Net()", 'model = """Net()'),  # an unclosed string
        ("model = Net()", "@torch.no_grad()"),  # a decorator left without its function
        ("model = Net()", "    model = Net()"),  # indented under the statement before
        ("a = 1; b = 2", "a = 1; b = "),  # a syntax error
    ],
)
def test_an_edit_that_does_not_parse_on_its_own_is_left_to_a_whole_parse(old, new):
    prev = parse_source("t.py", BASE)
    assert reparse(prev, "t.py", _edit(BASE, old, new), prev.abspath) is None


def test_a_file_with_broken_statements_is_never_reparsed():
    broken = BASE.replace("a = 1; b = 2", "a = = 1")
    prev = parse_source("t.py", broken)
    assert prev.broken
    assert reparse(prev, "t.py", broken.replace("lr=0.1", "lr=0.2"), prev.abspath) is None


def test_random_edits_of_the_projects_own_files_give_the_trees_of_a_whole_parse():
    rng = random.Random(7)
    files = sorted(glob.glob(os.path.join(ROOT, "analysis", "**", "*.py"), recursive=True))
    rng.shuffle(files)
    pieces = ["x", " ", "\n", "(", ")", '"""', "#", ":", "\\", "@", "    ", "\n    y = 1\n", "\nz = 2\n", ";w=3"]
    used = 0
    for path in files[:40]:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        try:
            prev = parse_source(path, text)
        except ParseError:
            continue
        for _ in range(10):
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            j = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:j] + rng.choice(pieces) + lines[i][j:]
            new = "\n".join(lines)
            got = reparse(prev, path, new, prev.abspath)
            if got is None:
                continue
            used += 1
            assert _dump(got.tree) == _dump(_parse(new)), (path, i)
            prev, text = got, new  # edits build on each other, as typing does
    assert used > 100


def test_the_editor_path_reuses_the_last_version_and_finds_the_same(monkeypatch):
    """Analyses through `Program(edited=...)` (the language server's worker) find what fresh ones do."""
    from gradaudit.analysis.check import engine

    monkeypatch.setattr(engine, "EDITED_MIN_CHARS", 0)  # a small document's tree is kept too
    edited: dict = {}
    analyzer = Analyzer()
    path = os.path.abspath("t_edited.py")
    text = BASE.replace("    opt.step()\n", "")  # backward with no step: GA204
    for version in (text, text.replace("lr=0.1", "lr=0.2"), text.replace("lr=0.1", "lr=0.3")):
        program = analyzer.attach(Program([], {path: version}, edited=edited))
        got = analyzer.analyze_source(path, version, program)
        fresh = Analyzer().analyze_source(path, version)
        assert [(f.code, f.span) for f in got.findings] == [(f.code, f.span) for f in fresh.findings]
        assert "GA204" in {f.code for f in got.findings}
        assert edited[path].source == version


def test_holds_finds_a_trees_own_nodes_and_no_others():
    tree = ast.parse(BASE)
    twin = ast.parse(BASE)
    nodes = [n for n in ast.walk(tree) if hasattr(n, "lineno")]
    assert all(holds(tree, n) for n in nodes)  # decorators and f-string parts included
    assert not any(holds(tree, n) for n in ast.walk(twin) if hasattr(n, "lineno"))
