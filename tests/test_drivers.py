"""A check of single files also analyses the project files whose training steps run them."""

from __future__ import annotations

import os

from gradaudit.analysis.app.cli import check_paths
from gradaudit.analysis.check.config import Config
from gradaudit.analysis.check.discovery import discover
from gradaudit.analysis.check.drivers import find_drivers, project_root

LOSSES = """\
import torch.nn.functional as F


def feature_loss(pred, target):
    return F.mse_loss(pred.detach(), target)
"""

TRAIN = """\
import torch
import torch.nn as nn

from pkg.losses import feature_loss

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    opt.zero_grad()
    loss = feature_loss(model(x), y)
    loss.backward()
    opt.step()
"""


def _project(tmp_path, files: dict[str, str]) -> str:
    (tmp_path / "pyproject.toml").write_text("")
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return str(tmp_path)


def _check(root, *paths):
    here = os.getcwd()
    os.chdir(root)
    try:
        return check_paths(list(paths), Config(), jobs=1, cache=False)
    finally:
        os.chdir(here)


def test_a_loss_module_checked_alone_shows_what_its_importers_training_step_proves(tmp_path):
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/losses.py": LOSSES, "train.py": TRAIN})
    got = _check(root, "pkg/losses.py")
    assert [(f.code, f.confidence, f.span.path, f.span.line) for f in got.findings] == [
        ("GA101", "confirmed", "pkg/losses.py", 5)
    ]
    # the step it rests on is named: the backward and the optimizer in train.py
    assert {os.path.basename(r.span.path) for r in got.findings[0].related} == {"train.py"}


def test_what_the_driver_finds_in_its_own_file_is_not_reported(tmp_path):
    train = TRAIN.replace("    opt.step()\n", "")  # GA204 in train.py itself
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/losses.py": LOSSES, "train.py": train})
    got = _check(root, "pkg/losses.py")
    assert {f.span.path for f in got.findings} == {"pkg/losses.py"}


def test_drivers_run_the_module_by_name_through_packages_and_scripts(tmp_path):
    root = _project(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.losses import *\n",
            "pkg/losses.py": LOSSES,
            # imports the package only and never names feature_loss: not a driver
            "pkg/other.py": "from pkg import losses as _l\n\nif __name__ == '__main__':\n    print(1)\n",
            # a script building the loss for a trainer module (no step words of its own)
            "main.py": "from pkg import feature_loss\nfrom trainer import fit\n\nif __name__ == '__main__':\n"
            "    fit(feature_loss)\n",
            "trainer.py": "def fit(loss_fn):\n    loss_fn(1, 2).backward()\n",
            "unrelated.py": "import torch\n\nx = torch.ones(1, requires_grad=True)\nx.sum().backward()\n",
        },
    )
    files, _ = discover([root])
    found = find_drivers(os.path.join(root, "pkg", "losses.py"), files, {}, root)
    assert [os.path.relpath(f, root) for f in found] == ["main.py"]
    assert project_root(os.path.join(root, "pkg", "losses.py")) == root


def test_a_driver_whose_analysis_fails_is_reported_not_dropped(tmp_path, monkeypatch):
    # an engine bug in the driver's analysis: the file's own findings stand, and the check says
    # that what the driver would have shown is missing (an internal error, exit status 2)
    from gradaudit.analysis.check.engine import Analyzer

    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/losses.py": LOSSES, "train.py": TRAIN})
    real = Analyzer.analyze_file

    def breaks_on_train(self, path, *a, **k):
        if os.path.basename(path) == "train.py":
            raise RuntimeError("planted")
        return real(self, path, *a, **k)

    monkeypatch.setattr(Analyzer, "analyze_file", breaks_on_train)
    got = _check(root, "pkg/losses.py")
    assert [(p.kind, p.path) for p in got.problems] == [("internal", "pkg/losses.py")]
    assert "RuntimeError: planted" in got.problems[0].message and "train.py" in got.problems[0].message
    assert got.findings == []  # the GA101 only the driver's step proves is missing


def test_a_file_with_a_training_step_of_its_own_is_checked_alone(tmp_path, monkeypatch):
    # its own steps say how its code is used: no importer is analysed
    from gradaudit.analysis.check import drivers

    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/losses.py": LOSSES, "train.py": TRAIN})
    analysed = []
    real = drivers.driven_findings
    monkeypatch.setattr(drivers, "driven_findings", lambda *a: analysed.append(a[3]) or real(*a))
    _check(root, "train.py")
    assert analysed == []
    _check(root, "pkg/losses.py")
    assert [[os.path.basename(d) for d in ds] for ds in analysed] == [["train.py"]]


def test_a_folder_check_analyses_each_file_once(tmp_path, monkeypatch):
    from gradaudit.analysis.check import drivers

    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/losses.py": LOSSES, "train.py": TRAIN})
    monkeypatch.setattr(drivers, "driven_findings", lambda *a: (_ for _ in ()).throw(AssertionError("driven")))
    got = _check(root, ".")
    assert [(f.code, f.span.path) for f in got.findings] == [("GA101", "pkg/losses.py")]


AGENT = """\
import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.net = nn.Linear(4, 2)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=1e-3)

    def learn(self, x, y):
        loss = nn.functional.mse_loss(self.net(x), y)
        loss.backward()
        self.opt.step()
"""

MAIN = """\
import torch

from agent import Agent

agent = Agent()
for episode in range(10):
    agent.learn(torch.randn(8, 4), torch.randn(8, 2))
"""


def test_an_agent_whose_loop_is_in_its_importer_shows_what_the_loop_proves(tmp_path):
    # learn() steps with no zero_grad: one call alone is fine, the script's loop makes it GA201
    root = _project(tmp_path, {"agent.py": AGENT, "main.py": MAIN})
    got = _check(root, "agent.py")
    assert [(f.code, f.confidence, f.span.path) for f in got.findings] == [("GA201", "confirmed", "agent.py")]
    assert "GA201" not in {f.code for f in _check(root, "agent.py", "main.py").findings if f.span.path == "main.py"}


def test_a_checkout_beside_the_file_is_another_project(tmp_path, monkeypatch):
    # a working folder of clones, none of them with a marker the checked file's folder shares: the
    # folder is the project (the working folder), but another clone's files are not searched
    from gradaudit.analysis.check.drivers import project_files

    for rel, text in {"work/losses.py": LOSSES, "work/train.py": TRAIN.replace("pkg.losses", "losses")}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    clone = tmp_path / "work" / "other"
    (clone / ".git").mkdir(parents=True)
    (clone / "train.py").write_text(TRAIN.replace("pkg.losses", "losses"))
    work = str(tmp_path / "work")
    monkeypatch.chdir(work)
    assert project_root(os.path.join(work, "losses.py")) == work
    assert sorted(os.path.relpath(f, work) for f in project_files(work, Config())) == ["losses.py", "train.py"]
    # a folder check still covers the clone: only the driver search leaves it out
    assert len(discover([work])[0]) == 3


def test_a_working_folder_with_a_large_dataset_is_no_project(tmp_path, monkeypatch):
    # no marker: the working folder is the project only while it is small, counting every entry
    # (a dataset folder of images, not only Python files)
    from gradaudit.analysis.check import drivers

    (tmp_path / "losses.py").write_text(LOSSES)
    data = tmp_path / "data"
    data.mkdir()
    for i in range(30):
        (data / f"{i}.png").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    assert project_root(str(tmp_path / "losses.py")) == str(tmp_path)
    monkeypatch.setattr(drivers, "MAX_ENTRIES", 25)
    assert project_root(str(tmp_path / "losses.py")) is None


FOCAL = """\
import torch


def focal_loss(pred, gt):
    pos = gt.eq(1).float()
    neg = gt.lt(1).float()
    pos_loss = torch.log(pred) * torch.pow(1 - pred, 2) * pos
    neg_loss = torch.log(1 - pred) * torch.pow(pred, 2) * torch.pow(1 - gt, 4) * neg
    return -(pos_loss.sum() + neg_loss.sum()) / pos.sum().clamp(min=1)
"""

HEATMAP_TRAIN = """\
import torch
import torch.nn as nn

from losses import focal_loss

head = nn.Conv2d(3, 1, 1)
opt = torch.optim.Adam(head.parameters(), lr=1e-3)
for _ in range(3):
    x, gt = torch.randn(2, 3, 8, 8), torch.rand(2, 1, 8, 8)
    pred = {squash}
    loss = focal_loss(pred, gt)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_loss_run_by_its_importer_gives_up_what_it_showed_run_alone(tmp_path):
    # RTM3D's focal loss: run alone on made-up inputs, `log(1 - pred)` may be log(0); the training step
    # that runs it gives it a sigmoid clamped away from 0 and 1, and that is what counts
    clamped = "torch.clamp(torch.sigmoid(head(x)), min=1e-4, max=1 - 1e-4)"
    root = _project(tmp_path, {"losses.py": FOCAL, "train.py": HEATMAP_TRAIN.format(squash=clamped)})
    alone = _check(root, "losses.py")
    assert alone.findings == []
    assert _check(root, ".").findings == []  # a check of the folder: train.py's analysis ran it
    # the same loss given a sigmoid as is: the importer's step shows the hazards, not the run alone
    raw = tmp_path / "raw"
    raw.mkdir()
    root2 = _project(raw, {"losses.py": FOCAL, "train.py": HEATMAP_TRAIN.format(squash="torch.sigmoid(head(x))")})
    got = _check(root2, "losses.py")
    assert sorted((f.code, f.span.line) for f in got.findings) == [("GA401", 7), ("GA401", 8)]
    assert all("on its own" not in f.message for f in got.findings)


DEMO = """\
import torch

from losses import focal_loss

pred = torch.rand(2, 1, 8, 8)
print(focal_loss(pred, torch.rand(2, 1, 8, 8)))
"""


def test_a_loss_run_by_a_script_that_does_not_train_keeps_what_it_showed_run_alone(tmp_path):
    # ASL's infer.py runs the loss once to show it: no backward, so it says nothing of how it trains
    root = _project(tmp_path, {"losses.py": FOCAL, "demo.py": DEMO})
    for target in ("losses.py", "."):
        got = _check(root, target)
        assert [(f.code, f.span.line) for f in got.findings] == [("GA401", 8)]
        assert all("on its own" in f.message for f in got.findings)


PROJECTED = """\
import torch


class KeypointLoss:
    def __call__(self, targets_3d, preds_3d, **kwargs):
        return self.compute(targets_3d, preds_3d)

    def compute(self, targets, predictions):
        dist = torch.linalg.norm(targets - predictions, dim=-1)
        return torch.masked_select(dist, ~torch.isnan(dist)).mean()
"""

PROJECTED_TRAIN = """\
import torch
import torch.nn as nn
from camera_models import cameras, loader

from losses import KeypointLoss

head = nn.Linear(4, 3)
criterion = KeypointLoss()
opt = torch.optim.Adam(head.parameters(), lr=1e-3)
for batch in loader:
    preds = head(batch["x"])
    loss = criterion({call})
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_driver_that_ran_the_hazard_on_values_it_could_not_follow_leaves_what_the_unit_showed(tmp_path):
    # lightning-pose: the criterion's training step calls it with known predictions, but the 3D
    # keypoints its helper takes (NaN labels dropped only after the norm) come from a loader and a
    # camera library the engine cannot see: that run says nothing there, and what running the
    # criterion alone showed stays
    call = 'preds_2d=preds, targets_3d=batch["kp3d"], preds_3d=cameras.triangulate(batch["views"])'
    root = _project(tmp_path, {"losses.py": PROJECTED, "train.py": PROJECTED_TRAIN.format(call=call)})
    for target in ("losses.py", "."):
        got = _check(root, target)
        assert [(f.code, f.span.line) for f in got.findings] == [("GA405", 9)], target
        assert all("on its own" in f.message for f in got.findings)
    # the labels' NaN replaced in the step and the predictions given: the driver decides
    plain = tmp_path / "plain"
    plain.mkdir()
    known = 'preds_2d=preds, targets_3d=torch.nan_to_num(batch["kp3d"]), preds_3d=preds'
    root2 = _project(plain, {"losses.py": PROJECTED, "train.py": PROJECTED_TRAIN.format(call=known)})
    for target in ("losses.py", "."):
        assert _check(root2, target).findings == [], target


KD = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class BaseDistiller:
    def __init__(self, student, optimizer, loader):
        self.student, self.optimizer, self.loader = student, optimizer, loader

    def train_student(self, epochs=10):
        for _ in range(epochs):
            for x, y in self.loader:
                loss = self.calculate_kd_loss(self.student(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

    def calculate_kd_loss(self, out, y):
        raise NotImplementedError


class Attention(BaseDistiller):
    def calculate_kd_loss(self, out, y):
        return F.cross_entropy(out, y)
"""

KD_TEST = """\
import torch
import torch.nn as nn

from pkg.kd import Attention


def test_attention():
    student = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1))
    loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]
    att = Attention(student, torch.optim.SGD(student.parameters(), lr=0.1), loader)
    att.train_student(epochs=1)
"""


def test_a_pytest_test_that_runs_the_training_loop_is_a_driver(tmp_path):
    # a library's training loop is run by its tests only: pytest calls `test_attention`, which
    # builds the subclass whose loss hook feeds the student's output to cross_entropy, and a student
    # that ends in a softmax (after KD_Lib): probabilities into cross_entropy
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/kd.py": KD, "tests/test_kd.py": KD_TEST})
    got = _check(root, "pkg/kd.py")
    assert [(f.code, f.span.path, f.span.line) for f in got.findings] == [("GA407", "pkg/kd.py", 24)]
    # the same test module, not named as pytest collects it, drives nothing: the inherited loop runs
    # on the subclass whose hook it calls, but on a student it does not know
    os.rename(os.path.join(root, "tests", "test_kd.py"), os.path.join(root, "tests", "kd_case.py"))
    assert _check(root, "pkg/kd.py").findings == []
