"""GA106 requires-grad-misuse."""

from ..model.findings import UNSAFE, Finding, Fix, Related
from ..model.model import Span
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import describe, names, optimizer_of, stand_in_leaves, step_related


def _fix(ctx: RuleContext, span: Span) -> Fix | None:
    text = ctx.text(span)
    lines = ctx.statement_lines(span)
    if text.rstrip().endswith("= True") and ".requires_grad" in text and lines is not None:
        return Fix(
            "Remove the `requires_grad` assignment (then repair the break upstream)",
            UNSAFE,
            (ctx.delete_lines(span.path, *lines),),
        )
    for suffix in (".requires_grad_()", ".requires_grad_(True)"):
        if text.endswith(suffix):
            return Fix(
                f"Drop `{suffix}` (then repair the break upstream)", UNSAFE, (ctx.replace(span, text[: -len(suffix)]),)
            )
    return None


def check(ctx: RuleContext) -> list[Finding]:
    found: dict[Span, Finding] = {}
    for step in ctx.model.steps:
        for leaf, cuts, shown in stand_in_leaves(ctx, step):
            o = optimizer_of(step)
            msg = (
                f"`requires_grad` set on a fresh tensor with no history from the parameters: `{step.loss}` "
                f"backpropagates into this new leaf only, not into {describe(shown)} behind it"
            )
            if o is not None:
                msg += f"; `{o.name}` never changes them"
            breaks = sorted({c.span for c in cuts if c.span is not None}, key=lambda s: (s.path, s.line, s.col))
            if breaks and all(c.kind == "sample" for c in cuts):
                # a draw has no gradient to restore: the policy gradient is the way through it
                msg += (
                    f". The gradient stopped at the draw `{ctx.text(breaks[0])}` (line {breaks[0].line}), which has "
                    f"none: weigh the draws' `log_prob` by the reward instead (REINFORCE), or use `rsample()` "
                    f"where the distribution has one"
                )
            elif breaks:
                msg += (
                    f". The gradient stopped earlier, at `{ctx.text(breaks[0])}` (line {breaks[0].line}): fix it there"
                )
            related = tuple(Related(b, f"the break upstream: `{ctx.text(b)}` carries no gradient") for b in breaks[:2])
            key = leaf.span
            if key is not None and key not in found:  # (stand_in_leaves gives leaves with a span)
                found[key] = RULE.finding(
                    key,
                    msg,
                    params=names(shown),
                    related=related + step_related(step, ctx),
                    fix=_fix(ctx, key),
                )
    return list(found.values())


RULE = Rule(
    code="GA106",
    name="requires-grad-misuse",
    family=GRAPH_BREAK,
    summary="`requires_grad=True` set on a disconnected tensor to make backward() run",
    what="""
Flags `t.requires_grad = True`, `t.requires_grad_()` or `requires_grad=True` on a tensor in the
loss path that has no history from the parameters (it was computed through `argmax`, a
threshold, `.detach()`...), which makes the loss a fresh leaf. Leaves meant to be trained
(hand-made weights given to an optimizer) and inputs whose gradient is asked for
(adversarial examples, saliency) are not flagged.
""",
    why="""
`backward()` stops complaining ("element 0 of tensors does not require grad"), but the
gradient stops at the new leaf: the model behind it gets none and never trains. The real bug
is the non-differentiable step upstream.
""",
    example="""
pred = logits.argmax(dim=1).float()
loss = F.mse_loss(pred, rating)
loss.requires_grad = True
loss.backward()
""",
    use_instead="""
loss = F.cross_entropy(logits, rating.long())
loss.backward()
""",
    severity="high",
    premises=("step",),
    lookalike=(
        "`requires_grad` is set on a fresh tensor with no history from parameters that stands in for the "
        "loss; hand-made weights given to an optimizer are the valid use."
    ),
    runtime=RuntimeCheck("into", "`into` fails: the fresh leaf stands in for the loss, the parameters get no gradient"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    x, rating = torch.randn(8, 10), torch.randint(0, 5, (8,)).float()
    pred = model(x).argmax(dim=1).float()
    loss = F.mse_loss(pred, rating)
    loss.requires_grad = True  # <- GA106
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    x, rating = torch.randn(8, 10), torch.randint(0, 5, (8,)).float()
    pred = model(x).argmax(dim=1).float()
    loss = F.mse_loss(pred, rating)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: model",
            fixed_runtime="error: does not require grad",
        ),
        Example(
            """import torch
import torch.nn as nn


def dice_loss(logits, mask, smooth=1.0):
    pred = (torch.sigmoid(logits) > 0.5).float()
    inter = (pred * mask).sum()
    dice = (2 * inter + smooth) / (pred.sum() + mask.sum() + smooth)
    return (1 - dice).requires_grad_()  # <- GA106


torch.manual_seed(1)
net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for _ in range(3):
    img = torch.randn(2, 1, 8, 8)
    loss = dice_loss(net(img), (img > 0.3).float())
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn


def dice_loss(logits, mask, smooth=1.0):
    pred = (torch.sigmoid(logits) > 0.5).float()
    inter = (pred * mask).sum()
    dice = (2 * inter + smooth) / (pred.sum() + mask.sum() + smooth)
    return (1 - dice)


torch.manual_seed(1)
net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for _ in range(3):
    img = torch.randn(2, 1, 8, 8)
    loss = dice_loss(net(img), (img > 0.3).float())
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="no-update: net",
            fixed_runtime="error: does not require grad",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


def fgsm(model, x, y, eps=0.1):
    x_adv = x.clone().requires_grad_(True)
    loss = F.cross_entropy(model(x_adv), y)
    (grad,) = torch.autograd.grad(loss, x_adv)
    return (x_adv + eps * grad.sign()).detach()


torch.manual_seed(2)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(3):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x), y) + F.cross_entropy(model(fgsm(model, x, y)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="an input whose gradient is asked for",
        ),
        Example(
            """import torch

torch.manual_seed(3)
X = torch.randn(50, 3)
y = (X @ torch.tensor([1.5, -2.0, 0.7]) > 0).float()
w = torch.randn(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.5)
for _ in range(4):
    loss = torch.nn.functional.binary_cross_entropy_with_logits(X @ w + b, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="hand-made weights given to an optimizer",
        ),
    ),
)
