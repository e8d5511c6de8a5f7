"""GA103 python-scalar-in-loss."""

import re

from ..model.findings import UNSAFE, Finding, Fix
from ..model.model import Cut, Step
from ..ops import torch_api as T
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import cut_findings


def _fix(ctx: RuleContext, cut: Cut, step: Step) -> Fix | None:
    text = ctx.text(cut.span)
    receiver = ctx.text(cut.receiver) if cut.receiver is not None else ""
    if cut.detail in (".item()", ".tolist()") and receiver:
        return Fix(f"Keep the tensor: drop `{cut.detail}`", UNSAFE, (ctx.replace(cut.span, receiver),))
    m = re.fullmatch(r"(float|int)\((.*)\)", text, re.S)
    if m and cut.detail.startswith("float"):
        return Fix("Keep the tensor: drop `float(...)`", UNSAFE, (ctx.replace(cut.span, m.group(2)),))
    m = re.fullmatch(r"math\.(\w+)\((.*)\)", text, re.S)
    if m and m.group(1) in T.MATH_TO_TORCH:
        fn = T.MATH_TO_TORCH[m.group(1)]
        torch_name = ctx.alias(cut.span.path, "torch")
        return Fix(f"Use `{torch_name}.{fn}`", UNSAFE, (ctx.replace(cut.span, f"{torch_name}.{fn}({m.group(2)})"),))
    return None


def check(ctx: RuleContext) -> list[Finding]:
    return cut_findings(
        ctx,
        ("scalar",),
        RULE,
        lambda cut, what, step: (
            f"`{ctx.text(cut.span) or cut.detail}` turns a tensor into a Python number that "
            f"then feeds `{step.loss or 'the loss'}`: it carries no gradient to {what}"
        ),
        _fix,
    )


RULE = Rule(
    code="GA103",
    name="python-scalar-in-loss",
    family=GRAPH_BREAK,
    summary="`.item()`, `.tolist()`, `float(t)` or `math.*` on a tensor that feeds the loss",
    what="""
Flags `.item()`, `.tolist()`, `float(t)`, `int(t)` and `math.*(t)` applied to a tensor that
carries gradient from optimized parameters, when the resulting Python value then feeds the
loss or a loss term. `.item()` for logging, after `backward()`, and `.item()` of values without
gradient (a mask count used as a divisor) are not flagged.
""",
    why="""
A Python number is a constant to autograd: the loss still has the right value, but the
parameters behind the converted term get no gradient from it and (if nothing else reaches
them) never train: a learned temperature stays at its initial value, an auxiliary head never
learns.
""",
    example="""
aux = F.smooth_l1_loss(aux_pred, aux_target).item()
loss = ce + 0.3 * aux
""",
    use_instead="""
aux = F.smooth_l1_loss(aux_pred, aux_target)
loss = ce + 0.3 * aux
""",
    severity="high",
    lookalike=(
        "The Python number feeds the loss that backward() runs on: `.item()` for logging or metrics, "
        "after the loss, is the valid use; a mask count used as a constant divisor carries no parameter."
    ),
    runtime=RuntimeCheck(
        "into",
        (
            "`into` fails for the parameters that reach the loss only through the Python number (or the "
            "step raises when nothing else carries gradient)"
        ),
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
cls_head = nn.Linear(16, 3)
aux_head = nn.Linear(16, 1)
params = [*trunk.parameters(), *cls_head.parameters(), *aux_head.parameters()]
optimizer = torch.optim.Adam(params, lr=1e-2)
for _ in range(3):
    x, y = torch.randn(6, 8), torch.randint(0, 3, (6,))
    h = trunk(x)
    ce = F.cross_entropy(cls_head(h), y)
    aux = F.mse_loss(aux_head(h).squeeze(1), x.norm(dim=1)).item()  # <- GA103
    loss = ce + 0.3 * aux
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
cls_head = nn.Linear(16, 3)
aux_head = nn.Linear(16, 1)
params = [*trunk.parameters(), *cls_head.parameters(), *aux_head.parameters()]
optimizer = torch.optim.Adam(params, lr=1e-2)
for _ in range(3):
    x, y = torch.randn(6, 8), torch.randint(0, 3, (6,))
    h = trunk(x)
    ce = F.cross_entropy(cls_head(h), y)
    aux = F.mse_loss(aux_head(h).squeeze(1), x.norm(dim=1))
    loss = ce + 0.3 * aux
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: aux_head",
        ),
        Example(
            """import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)
        self.log_temp = nn.Parameter(torch.tensor(0.3))

    def forward(self, x):
        return self.fc(x) / math.exp(self.log_temp)  # <- GA103


torch.manual_seed(1)
model = Scaled()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = F.cross_entropy(model(torch.randn(5, 6)), torch.randint(0, 4, (5,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)
        self.log_temp = nn.Parameter(torch.tensor(0.3))

    def forward(self, x):
        return self.fc(x) / torch.exp(self.log_temp)


torch.manual_seed(1)
model = Scaled()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = F.cross_entropy(model(torch.randn(5, 6)), torch.randint(0, 4, (5,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: model.log_temp",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
clf = nn.Linear(6, 3)
weigher = nn.Linear(6, 1)
opt = torch.optim.SGD([{"params": clf.parameters()}, {"params": weigher.parameters(), "lr": 0.01}], lr=0.1)
for _ in range(3):
    x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
    w = weigher(x).squeeze(1).softmax(dim=0).tolist()  # <- GA103
    per_sample = F.cross_entropy(clf(x), y, reduction="none")
    loss = sum(l * wi for l, wi in zip(per_sample, w))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="no-update: weigher",
        ),
    ),
    valid=(
        Example(
            """import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
q, k = nn.Linear(8, 4), nn.Linear(8, 4)
opt = torch.optim.Adam([*q.parameters(), *k.parameters()], lr=1e-2)
running = 0.0
for step in range(3):
    x = torch.randn(2, 5, 8)
    scores = q(x) @ k(x).transpose(1, 2) / math.sqrt(4)
    loss = F.mse_loss(scores.softmax(-1), torch.full((2, 5, 5), 0.2))
    opt.zero_grad()
    loss.backward()
    opt.step()
    running += loss.item()
""",
            runtime="trains",
            note="math on constants; .item() for logging after backward",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(4)
model = nn.Linear(5, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(8, 5), torch.randn(8)
    mask = (torch.rand(8) > 0.3).float()
    n = mask.sum().item()
    loss = (((model(x).squeeze(1) - y) ** 2) * mask).sum() / max(n, 1.0)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="`.item()` of a mask count that carries no gradient",
        ),
    ),
)
