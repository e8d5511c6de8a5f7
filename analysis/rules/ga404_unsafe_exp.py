"""GA404 unsafe-exp."""

import ast

from ..model.findings import SAFE, Finding, Fix
from ..model.model import Risk, Span
from .base import NUMERICAL, Example, Rule, RuleContext, RuntimeCheck
from .common import risk_findings


def _fix(ctx: RuleContext, risk: Risk) -> Fix | None:
    """`log(1 + exp(z))` -> `F.softplus(z)`, when the hazard's statement spells it out."""
    if risk.detail != "log(1 + exp(x))":
        return None
    line = ctx.line(risk.span.path, risk.span.line)
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return None
    offset = len(line) - len(line.lstrip())
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "log"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.BinOp)
            and isinstance(node.args[0].op, ast.Add)
        ):
            add = node.args[0]
            one, e = (add.left, add.right) if isinstance(add.left, ast.Constant) else (add.right, add.left)
            if not (
                isinstance(one, ast.Constant)
                and one.value == 1
                and isinstance(e, ast.Call)
                and isinstance(e.func, ast.Attribute)
                and e.func.attr == "exp"
                and len(e.args) == 1
            ):
                continue
            z = ast.get_source_segment(line.strip(), e.args[0])
            span = Span(
                risk.span.path,
                risk.span.line,
                offset + node.col_offset,
                risk.span.line,
                offset + (node.end_col_offset or 0),
            )
            torch_name = ctx.alias(risk.span.path, "torch")
            return Fix("Use softplus", SAFE, (ctx.replace(span, f"{torch_name}.nn.functional.softplus({z})"),))
    return None


def check(ctx: RuleContext) -> list[Finding]:
    return risk_findings(
        ctx,
        RULE,
        lambda r: (
            f"exp of raw activations in {r.detail}: exp overflows to inf once its input passes ~88 "
            f"(float32), and inf/inf or log(inf) make the loss and its gradient NaN; use the stable form "
            f"(softmax, logsumexp, softplus, or subtract the max first)"
        ),
        _fix,
    )


RULE = Rule(
    code="GA404",
    name="unsafe-exp",
    family=NUMERICAL,
    summary="exp of unbounded values in a manual softmax or log(1 + exp(x))",
    what="""
Flags `exp` of raw activations (the output of a linear layer, a product with weights) in a
normalisation written by hand: divided by its own sum (a manual softmax, also when the exp is
first weighted, `cumsum(exp(k) * v) / cumsum(exp(k))`, or multiplied by a reciprocal
`1.0 / (exp(k).sum() + eps)`), inside `log(1 + exp(x))`, or in a log of a sum of exps (a
partition function by hand). `exp` of a value with its maximum subtracted, of a log-probability difference
(a PPO ratio), of a log-variance or a learned log-scale, and `torch.softmax`, `logsumexp` and
`softplus` are not flagged.
""",
    why="""
`exp(89.0)` is `inf` in float32. A manual softmax then computes `inf / inf = NaN`, and
`log(1 + exp(x))` becomes `inf` with a NaN gradient, as soon as one activation grows — which
happens late in training, not in a quick test.
""",
    example="""
w = torch.exp(scores)
w = w / w.sum(dim=1, keepdim=True)
""",
    use_instead="""
w = torch.softmax(scores, dim=1)
""",
    severity="high",
    lookalike=(
        "exp of unbounded activations in a normalisation; exp of log-probability differences or log-variances is valid."
    ),
    runtime=RuntimeCheck.nonfinite("activations large enough that exp overflows"),
    supersedes=("GA402",),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
score, head = nn.Linear(12, 1), nn.Linear(12, 1)
opt = torch.optim.Adam([*score.parameters(), *head.parameters()], lr=1e-3)
sets = torch.randn(8, 5, 12) * 120.0
targets = sets.mean(dim=(1, 2))
for it in range(3):
    s = score(sets).squeeze(-1)
    w = torch.exp(s)  # <- GA404
    w = w / w.sum(dim=1, keepdim=True)
    pooled = (w.unsqueeze(-1) * sets).sum(1)
    loss = nn.functional.mse_loss(head(pooled).squeeze(-1), targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
        ),
        Example(
            """import torch

torch.manual_seed(1)
X = torch.randint(0, 256, (64, 20)).float()
y = torch.where(X[:, 0] > 127, 1.0, -1.0)
w = torch.nn.Parameter(torch.randn(20) * 0.1)
b = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([w, b], lr=1e-4)
for epoch in range(3):
    margin = y * (X @ w + b)
    loss = torch.log(1 + torch.exp(-margin)).mean()  # <- GA404
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch

torch.manual_seed(1)
X = torch.randint(0, 256, (64, 20)).float()
y = torch.where(X[:, 0] > 127, 1.0, -1.0)
w = torch.nn.Parameter(torch.randn(20) * 0.1)
b = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([w, b], lr=1e-4)
for epoch in range(3):
    margin = y * (X @ w + b)
    loss = torch.nn.functional.softplus(-margin).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
score, head, clf = nn.Linear(12, 1), nn.Linear(12, 1), nn.Linear(12, 1)
opt = torch.optim.Adam([*score.parameters(), *head.parameters(), *clf.parameters()], lr=1e-3)
sets = torch.randn(8, 5, 12) * 120.0
targets = sets.mean(dim=(1, 2))
signs = torch.where(sets[:, 0, 0] > 0, 1.0, -1.0)
for it in range(3):
    s = score(sets).squeeze(-1)
    w = torch.exp(s - s.max(dim=1, keepdim=True).values)
    w = w / w.sum(dim=1, keepdim=True)
    pooled = (w.unsqueeze(-1) * sets).sum(1)
    logvar = clf(sets[:, 0] / 120.0).squeeze(-1)
    kl = 0.5 * (torch.exp(logvar) - logvar - 1).mean()
    lse = torch.logsumexp(s, dim=1).mean()
    logistic = F.softplus(-signs * clf(sets[:, 0]).squeeze(-1)).mean()
    loss = 1e-4 * F.mse_loss(head(pooled).squeeze(-1), targets) + 1e-3 * lse + logistic + 1e-3 * kl
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="max subtracted, exp of a log-variance, logsumexp, softplus",
        ),
    ),
)
