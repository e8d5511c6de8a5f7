"""`gradaudit probe PATH --emit`: the plans read from the training-step model, the test file it
writes, and (under real torch) that the emitted test fails on a buggy example and passes once the
quick fixes are applied; the function form asks for fixtures it cannot build."""

import ast
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from clitools import clean_env, run_cli

from gradaudit.analysis.app import gradflow
from gradaudit.analysis.check.engine import Analyzer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


def plans_of(path):
    r = Analyzer().analyze_file(path)
    return gradflow.plan(r.model, path, r.files)


def test_plans_for_the_examples():
    (p,) = plans_of(os.path.join(EXAMPLES, "text_trainer.py"))
    assert p.mode == "script" and p.optimizers == ("self.optimizer",)
    # the encoder cut by .detach() and the projections in a plain list must get gradient from this loss
    assert p.into == ("model",)
    assert p.updates == ("self.optimizer", "model")
    assert p.call_text == "loss.backward()" and p.function == "Trainer.train_step"
    d, g = plans_of(os.path.join(EXAMPLES, "gan_training.py"))
    # each player's loss is asked to reach that player only: the detached generator is a valid look-alike
    assert (d.into, d.optimizers, g.into, g.optimizers) == (("discriminator",), ("opt_d",), ("generator",), ("opt_g",))
    (m,) = plans_of(os.path.join(EXAMPLES, "manual_sgd.py"))
    assert m.manual and m.into == (gradflow.LOSS_LEAVES,)
    (f,) = plans_of(os.path.join(EXAMPLES, "project", "train.py"))
    # the frozen encoder is not asked to get gradient; the optimizer holding it as a group is asked to change
    assert f.into == ("model.head",) and "optimizer" in f.updates and "model" in f.watch


def test_cover_picks_the_fewest_modules():
    known = {"m.a.0.weight", "m.a.0.bias", "m.b.weight", "m.b.bias", "c.w"}
    assert gradflow.cover({"m.a.0.weight", "m.a.0.bias", "m.b.weight", "m.b.bias"}, known) == ("m",)
    assert gradflow.cover({"m.b.weight", "m.b.bias", "c.w"}, known) == ("c", "m.b")
    assert gradflow.cover({"m.b.weight"}, known) == ("m.b.weight",)


def test_emitted_file_runs_the_script_per_step(tmp_path):
    shutil.copy(os.path.join(EXAMPLES, "gan_training.py"), tmp_path)
    p = run_cli("probe", "gan_training.py", "--emit", "tests/test_gan.py", cwd=tmp_path)
    assert p.returncode == 2 and "cannot write tests/test_gan.py" in p.stderr  # no tests/ folder yet
    (tmp_path / "tests").mkdir()
    p = run_cli("probe", "gan_training.py", "--emit", "tests/test_gan.py", "--steps", "2", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "wrote tests/test_gan.py: 2 tests" in p.stderr
    text = (tmp_path / "tests" / "test_gan.py").read_text()
    tree = ast.parse(text)
    tests = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert tests == ["test_gradflow_main_d_loss_line71", "test_gradflow_main_g_loss_line77"]
    assert "SCRIPT = os.path.join(HERE, '../gan_training.py')" in text and "STEPS = 2" in text
    assert "at=('gan_training.py', 71, 71)" in text and "optimizers=['opt_d']" in text
    assert "run.assert_flows(into=['generator'], updates=['opt_g', 'generator'], finite=True, cleared=True)" in text


def test_without_emit_prints_the_test(tmp_path):
    p = run_cli("probe", os.path.join(EXAMPLES, "text_trainer.py"), cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.startswith('"""Gradient-flow tests for text_trainer.py')


def test_nothing_to_probe(tmp_path):
    (tmp_path / "util.py").write_text("def f(x):\n    return x + 1\n")
    p = run_cli("probe", "util.py", "--emit", "t.py", cwd=tmp_path)
    assert p.returncode == 1 and "no training step to probe" in p.stderr and not (tmp_path / "t.py").exists()
    p = run_cli("probe", "missing.py", cwd=tmp_path)
    assert p.returncode == 2 and "not a file" in p.stderr


LIB = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)).detach())


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
"""

CONFTEST = """
import pytest
import torch

from lib import Net


@pytest.fixture
def model():
    torch.manual_seed(0)
    return Net()


@pytest.fixture
def optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.1)
"""


def test_function_plan_asks_for_fixtures(tmp_path):
    (tmp_path / "lib.py").write_text(LIB)
    (p,) = plans_of(str(tmp_path / "lib.py"))
    assert p.mode == "function"
    assert p.fixtures == ("model", "optimizer") and p.batch == (("x", "y"), "class")
    assert p.call == "train_step(model, optimizer, x, y)"
    text = gradflow.emit([p], str(tmp_path / "test_lib.py"))
    assert "def test_gradflow_train_step_loss_line20(model, optimizer):" in text
    assert "x, y = batch_for(model, target='class')" in text


def test_methods_are_not_guessed(tmp_path):
    (tmp_path / "t.py").write_text(
        textwrap.dedent("""
        import torch.nn.functional as F

        class Trainer:
            def step(self, batch):
                x, y = batch
                loss = F.mse_loss(self.model(x), y)
                loss.backward()
                self.opt.step()
        """)
    )
    (p,) = plans_of(str(tmp_path / "t.py"))
    assert p.mode == "none" and "methods need an instance" in p.reason


def test_importing_the_probe_does_not_import_torch():
    code = "import sys, gradaudit.probe; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=clean_env())
    assert out.stdout.strip() == "False", out.stderr


def test_missing_torch_is_said_clearly():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from gradaudit.probe import probe, TorchMissing\n"
        "try:\n    probe()\nexcept TorchMissing as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=clean_env())
    assert "gradaudit.probe runs your training step under PyTorch, and torch is not installed" in out.stdout
    assert "torch is your project's dependency, not gradaudit's" in out.stdout


def pytest_run(folder, *files):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
        cwd=str(folder),
        capture_output=True,
        text=True,
        timeout=900,
        env=clean_env(),
    )


@pytest.mark.runtime
@pytest.mark.slow
def test_emitted_test_fails_on_the_bug_and_passes_after_the_quick_fix(tmp_path):
    pytest.importorskip("torch")
    shutil.copy(os.path.join(EXAMPLES, "text_trainer.py"), tmp_path)
    assert run_cli("probe", "text_trainer.py", "--emit", "test_gradflow.py", cwd=tmp_path).returncode == 0
    before = pytest_run(tmp_path, "test_gradflow.py")
    assert before.returncode == 1, before.stdout
    assert "9 parameters got no gradient from this backward()" in before.stdout  # the .detach() cut
    assert "model.layer_proj.0.weight" in before.stdout and "in no optimizer" in before.stdout  # the plain list
    fixed = run_cli("check", "text_trainer.py", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert "Fixed 2 findings" in fixed.stderr, fixed.stderr
    after = pytest_run(tmp_path, "test_gradflow.py")
    assert after.returncode == 0, after.stdout[-3000:]


@pytest.mark.runtime
@pytest.mark.slow
def test_emitted_function_test(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "lib.py").write_text(LIB)
    assert run_cli("probe", "lib.py", "--emit", "test_lib_gradflow.py", cwd=tmp_path).returncode == 0
    # without the fixtures the test errors: it never passes on nothing
    alone = pytest_run(tmp_path, "test_lib_gradflow.py")
    assert alone.returncode == 1 and "fixture 'model' not found" in alone.stdout
    (tmp_path / "conftest.py").write_text(CONFTEST)
    bug = pytest_run(tmp_path, "test_lib_gradflow.py")
    assert bug.returncode == 1 and "model.body.bias, model.body.weight" in bug.stdout
    (tmp_path / "lib.py").write_text(LIB.replace("torch.relu(self.body(x)).detach()", "torch.relu(self.body(x))"))
    ok = pytest_run(tmp_path, "test_lib_gradflow.py")
    assert ok.returncode == 0, ok.stdout[-3000:]


PROBE_DATA = os.path.join(ROOT, "tests", "data", "probe")
SCRIPTS = {  # buggy script: what its emitted test must say
    "head_unoptimized": "never changed (2 in no optimizer)",
    "frozen_encoder": "holds only frozen parameters",
    "nan_gradient": "non-finite",
    "missing_zero_grad": "no zero_grad() between steps",
}


@pytest.mark.runtime
@pytest.mark.slow
def test_emitted_tests_flag_the_buggy_scripts_and_pass_their_fixed_forms(tmp_path):
    """Four small buggy scripts (an unoptimized head, a frozen encoder, NaN gradients, no zero_grad)
    and their fixed forms: one test file each from `gradaudit probe --emit`, run in one pytest."""
    pytest.importorskip("torch")
    files = []
    for name in SCRIPTS:
        for variant in (name, f"{name}_fixed"):
            shutil.copy(os.path.join(PROBE_DATA, f"{variant}.py"), tmp_path)
            p = run_cli("probe", f"{variant}.py", "--emit", f"test_{variant}.py", cwd=tmp_path)
            assert p.returncode == 0, p.stderr
            files.append(f"test_{variant}.py")
    out = pytest_run(tmp_path, "-rA", *files).stdout
    outcome = {}
    for line in out.splitlines():
        for word in ("PASSED", "FAILED"):
            if line.startswith(word + " "):
                outcome[line.split()[1].split("::")[0]] = word
    for name, message in SCRIPTS.items():
        assert outcome[f"test_{name}.py"] == "FAILED", out[-4000:]
        assert outcome[f"test_{name}_fixed.py"] == "PASSED", out[-4000:]
        section = out[out.index(f"test_{name}.py:") :] if f"test_{name}.py:" in out else out
        assert message in out, (name, section[:2000])
