"""GA408 bce-on-sigmoid."""

import ast

from ..model.findings import UNSAFE, Finding, Fix
from ..model.model import Risk
from .base import NUMERICAL, Example, Rule, RuleContext, RuntimeCheck
from .common import risk_findings, segment


def _fix(ctx: RuleContext, risk: Risk) -> Fix | None:
    """`F.binary_cross_entropy(torch.sigmoid(z), y)` -> `F.binary_cross_entropy_with_logits(z, y)`."""
    text = ctx.text(risk.span)
    try:
        call = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "binary_cross_entropy"
        and call.args
    ):
        return None
    arg = call.args[0]
    if not (
        isinstance(arg, ast.Call)
        and isinstance(arg.func, ast.Attribute)
        and arg.func.attr == "sigmoid"
        and len(arg.args) == 1
    ):
        return None
    new = segment(text, call.func) + "_with_logits(" + segment(text, arg.args[0]) + text[arg.end_col_offset :]
    return Fix("Use binary_cross_entropy_with_logits on the logits", UNSAFE, (ctx.replace(risk.span, new),))


def check(ctx: RuleContext) -> list[Finding]:
    return risk_findings(
        ctx,
        RULE,
        lambda r: (
            "binary cross-entropy on sigmoid outputs: saturated, confidently wrong samples (a sigmoid at "
            "exactly 0 or 1, logits beyond ~17 in float32) get exactly zero gradient, as BCELoss clamps its "
            "log at -100, so they stop teaching the model; training often still works; BCEWithLogitsLoss on "
            "the logits is exact"
        ),
        _fix,
    )


RULE = Rule(
    code="GA408",
    name="bce-on-sigmoid",
    family=NUMERICAL,
    summary="BCELoss / binary_cross_entropy on sigmoid(logits)",
    what="""
Flags `BCELoss`/`binary_cross_entropy` given a sigmoid output — directly, through a variable, or
from an `nn.Sequential` ending in `nn.Sigmoid` — when it reaches `backward()`.
`BCEWithLogitsLoss` on the logits, and a sigmoid used for predictions, are not flagged.
""",
    why="""
In float32 `sigmoid(x)` is exactly 1.0 for x > ~17. BCELoss then takes `log(1 - 1.0)`, clamped
to -100: the loss is finite but its gradient with respect to the logit is exactly zero, so the
most wrong samples stop teaching the model. BCEWithLogitsLoss computes the same loss with the
log-sum-exp trick and keeps the gradient.
""",
    example="""
loss = nn.BCELoss()(torch.sigmoid(logits), labels)
""",
    use_instead="""
loss = nn.BCEWithLogitsLoss()(logits, labels)
""",
    severity="medium",
    lookalike="`BCELoss` on `sigmoid(logits)` saturates; `BCEWithLogitsLoss` does not.",
    runtime=RuntimeCheck(
        None,
        "no runtime check: BCE clamps its log, so saturated sigmoids give vanishing gradients, not non-finite ones",
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
detector = nn.Linear(25, 1)
optimizer = torch.optim.SGD(detector.parameters(), lr=1e-5)
pixels = torch.randint(0, 256, (64, 25)).float()
labels = (pixels[:, 12] > 128).float()
for epoch in range(3):
    logits = detector(pixels).squeeze(1)
    loss = F.binary_cross_entropy(torch.sigmoid(logits), labels)  # <- GA408
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
detector = nn.Linear(25, 1)
optimizer = torch.optim.SGD(detector.parameters(), lr=1e-5)
pixels = torch.randint(0, 256, (64, 25)).float()
labels = (pixels[:, 12] > 128).float()
for epoch in range(3):
    logits = detector(pixels).squeeze(1)
    loss = F.binary_cross_entropy_with_logits(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="it trains, with saturated samples contributing no gradient",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
detector = nn.Linear(25, 1)
optimizer = torch.optim.SGD(detector.parameters(), lr=1e-5)
criterion = nn.BCEWithLogitsLoss()
pixels = torch.randint(0, 256, (64, 25)).float()
labels = (pixels[:, 12] > 128).float()
for epoch in range(3):
    logits = detector(pixels).squeeze(1)
    loss = criterion(logits, labels) + 0.1 * F.binary_cross_entropy_with_logits(logits, labels)
    predicted = torch.sigmoid(logits) > 0.5
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="the with-logits losses; a sigmoid for predictions",
        ),
    ),
)
