"""Jupyter notebooks: code cells analysed in order as one program (source/notebook.py), IPython
syntax neutralised, unparsable cells reported, positions given as cell and line in every output
format, fixes written back into the cells with every other byte unchanged."""

import glob
import json
import os
from pathlib import Path

import jsonschema
import pytest
from helpers import strip_markers
from notebooks import cell, cells_of_script, dumps, notebook, write

from gradaudit.analysis.app import cli
from gradaudit.analysis.check.config import Config
from gradaudit.analysis.check.engine import Analyzer
from gradaudit.analysis.rules import RULES
from gradaudit.analysis.source.notebook import (
    Locator,
    neutralise,
    notebook_from_cells,
    notebook_from_json,
    read_notebook,
    write_back,
)

DATA = Path(__file__).parent / "data"


def run_main(args, cwd, capsys, monkeypatch):
    """`gradaudit ARGS` in-process in `cwd`: (exit code, stdout, stderr)."""
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


SARIF_SCHEMA = DATA / "sarif" / "sarif-schema-2.1.0.json"

# ------------------------------------------------------------------ IPython syntax


@pytest.mark.parametrize(
    "line, python, shift",
    [
        ("%matplotlib inline", "pass", 0),
        ("!pip install -q torch", "pass", 0),
        ("!!ls", "pass", 0),
        ("files = !ls *.pt", "files = None", 0),
        ("a, b = %sx echo 1 2", "a, b = None", 0),
        ("torch.nn.Linear?", "pass", 0),
        ("??model", "pass", 0),
        ("%time loss = model(x).sum()", "loss = model(x).sum()", 6),
        ("%timeit -n 10 -r 2 model(x)", "model(x)", 19),
        ("%prun train()", "train()", 6),
        ("%time", "pass", 0),  # nothing to time: a bare magic
        ("x = 5 % 2", "x = 5 % 2", 0),
        ("print('!important')", "print('!important')", 0),
    ],
)
def test_line_magics_become_python(line, python, shift):
    out, entries = neutralise([line])
    assert out == [python]
    assert entries[0][1] == shift


def test_magics_only_at_the_start_of_a_logical_line():
    lines = [
        "doc = '''",
        "%not a magic inside a string",
        "!nor this",
        "'''",
        "total = (a",
        "         % b)",
        "cmd = 'x' \\",
        "    '!y'",
        "for i in range(2):",
        "    !echo $i",
        "    %time step(i)",
    ]
    out, entries = neutralise(lines)
    assert out[:8] == lines[:8]
    assert out[9] == "    pass"
    assert out[10] == "    step(i)" and entries[10] == (4, 6, 0)


def test_cell_magics():
    assert neutralise(["%%capture out", "x = f()"])[0] == ["", "x = f()"]
    assert neutralise(["", "%%time", "train()"])[0] == ["", "", "train()"]
    # not Python: the whole cell is left out
    assert neutralise(["%%bash", "pip install torch"])[0] == ["", ""]
    assert neutralise(["%%writefile train.py", "import torch", "loss.backward()"])[0] == ["", "", ""]
    # a magic continued over lines with a backslash
    assert neutralise(["!pip install \\", "    torch", "x = 1"])[0] == ["pass", "", "x = 1"]


def test_a_cell_indented_as_a_whole_is_dedented_as_ipython_does():
    out, entries = neutralise(["  # the device", "  device = 'cpu'", "  %time x = f(device)", "y = 2"])
    assert out == ["# the device", "device = 'cpu'", "x = f(device)", "y = 2"]
    assert entries == [(0, 0, 2), (0, 0, 2), (0, 6, 2), (0, 0, 0)]
    nb = notebook_from_cells("n.ipynb", [("code", "  a = 1\n  %time b = a.detach()\n", None)])
    place = nb.place(2, 4)  # `a.detach()` in the analysed source
    assert (place.line, place.col) == (2, 12)
    assert nb.virtual(0, 2, 12) == (2, 4)


# ------------------------------------------------------------------ the notebook as one program

LESSON = [
    cell("# Regression with a small MLP\nCells ran out of order while it was written.", kind="markdown"),
    cell("%load_ext autoreload\n%autoreload 2\n!pip install -q torch\nimport torch\nimport torch.nn as nn", 12),
    cell(
        "class MLP(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.body = nn.Sequential(nn.Linear(3, 16), nn.ReLU())\n        self.head = nn.Linear(16, 1)\n\n"
        "    def forward(self, x):\n        return self.head(self.body(x))",
        3,
    ),
    cell("model = MLP()\nmodel?", 1, outputs=[{"output_type": "stream", "name": "stdout", "text": ["MLP(...)\n"]}]),
    cell("%%capture\nx = torch.randn(64, 3)\ny = x.sum(dim=1, keepdim=True)", 7),
    cell("optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)", 9),
    cell("def features(batch):\n    return model.body(batch).detach()", 2),
    cell("criterion = nn.MSELoss()\n%time print(x.shape)", 4),
    cell("for epoch in range(3)\n    print(epoch)", None),
    cell(
        "%%time\nfor epoch in range(20):\n    optimizer.zero_grad()\n    pred = model.head(features(x))\n"
        "    loss = criterion(pred, y)\n    loss.backward()\n    optimizer.step()",
        5,
    ),
    cell("print(loss.item())", 6, cell_id="last-cell"),
]


@pytest.fixture
def lesson(tmp_path):
    path = tmp_path / "lesson.ipynb"
    write(path, LESSON)
    return path


def test_a_step_over_five_cells_with_magics_and_a_broken_cell(lesson):
    result = Analyzer(Config()).analyze_file(str(lesson))
    assert result.error is None
    loc = Locator({str(lesson): result.notebook})
    [f] = result.findings
    w = loc.span(f.span)
    # the model is built in cell 4, the optimizer in cell 6, the cut in cell 7, the loop in cell 10
    assert (f.code, w.cell.number, w.line, w.col) == ("GA101", 7, 2, 11)
    assert "model.body.0" in f.message
    related = {(loc.span(r.span).cell.number, loc.span(r.span).line) for r in f.related}
    assert {(10, 5), (10, 6), (6, 1)} <= related
    # the cell that does not parse is reported where Python says, the rest analysed
    [e] = result.problems
    we = loc.at(e.path, e.line, e.col - 1)
    assert (we.cell.number, we.line, we.col + 1, e.msg) == (9, 1, 22, "expected ':'")


def test_cli_text_json_sarif_github(lesson, capsys, monkeypatch):
    folder = lesson.parent
    code, out, err = run_main(["check", "lesson.ipynb"], folder, capsys, monkeypatch)
    assert code == 1
    assert out.startswith("lesson.ipynb:cell 7:2:12: GA101 [confirmed]")
    assert "lesson.ipynb:cell 9:1:22: error: could not parse: expected ':'" in err

    code, out, _ = run_main(["check", "lesson.ipynb", "--format", "json"], folder, capsys, monkeypatch)
    data = json.loads(out)
    [f] = data["findings"]
    assert (f["path"], f["cell"], f["line"], f["column"]) == ("lesson.ipynb", {"index": 6, "id": "c006-code"}, 2, 12)
    assert list(f)[:6] == ["code", "name", "family", "confidence", "path", "cell"]
    assert {(r["cell"]["index"], r["line"]) for r in f["related"]} >= {(9, 5), (5, 1)}
    [edit] = f["fix"]["edits"]
    assert (edit["cell"]["index"], edit["line"], edit["column"], edit["content"]) == (6, 2, 12, "model.body(batch)")
    [e] = data["errors"]
    assert (e["kind"], e["cell"], e["line"], e["column"]) == ("parse", {"index": 8, "id": "c008-code"}, 1, 22)

    code, out, _ = run_main(["check", "lesson.ipynb", "--format", "sarif"], folder, capsys, monkeypatch)
    log = json.loads(out)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    [result] = log["runs"][0]["results"]
    [location] = result["locations"]
    assert location["physicalLocation"]["region"]["startLine"] == 2
    assert location["properties"]["notebookCell"] == {"index": 6, "id": "c006-code"}
    assert location["logicalLocations"] == [{"name": "cell 7", "kind": "notebookCell"}]

    code, out, _ = run_main(["check", "lesson.ipynb", "--format", "github"], folder, capsys, monkeypatch)
    first = out.splitlines()[0]
    # the annotation sits on the .ipynb's own line holding the cell's line
    json_line = lesson.read_text().splitlines().index('    "    return model.body(batch).detach()"') + 1
    assert first.startswith(f"::error file=lesson.ipynb,line={json_line},endLine={json_line},title=GA101")
    assert "::cell 7:2:12: GA101 [confirmed]" in first
    assert "cell 9:1:22: could not parse" in out


def test_execution_counts_do_not_change_the_order(lesson):
    # document order is the program; the counts (12, 3, 1, 7, ...) are not followed
    nb, _ = read_notebook(str(lesson))
    assert nb.source.index("import torch") < nb.source.index("class MLP") < nb.source.index("optimizer = ")


def test_non_python_and_empty_notebooks(tmp_path, capsys, monkeypatch):
    write(tmp_path / "r.ipynb", ["x <- c(1, 2)\nloss.backward()"], language="R")
    write(tmp_path / "empty.ipynb", [])
    code, out, err = run_main(["check", "."], tmp_path, capsys, monkeypatch)
    assert (code, err) == (0, "")
    assert out == "No findings in 2 files checked.\n"


def test_a_file_that_is_not_a_notebook(tmp_path, capsys, monkeypatch):
    (tmp_path / "bad.ipynb").write_text("{not json")
    (tmp_path / "v3.ipynb").write_text(json.dumps({"worksheets": [], "nbformat": 3}))
    code, out, err = run_main(["check", "."], tmp_path, capsys, monkeypatch)
    assert code == 2
    assert "bad.ipynb: error: not a notebook: invalid JSON at line 1" in err
    assert "v3.ipynb: error: nbformat 3 notebooks are not read" in err


# ------------------------------------------------------------------ same findings as the script


def _cases():
    for path in sorted(glob.glob(str(DATA / "bugs" / "*.py")) + glob.glob(str(DATA / "valid" / "*.py"))):
        with open(path, encoding="utf-8") as fh:
            yield os.path.basename(path), strip_markers(fh.read())[0]
    for rule in RULES:
        for i, ex in enumerate(rule.invalid + rule.valid):
            yield f"{rule.code}-{i}", strip_markers(ex.source)[0]


def test_notebooks_find_what_their_scripts_find():
    """Every test script and rule example, cut into one cell per top-level block: the notebook's
    findings, mapped back to the script's lines, are the script's, and nothing fails to parse."""
    analyzer = Analyzer(Config())
    mismatches, checked, found = [], 0, 0
    for name, source in _cases():
        script = analyzer.analyze_source(f"{name}.py", source)
        cells = cells_of_script(source)
        nb = notebook_from_cells(f"{name}.ipynb", [("code", text, None) for _, text in cells])
        result = analyzer.analyze_notebook(nb.path, nb)
        loc = Locator({nb.path: nb})
        got = []
        for f in result.findings:
            w = loc.span(f.span)
            got.append((cells[w.cell.index][0] + w.line - 1, w.col, f.code))
        want = [(f.span.line, f.span.col, f.code) for f in script.findings]
        checked += 1
        found += len(want)
        if sorted(got) != sorted(want) or result.problems:
            mismatches.append((name, want, got, result.problems))
    assert mismatches == []
    assert checked > 250 and found > 150


# ------------------------------------------------------------------ folders and configuration


def test_folders_configuration_and_noqa(tmp_path, capsys, monkeypatch):
    bug = "import torch\nw = torch.randn(3, requires_grad=True)"
    step = "loss = (w.detach() * 2).sum(){noqa}\nloss.backward()"
    write(tmp_path / "nb" / "a.ipynb", [bug, step.format(noqa="")])
    write(tmp_path / "nb" / "quiet.ipynb", [bug, step.format(noqa="  # noqa: GA101")])
    write(tmp_path / "nb" / ".ipynb_checkpoints" / "a-checkpoint.ipynb", [bug, step.format(noqa="")])
    write(tmp_path / "legacy" / "old.ipynb", [bug, step.format(noqa="")])
    write(tmp_path / "other" / "b.ipynb", [bug, step.format(noqa="")])
    (tmp_path / "pyproject.toml").write_text(
        '[tool.gradaudit]\nexclude = ["legacy/**"]\nper-file-ignores = { "other/*.ipynb" = ["GA101"] }\n'
    )
    code, out, _ = run_main(["check", "."], tmp_path, capsys, monkeypatch)
    assert out.splitlines()[0].startswith("nb/a.ipynb:cell 2:1:9: GA101")
    assert len(out.splitlines()) == 3
    assert out.splitlines()[1] == "3 of 3 training steps understood."
    assert out.splitlines()[2].endswith("in 3 files checked. 1 fixable with --fix.")  # a, quiet, b
    # a file named on the command line is checked even when excluded
    code, out, _ = run_main(["check", "legacy/old.ipynb"], tmp_path, capsys, monkeypatch)
    assert out.startswith("legacy/old.ipynb:cell 2:1:9: GA101")


# ------------------------------------------------------------------ fixes written back


def test_fix_changes_only_the_fixed_cell(lesson, capsys, monkeypatch):
    before = lesson.read_bytes()
    code, out, err = run_main(["check", "lesson.ipynb", "--diff"], lesson.parent, capsys, monkeypatch)
    assert out.startswith("--- a/lesson.ipynb:cell 7\n+++ b/lesson.ipynb:cell 7\n")
    assert out.endswith(
        " def features(batch):\n"
        "-    return model.body(batch).detach()\n\\ No newline at end of cell\n"
        "+    return model.body(batch)\n\\ No newline at end of cell\n"
    )
    assert lesson.read_bytes() == before
    code, out, err = run_main(["check", "lesson.ipynb", "--fix"], lesson.parent, capsys, monkeypatch)
    assert "Fixed 1 finding in 1 file." in err
    after = lesson.read_bytes()
    old, new = before.decode().splitlines(True), after.decode().splitlines(True)
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    assert len(old) == len(new)
    assert changed == [('    "    return model.body(batch).detach()"\n', '    "    return model.body(batch)"\n')]
    a, b = json.loads(before), json.loads(after)
    b["cells"][6]["source"] = a["cells"][6]["source"]
    assert a == b


@pytest.mark.parametrize("indent", [1, 2, 4, None])
def test_write_back_keeps_every_other_byte(indent):
    nb = notebook(
        [
            cell("# Ünïcode 📈", kind="markdown"),
            cell("x = 1\n\ny = 'é'\n", 3, outputs=[{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]),
            cell("z = 2", 4),
        ]
    )
    nb["cells"][2]["source"] = "z = 2\nw = 3"  # a source written as one string stays one string
    nb["metadata"]["zeta"] = {"b": 1, "a": [1, 2]}  # not sorted: the key order stays
    text = json.dumps(nb, indent=indent, ensure_ascii=indent == 2)
    out = write_back(text, {1: "x = 1\n\ny = 'ê'\nv = 4\n", 2: "z = 20\nw = 3"})
    data = json.loads(out)
    assert data["cells"][1]["source"] == ["x = 1\n", "\n", "y = 'ê'\n", "v = 4\n"]
    assert data["cells"][2]["source"] == "z = 20\nw = 3"
    restored = write_back(out, {1: "x = 1\n\ny = 'é'\n", 2: "z = 2\nw = 3"})
    assert restored == text
    # what lies before the first source and after the last one is untouched
    first, last = text.index('"source"'), text.rindex('"source"')
    assert out[:first] == text[:first]
    assert out.endswith(text[text.index("}", last) :])


def test_unsaved_cells_round_trip_through_json():
    nb = notebook_from_json("n.ipynb", dumps(notebook(["import torch", cell("text", kind="markdown"), "x = 1"])))
    assert [c.kind for c in nb.cells] == ["code", "markdown", "code"]
    assert nb.source == "import torch\nx = 1\n"
    assert nb.virtual(2, 1, 4) == (2, 4)
    assert nb.place(2, 4).cell.index == 2


# ------------------------------------------------------------------ the audit


def test_audit_names_cells(lesson, capsys, monkeypatch):
    code, out, err = run_main(["audit", "lesson.ipynb"], lesson.parent, capsys, monkeypatch)
    assert "- **where**: `lesson.ipynb:cell 7:2:12` in `features`" in out
    assert "### Step 1: `loss.backward()` in `<module>` (lesson.ipynb:cell 10:6)" in out
    assert "### Correction 1: GA101 at lesson.ipynb:cell 7:2 (safe)" in out
    code, out, err = run_main(["audit", "lesson.ipynb", "--format", "json"], lesson.parent, capsys, monkeypatch)
    data = json.loads(out)
    schema = json.loads((Path(__file__).parents[1] / "docs" / "audit-report.schema.json").read_text())
    jsonschema.validate(data, schema)
    [f] = data["findings"]
    assert (f["cell"], f["cell_line"]) == ({"index": 6, "id": "c006-code"}, 2)
    assert data["steps"][0]["cell"]["index"] == 9 and data["steps"][0]["cell_line"] == 6
    assert data["errors"][0]["cell"] == {"index": 8, "id": "c008-code"}
