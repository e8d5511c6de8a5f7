"""benchmarks/real_bugs.py: its manifest is valid, and a finding in a notebook is matched against
the manifest's spots, which are lines of the notebook file (what the fix's diff maps)."""

import importlib.util
import json
import sys
from pathlib import Path

from notebooks import cell, write

REPO = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("real_bugs", REPO / "benchmarks" / "real_bugs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["real_bugs"] = module
    spec.loader.exec_module(module)
    return module


def test_the_manifest_is_valid():
    bench = _bench()
    bugs = bench.load_manifest(str(REPO / "benchmarks" / "real_bugs.toml"))
    for split in [f"held{n}" for n in range(15, 29)]:
        assert len({b.repo for b in bugs if b.split == split}) == len([b for b in bugs if b.split == split])
    assert {b.split for b in bugs} <= set(bench.SPLITS)


TRAIN = """import torch
import torch.nn as nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
for step in range(3):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.zero_grad()
    opt.step()
"""


def test_a_notebook_finding_is_placed_on_the_line_of_the_notebook_file(tmp_path):
    bench = _bench()
    text = write(
        tmp_path / "train.ipynb",
        [cell("# Training", kind="markdown"), cell("import math\nprint(math.pi)"), cell(TRAIN)],
    )
    binary = str(Path(sys.executable).with_name("gradaudit"))
    run = bench.run_gradaudit(binary, str(tmp_path), ["train.ipynb"], 120, 1)
    assert run.error == ""
    found = [f for f in run.findings if f["code"] == "GA202"]
    assert len(found) == 1
    file_lines = text.splitlines()
    # the line of the notebook file that holds the cell's `opt.zero_grad()`
    want = [n for n, line in enumerate(file_lines, 1) if '"    opt.zero_grad()\\n"' in line]
    assert found[0]["line"] == want[0]
    assert found[0]["cell_line"] == TRAIN.splitlines().index("    opt.zero_grad()") + 1
    assert json.loads(text)["cells"][2]["source"][found[0]["cell_line"] - 1].strip() == "opt.zero_grad()"


def test_an_empty_cell_keeps_the_later_cells_in_place():
    """nbformat writes an empty cell's source as `"source": []` on one line: still a cell."""
    bench = _bench()
    cells = [{"cell_type": "code", "source": []}, {"cell_type": "code", "source": ["x = 1\n", "y = 2"]}]
    text = json.dumps({"cells": cells}, indent=1)
    starts = bench.source_starts(text)
    assert starts is not None and len(starts) == 2
    assert text.splitlines()[starts[1] - 1].strip() == '"x = 1\\n",'


def test_a_notebook_written_otherwise_keeps_the_cell_line():
    """A source written as one string, or a notebook that cannot be read: the finding is left as it is."""
    bench = _bench()
    assert bench.source_starts('{"cells": [{"cell_type": "code", "source": "x = 1"}]}') is None
    finding = {"code": "GA202", "path": "nb.ipynb", "line": 3, "cell": {"index": 0, "id": "a"}}
    assert bench.file_lines(finding, "/nonexistent") == finding
