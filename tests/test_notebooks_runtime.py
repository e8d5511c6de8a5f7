"""Notebooks for real: `gradaudit check --fix` on a notebook changes only the fixed cell and the
notebook still runs (executed cell by cell in a Jupyter kernel with torch, nbclient + ipykernel);
`gradaudit probe --emit` on a notebook writes a test that runs its cells and fails on the defect."""

import json
import os
import subprocess
import sys

import pytest
from notebooks import cell, write

pytestmark = pytest.mark.runtime

torch = pytest.importorskip("torch")
nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")


def cells(cut: bool):
    return [
        cell("# A regression whose features come from a helper", kind="markdown"),
        cell("!echo preparing\nimport torch\nimport torch.nn as nn\ntorch.manual_seed(0)", 3),
        cell(
            "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.body = nn.Sequential(nn.Linear(3, 16), nn.ReLU())\n        self.head = nn.Linear(16, 1)\n\n"
            "    def forward(self, x):\n        return self.head(self.body(x))",
            1,
        ),
        cell("%%capture\nmodel = Net()\nx = torch.randn(64, 3)\ny = x.sum(dim=1, keepdim=True)", 2),
        cell("optimizer = torch.optim.SGD(model.parameters(), lr=0.05)\nbefore = model.body[0].weight.clone()", 9),
        cell("def features(batch):\n    return model.body(batch)" + (".detach()" if cut else ""), 5),
        cell(
            "%%time\nfor epoch in range(30):\n    optimizer.zero_grad()\n"
            "    loss = ((model.head(features(x)) - y) ** 2).mean()\n    loss.backward()\n    optimizer.step()",
            6,
            outputs=[{"output_type": "stream", "name": "stdout", "text": ["CPU times: user 5 ms\n"]}],
        ),
        cell("%time print('body trained:', not torch.equal(before, model.body[0].weight))", 7),
    ]


def gradaudit(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "gradaudit.analysis.app.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def execute(path) -> list[str]:
    """Run the notebook in a kernel (in its folder); the text each code cell printed."""
    nb = nbformat.read(str(path), as_version=4)
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    out = []
    for c in nb.cells:
        if c.cell_type == "code":
            out.append("".join(o.get("text", "") for o in c.outputs if o.output_type == "stream"))
    return out


def test_fix_round_trips_and_the_notebook_still_runs(tmp_path):
    path = tmp_path / "regression.ipynb"
    write(path, cells(cut=True))
    before = path.read_text()
    # as written, the helper's .detach() leaves the body untrained: the kernel shows it
    assert "body trained: False" in execute(path)[-1]
    r = gradaudit("check", "regression.ipynb", "--fix", cwd=tmp_path)
    assert "Fixed 1 finding in 1 file." in r.stderr, r.stdout + r.stderr
    after = path.read_text()
    # one line of the file changed: the fixed cell's source line; outputs, metadata, ids, counts kept
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert changed == [('    "    return model.body(batch).detach()"', '    "    return model.body(batch)"')]
    old, new = json.loads(before), json.loads(after)
    new["cells"][5]["source"] = old["cells"][5]["source"]
    assert old == new
    # the fixed notebook opens with nbformat (valid) and runs: now the body trains
    nbformat.validate(nbformat.read(str(path), as_version=4))
    printed = execute(path)
    assert "preparing" in printed[0]
    assert "body trained: True" in printed[-1]
    assert gradaudit("check", "regression.ipynb", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("cut", [False, True])
def test_probe_emit_runs_the_cells(tmp_path, cut):
    path = tmp_path / "regression.ipynb"
    write(path, cells(cut))
    r = gradaudit("probe", "regression.ipynb", "--emit", "test_gradflow.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    test = (tmp_path / "test_gradflow.py").read_text()
    assert "(regression.ipynb:cell 7:5)" in test
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_gradflow.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
    )
    if cut:
        assert run.returncode == 1, run.stdout
        assert "no gradient: model.body.0.bias, model.body.0.weight" in run.stdout
    else:
        assert run.returncode == 0, run.stdout + run.stderr


def test_the_example_notebook_runs_and_its_encoder_never_trains(tmp_path):
    """examples/README.md: run unchanged, sensor_regression.ipynb trains without an error while the
    encoder behind the `.detach()` stays at its initial values; after `--fix` the encoder trains."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = tmp_path / "sensor_regression.ipynb"
    path.write_bytes(open(os.path.join(root, "examples", "sensor_regression.ipynb"), "rb").read())

    def encoder_changed() -> str:
        nb = nbformat.read(str(path), as_version=4)
        at = next(i for i, c in enumerate(nb.cells) if "optimizer = " in c.source) + 1
        nb.cells.insert(at, nbformat.v4.new_code_cell("start = [p.clone() for p in encoder.parameters()]"))
        probe = "print('encoder changed:', any(not torch.equal(a, b) for a, b in zip(start, encoder.parameters())))"
        nb.cells.append(nbformat.v4.new_code_cell(probe))
        nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
        return "".join(o.get("text", "") for o in nb.cells[-1].outputs)

    assert "encoder changed: False" in encoder_changed()
    r = gradaudit("check", "sensor_regression.ipynb", "--fix", cwd=tmp_path)
    assert "Fixed 2 findings in 1 file." in r.stderr, r.stdout + r.stderr
    assert "encoder changed: True" in encoder_changed()
