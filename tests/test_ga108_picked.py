"""GA108 when the optimizer holds only tensors picked one by one (an explainer's masks on a fixed
model, GNNExplainer): the model's parameters left out may be deliberate, so the finding is
suspicious; an optimizer built from one module's parameters that forgets another stays confirmed."""

from __future__ import annotations

from helpers import analyze

from gradaudit.analysis.model.findings import CONFIRMED, SUSPICIOUS

SOURCE = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 3)
head = nn.Linear(3, 2)
mask = nn.Parameter(torch.ones(4))
optimizer = torch.optim.Adam({params}, lr=0.01)
for x in [torch.randn(8, 4)]:
    optimizer.zero_grad()
    loss = head(model(x * torch.sigmoid(mask))).pow(2).mean()
    loss.backward()
    optimizer.step()
"""


def _ga108(params: str):
    return [(f.span.line, f.confidence) for f in analyze(SOURCE.format(params=params)).findings if f.code == "GA108"]


def test_an_optimizer_of_picked_tensors_only():
    assert _ga108("[mask]") == [(7, SUSPICIOUS)]


def test_an_optimizer_of_one_module_that_forgets_another():
    assert _ga108("list(model.parameters()) + [mask]") == [(7, CONFIRMED)]
