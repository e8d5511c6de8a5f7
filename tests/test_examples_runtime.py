"""examples/README.md says what each bundled example does when run unchanged; run them with torch
and hold it to that (needs the `test` extra)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytestmark = pytest.mark.runtime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


def run(script: str, cwd: str = EXAMPLES) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, script], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    "script, cwd",
    [
        ("finetune_classifier.py", EXAMPLES),
        ("text_trainer.py", EXAMPLES),
        ("gan_training.py", EXAMPLES),
        ("multilabel_tagger.py", EXAMPLES),
        ("train.py", os.path.join(EXAMPLES, "project")),
    ],
)
def test_silent_examples_run_to_the_end(script, cwd):
    p = run(script, cwd)
    assert p.returncode == 0, p.stderr[-2000:]


@pytest.mark.parametrize(
    "script, message",
    [
        ("manual_sgd.py", "modified by an inplace operation"),
        ("char_lm.py", "Trying to backward through the graph a second time"),
    ],
)
def test_crashing_examples_raise_at_backward(script, message):
    p = run(script)
    assert p.returncode != 0
    assert "RuntimeError" in p.stderr and message in p.stderr and "backward" in p.stderr


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


def test_multilabel_tagger_never_changes_its_parameters():
    """GA202: the step after zero_grad() sees no gradients, so 300 steps leave every weight as built."""
    p = subprocess.run(
        [sys.executable, "-c", PARAMS_UNCHANGED.format(folder=EXAMPLES)], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "True"
