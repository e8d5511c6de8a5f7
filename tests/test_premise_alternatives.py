"""A finding whose parameters are held by one of several optimizers that one `step()` call may
step (a receiver the engine joined: `optimizer = enc_opt if ... else head_opt`, GLEM's phases) rests
on a premise the engine cannot show: that the optimizer holding them runs with this backward()."""

from __future__ import annotations

from helpers import analyze

from gradaudit.analysis.model.findings import CONFIRMED, SUSPICIOUS

SOURCE = """\
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

enc = nn.Linear(4, 4)
head = nn.Linear(4, 3)
enc_opt = torch.optim.SGD(enc.parameters(), lr=0.1)
head_opt = torch.optim.SGD(head.parameters(), lr=0.1)
optimizer = {optimizer}
for x, y in [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]:
    with torch.no_grad():
        h = enc(x)
    loss = F.cross_entropy(head(h), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""


def _ga102(optimizer: str):
    r = analyze(SOURCE.format(optimizer=optimizer))
    return [(f.span.line, f.confidence, f.premises) for f in r.findings if f.code == "GA102"]


def test_a_step_of_one_of_two_optimizers():
    [(line, confidence, premises)] = _ga102('enc_opt if sys.argv[1] == "enc" else head_opt')
    assert (line, confidence) == (13, SUSPICIOUS)
    assert any(not p.holds and "one of several optimizers" in p.unseen for p in premises)


def test_a_step_of_the_one_optimizer():
    [(line, confidence, _)] = _ga102("enc_opt")
    assert (line, confidence) == (13, CONFIRMED)
