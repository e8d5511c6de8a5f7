"""Folders a script's folder puts on sys.path (`import _init_paths`, `sys.path.insert(...)` at the
top of a script): read from the text, and imports resolved through them."""

import os
import textwrap

from gradaudit.analysis.check.engine import Analyzer
from gradaudit.analysis.source.path_edits import edited_folders, folder_edits


def _write(root, rel, text=""):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(textwrap.dedent(text))
    return path


def _tree(tmp_path):
    root = str(tmp_path)
    _write(root, "pyproject.toml")
    for d in ("lib/models", "src/pkg", "third_party/repo", "tools"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    return root


def test_helper_function_and_dotdot(tmp_path):
    root = _tree(tmp_path)
    path = _write(
        root,
        "tools/_init_paths.py",
        """
        import os.path as osp
        import sys

        def add_path(path):
            if path not in sys.path:
                sys.path.insert(0, path)

        this_dir = osp.dirname(__file__)
        add_path(osp.join(this_dir, '..', 'lib'))
        """,
    )
    assert edited_folders(path, open(path).read(), root) == [os.path.join(root, "lib")]


def test_pathlib_parents_and_div(tmp_path):
    root = _tree(tmp_path)
    path = _write(
        root,
        "tools/train.py",
        """
        import sys
        from pathlib import Path
        ROOT = Path(__file__).resolve().parents[1]
        sys.path.append(str(ROOT / "src"))
        if str(ROOT / "third_party" / "repo") not in sys.path:
            sys.path.insert(0, str(ROOT / "third_party" / "repo"))
        """,
    )
    assert edited_folders(path, open(path).read(), root) == [
        os.path.join(root, "src"),
        os.path.join(root, "third_party", "repo"),
    ]


def test_relative_constant_list_edits_and_loop(tmp_path):
    root = _tree(tmp_path)
    path = _write(
        root,
        "tools/run.py",
        """
        import sys, os
        sys.path[0:0] = ["lib"]
        for p in ["src", "../third_party/repo"]:
            sys.path.insert(0, p)
        sys.path.extend([os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "missing")])
        """,
    )
    # relative folders are taken from the script's folder, then from the project's root; a folder
    # that does not exist adds nothing
    assert edited_folders(path, open(path).read(), root) == [
        os.path.join(root, "lib"),
        os.path.join(root, "src"),
        os.path.join(root, "third_party", "repo"),
    ]


def test_unknown_values_add_nothing(tmp_path):
    root = _tree(tmp_path)
    path = _write(
        root,
        "tools/env.py",
        """
        import os, sys
        sys.path.insert(0, os.environ["LIB"])
        sys.path.append(os.getcwd())
        def later():
            sys.path.append("lib")  # a function nothing at the top level calls
        """,
    )
    assert edited_folders(path, open(path).read(), root) == []


def test_folder_edits_cached_until_a_file_changes(tmp_path):
    root = _tree(tmp_path)
    _write(root, "tools/a.py", "import sys\nsys.path.insert(0, '../lib')\n")
    folder = os.path.join(root, "tools")
    assert folder_edits(folder, root) == (os.path.join(root, "lib"),)
    path = _write(root, "tools/b.py", "import sys\nsys.path.insert(0, '../src')\n")
    os.utime(path, ns=(1, 1))  # a new file is noticed whatever its mtime
    assert folder_edits(folder, root) == (os.path.join(root, "lib"), os.path.join(root, "src"))


NET = """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.backbone(x).relu())
"""

TRAIN = """
import _init_paths  # noqa: F401
import torch
import torch.nn.functional as F
from models.net import Net

model = Net()
optimizer = torch.optim.SGD({params}, lr=0.1)
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
"""


def _project(tmp_path, params):
    root = _tree(tmp_path)
    _write(root, "lib/models/__init__.py")
    _write(root, "lib/models/net.py", NET)
    helper = "import os.path as osp, sys\nsys.path.insert(0, osp.join(osp.dirname(__file__), '..', 'lib'))\n"
    _write(root, "tools/_init_paths.py", helper)
    return _write(root, "tools/train.py", TRAIN.format(params=params))


def test_script_in_tools_imports_the_model_from_lib(tmp_path):
    result = Analyzer().analyze_file(_project(tmp_path, "model.backbone.parameters()"))
    assert [(f.code, f.span.line) for f in result.findings] == [("GA108", 8)]


def test_valid_script_in_tools_is_understood_and_quiet(tmp_path):
    result = Analyzer().analyze_file(_project(tmp_path, "model.parameters()"))
    assert result.findings == []
    assert [s.understood for s in result.model.steps] == [True]


GAN_STEP = """
import torch
import torch.nn as nn
from lib.models.networks import Net


model = Net()
optimizer = torch.optim.SGD(model.backbone.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
"""


def test_a_package_inside_a_folder_without_init_is_imported_from_the_folder_above(tmp_path):
    # `lib/` has no __init__.py, `lib/models/` has one: a module of it imports `lib.models...`, as
    # the scripts of the folder above do (no project marker anywhere)
    root = str(tmp_path)
    _write(root, "lib/models/__init__.py")
    _write(root, "lib/models/networks.py", NET)
    path = _write(root, "lib/models/step.py", GAN_STEP)
    result = Analyzer().analyze_file(path)
    assert [(f.code, f.span.line) for f in result.findings] == [("GA108", 8)]
    assert "lib" not in result.libraries.missing
