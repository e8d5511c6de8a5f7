"""examples/README.md says what each bundled example does when run unchanged; run them with torch
and hold it to that (needs the `test` extra). Slow: they run under real torch."""

from __future__ import annotations

import importlib.util
import os

import pytest
from runtime.forkrun import run_scripts

pytestmark = [
    pytest.mark.runtime,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed (the `test` extra)"),
]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
SILENT = [
    ("finetune_classifier.py", EXAMPLES),
    ("text_trainer.py", EXAMPLES),
    ("gan_training.py", EXAMPLES),
    ("multilabel_tagger.py", EXAMPLES),
    ("train.py", os.path.join(EXAMPLES, "project")),
]
CRASHING = [
    ("manual_sgd.py", "modified by an inplace operation"),
    ("char_lm.py", "Trying to backward through the graph a second time"),
]


@pytest.fixture(scope="module")
def ran():
    """Each example run as `python SCRIPT` in its folder, torch imported once for all (forkrun.py)."""
    jobs = [{"id": script, "script": os.path.join(cwd, script), "cwd": cwd} for script, cwd in SILENT]
    jobs += [{"id": script, "script": os.path.join(EXAMPLES, script), "cwd": EXAMPLES} for script, _ in CRASHING]
    jobs.append({"id": "params-unchanged", "code": PARAMS_UNCHANGED.format(folder=EXAMPLES), "cwd": EXAMPLES})
    return run_scripts(jobs)


@pytest.mark.parametrize("script, cwd", SILENT)
def test_silent_examples_run_to_the_end(script, cwd, ran):
    p = ran[script]
    assert p["returncode"] == 0, p["stderr"][-2000:]


@pytest.mark.parametrize("script, message", CRASHING)
def test_crashing_examples_raise_at_backward(script, message, ran):
    p = ran[script]
    assert p["returncode"] != 0
    assert "RuntimeError" in p["stderr"] and message in p["stderr"] and "backward" in p["stderr"]


PARAMS_UNCHANGED = """
import contextlib, io, sys, torch
sys.path.insert(0, {folder!r})
import multilabel_tagger as m
made = []
class Recorded(m.SetTagger):
    def __init__(self):
        super().__init__()
        made.append((self, [p.detach().clone() for p in self.parameters()]))
m.SetTagger = Recorded
with contextlib.redirect_stdout(io.StringIO()):
    m.main()
model, before = made[0]
print(all(torch.equal(a, b) for a, b in zip(before, model.parameters())))
"""


def test_multilabel_tagger_never_changes_its_parameters(ran):
    """GA202: the step after zero_grad() sees no gradients, so 300 steps leave every weight as built."""
    p = ran["params-unchanged"]
    assert p["returncode"] == 0, p["stderr"][-2000:]
    assert p["stdout"].strip() == "True"
