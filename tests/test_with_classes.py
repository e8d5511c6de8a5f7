"""A project's context manager class in a `with` statement: `__enter__` runs when the block is
entered (its result is what `as` binds) and `__exit__` when it ends (grad_mode.with_statement)."""

from __future__ import annotations

from helpers import analyze, found

TRAIN = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Frozen:
    def __init__(self, module):
        self.module = module

    def __enter__(self):
        for p in self.module.parameters():
            p.requires_grad = False
        return self.module

    def __exit__(self, *exc):
        {exit_body}


model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
with Frozen(model) as frozen:
    features = frozen(torch.randn(8, 4))
for x, y in [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
"""


def test_the_exit_of_a_context_manager_class_gives_the_parameters_back():
    restore = "for p in self.module.parameters():\n            p.requires_grad = True"
    assert found(analyze(TRAIN.format(exit_body=restore))) == []


def test_an_exit_that_gives_nothing_back_leaves_them_frozen():
    # the freeze made on entering stays: the optimizer holds only frozen parameters
    assert (12, "GA107") in found(analyze(TRAIN.format(exit_body="return False")))
