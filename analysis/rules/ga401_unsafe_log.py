"""GA401 unsafe-log."""

import ast

from ..model.findings import SAFE, UNSAFE, Finding, Fix
from ..model.model import Risk
from .base import NUMERICAL, Example, Rule, RuleContext, RuntimeCheck
from .common import risk_findings, segment


def _fix(ctx: RuleContext, risk: Risk) -> Fix | None:
    """`torch.log(torch.softmax(x, dim))` -> `torch.log_softmax(x, dim)`; `log(sigmoid(x))` ->
    `F.logsigmoid(x)` (same values, computed stably); else clamp the argument (unsafe)."""
    text = ctx.text(risk.span)
    try:
        call = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or len(call.args) != 1 or call.keywords:
        return None
    inner = call.args[0]
    torch_name = ctx.alias(risk.span.path, "torch")
    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
        fname = inner.func.attr
        args = ", ".join(segment(text, a) for a in inner.args)
        kws = ", ".join(f"{k.arg}={ast.get_source_segment(text, k.value)}" for k in inner.keywords)
        params = ", ".join(p for p in (args, kws) if p)
        if fname == "softmax" and inner.args:
            return Fix(
                f"Use `{torch_name}.log_softmax`",
                SAFE,
                (ctx.replace(risk.span, f"{torch_name}.log_softmax({params})"),),
            )
        if fname == "sigmoid" and len(inner.args) == 1 and not inner.keywords:
            return Fix(
                "Use `logsigmoid`", SAFE, (ctx.replace(risk.span, f"{torch_name}.nn.functional.logsigmoid({args})"),)
            )
    arg = ast.get_source_segment(text, inner)
    head = text[: text.index("(")]
    return Fix("Clamp the argument away from 0", UNSAFE, (ctx.replace(risk.span, f"{head}(({arg}).clamp_min(1e-12))"),))


def check(ctx: RuleContext) -> list[Finding]:
    return risk_findings(
        ctx,
        RULE,
        lambda r: (
            f"log of {r.detail} with no sigmoid, softplus or clamp: it is NaN wherever that output is "
            f"negative and -inf where it is 0, and so is the gradient there"
            if r.detail.startswith("raw activations")
            else f"log of {r.detail} with no eps or clamp: it is -inf wherever that value is exactly 0 (a "
            f"probability underflows to 0 in float32), and the gradient there is inf or NaN"
        ),
        _fix,
    )


RULE = Rule(
    code="GA401",
    name="unsafe-log",
    family=NUMERICAL,
    summary="log of a value that can be exactly 0",
    what="""
Flags `log`/`log2`/`log10` of a value that can be exactly zero — a softmax or sigmoid output, a
ReLU output, a mask, a count, a norm, a sum of squares per row written by hand (a signal's energy
`(s ** 2).sum(1)` in a signal-to-noise loss, 0 for a silent reference; not of a layer's output
that adds a bias) — with no eps and no clamp on the way, when the result
reaches a loss given to `backward()`; and (suspicious) of a layer's raw output, which is negative
for some inputs (`-torch.log(critic(x))` of a WGAN critic that has no sigmoid, also shifted or
scaled by a number; not a value the code derived from it and other tensors, such as a ratio of two
eps-shifted similarities or a contraction of non-negative weights and densities). `log_softmax`,
`logsigmoid`, `log(x + eps)`, `log(x.clamp_min(eps))` and logs of values made positive
(`softplus(x) + eps`, `exp`) are not flagged; a guard written in a helper or as a named constant
counts.
""",
    why="""
In float32 a softmax probability underflows to exactly 0 once its logit is ~104 below the
largest, a sigmoid once the logit is below ~-104, and a ReLU output is 0 for every negative input.
`log(0)` is `-inf`, its gradient `inf`, and one such element makes the loss and every gradient NaN.
""",
    example="""
log_p = torch.log(torch.softmax(logits, dim=1))
""",
    use_instead="""
log_p = torch.log_softmax(logits, dim=1)
""",
    severity="high",
    lookalike="The log's argument can be exactly 0 and no eps or clamp guards it.",
    runtime=RuntimeCheck.nonfinite("a log argument of exactly 0"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
student = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
opt = torch.optim.Adam(student.parameters(), lr=1e-3)
readings = torch.rand(64, 16) * 255.0
soft_targets = torch.softmax(torch.randn(64, 10), dim=1)
for it in range(3):
    log_p = torch.log(torch.softmax(student(readings), dim=1))  # <- GA401
    loss = -(soft_targets * log_p).sum(dim=1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
student = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
opt = torch.optim.Adam(student.parameters(), lr=1e-3)
readings = torch.rand(64, 16) * 255.0
soft_targets = torch.softmax(torch.randn(64, 10), dim=1)
for it in range(3):
    log_p = torch.log_softmax(student(readings), dim=1)
    loss = -(soft_targets * log_p).sum(dim=1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
body = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(body.parameters(), lr=1e-3)
X = torch.randn(40, 5)
counts = torch.poisson(torch.exp(X[:, 0].clamp(max=2.0)))
for epoch in range(3):
    rate = F.relu(body(X)).squeeze(-1)
    nll = (rate - counts * torch.log(rate)).mean()  # <- GA401
    optimizer.zero_grad()
    nll.backward()
    optimizer.step()
""",
            runtime="nonfinite",
            note="a ReLU output is exactly 0 for negative inputs",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(8, 8)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, refs = torch.randn(4, 8), torch.randn(4, 8)
refs[0] = 0.0
for it in range(2):
    est = model(x)
    signal = (refs**2).sum(dim=1)
    noise = ((est - refs) ** 2).sum(dim=1)
    sdr = 10 * torch.log10(signal / noise)  # <- GA401
    loss = -sdr.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
            note="a signal-to-noise loss: a silent reference has an energy of exactly 0",
        ),
    ),
    valid=(
        Example(
            """import math

import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-8
torch.manual_seed(2)
trunk = nn.Sequential(nn.Linear(3, 16), nn.ReLU())
mu, raw_std, gate = nn.Linear(16, 1), nn.Linear(16, 1), nn.Linear(16, 2)
opt = torch.optim.Adam([*trunk.parameters(), *mu.parameters(), *raw_std.parameters(), *gate.parameters()],
                       lr=2e-3)
X = torch.randn(48, 3) * 5
y = X[:, :1] ** 2 + torch.randn(48, 1)
present = (X[:, 1:2] > 0).float()


def safe_log(x):
    return torch.log(x + EPS)


for epoch in range(3):
    h = trunk(X)
    std = F.softplus(raw_std(h)) + 1e-3
    p = torch.softmax(gate(h), dim=1)
    gauss = (torch.log(std) + 0.5 * ((y - mu(h)) / std) ** 2 + 0.5 * math.log(2 * math.pi)).mean()
    presence = -(present * safe_log(p[:, 1:]) + (1 - present) * torch.log(p[:, :1].clamp_min(1e-8))).mean()
    loss = gauss + presence + F.log_softmax(gate(h), dim=1).mean().neg()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="an eps in a helper, a clamp, a positive std, log_softmax",
        ),
    ),
)
