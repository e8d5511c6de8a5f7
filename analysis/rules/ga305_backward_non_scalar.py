"""GA305 backward-non-scalar."""

from ..model.findings import UNSAFE, Finding, Fix
from ..model.model import EventKind, Step
from .base import BACKWARD, Example, Rule, RuleContext, RuntimeCheck
from .lifecycle import first_by_span, receiver


def _fix(ctx: RuleContext, step: Step) -> Fix | None:
    call = ctx.text(step.span)
    who = receiver(call, "backward") if call else None
    if who is None:
        return None
    inner = who if who.replace("_", "").replace(".", "").isalnum() else f"({who})"
    return Fix(
        f"Reduce first: `{inner}.mean().backward()`", UNSAFE, (ctx.replace(step.span, f"{inner}.mean().backward()"),)
    )


def check(ctx: RuleContext) -> list[Finding]:
    out = []
    for step in ctx.model.steps:
        if step.kind != EventKind.BACKWARD or step.gradient or not step.nonscalar:
            continue
        msg = (
            f"`{step.loss}` is not a scalar (a per-element or per-sample loss) and backward() gets no `gradient=`: "
            f'torch raises "grad can be implicitly created only for scalar outputs"'
        )
        out.append(RULE.finding(step.span, msg, fix=_fix(ctx, step)))
    return first_by_span(out)


RULE = Rule(
    code="GA305",
    name="backward-non-scalar",
    family=BACKWARD,
    summary="backward() on a non-scalar tensor without gradient=",
    what="""
Flags `backward()` without `gradient=` on a tensor that is certainly not a single element: the
result of a loss with `reduction='none'` that was not reduced since, or an expression whose shape
the code fixes with more than one element. Unknown shapes are not flagged.
""",
    why="""
`backward()` needs a scalar to start from; on a per-sample loss it raises "grad can be implicitly
created only for scalar outputs" at the first batch.
""",
    example="""
criterion = nn.MSELoss(reduction="none")
loss = criterion(model(x), y)
loss.backward()
""",
    use_instead="""
criterion = nn.MSELoss(reduction="none")
loss = criterion(model(x), y)
loss.mean().backward()
""",
    severity="critical",
    lookalike="backward() without `gradient=` on a tensor that is not a scalar.",
    runtime=RuntimeCheck("raises", "the step raises: grad can be implicitly created only for scalar outputs"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.MSELoss(reduction="none")
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
X, Y = torch.randn(16, 4), torch.randn(16, 3)
for epoch in range(2):
    optimizer.zero_grad()
    loss = criterion(model(X), Y)
    loss.backward()  # <- GA305
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.MSELoss(reduction="none")
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
X, Y = torch.randn(16, 4), torch.randn(16, 3)
for epoch in range(2):
    optimizer.zero_grad()
    loss = criterion(model(X), Y)
    loss.mean().backward()
    optimizer.step()
""",
            runtime="error: grad can be implicitly created only for scalar outputs",
        ),
        Example(
            """import torch
import torch.nn as nn


def robust_loss(pred, target, weights):
    return weights * (pred - target).abs().squeeze(-1)


torch.manual_seed(1)
net = nn.Linear(6, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for it in range(2):
    x = torch.randn(10, 6)
    opt.zero_grad()
    loss = robust_loss(net(x), x.sum(1, keepdim=True), torch.rand(10))
    loss.backward()  # <- GA305
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn


def robust_loss(pred, target, weights):
    return weights * (pred - target).abs().squeeze(-1)


torch.manual_seed(1)
net = nn.Linear(6, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for it in range(2):
    x = torch.randn(10, 6)
    opt.zero_grad()
    loss = robust_loss(net(x), x.sum(1, keepdim=True), torch.rand(10))
    loss.mean().backward()
    opt.step()
""",
            runtime="error: grad can be implicitly created only for scalar outputs",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
clf = nn.Sequential(nn.Linear(10, 24), nn.ReLU(), nn.Linear(24, 4))
opt = torch.optim.AdamW(clf.parameters(), lr=2e-3)
class_weight = torch.tensor([1.0, 2.0, 0.5, 1.5])
for it in range(3):
    x, y = torch.randn(20, 10), torch.randint(0, 4, (20,))
    per_sample = F.cross_entropy(clf(x), y, reduction="none")
    loss = (per_sample * class_weight[y]).sum() / class_weight[y].sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="the per-sample loss is reduced before backward()",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(3)
model = nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.Linear(12, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for it in range(3):
    x, y = torch.randn(16, 5), torch.randn(16)
    importance = torch.softmax(torch.randn(16), dim=0)
    per_sample = (model(x).squeeze(1) - y).pow(2)
    optimizer.zero_grad()
    per_sample.backward(gradient=importance)
    optimizer.step()
""",
            runtime="trains",
            note="a non-scalar backward with its gradient=",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(4)
critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
for t in range(3):
    state, ret = torch.randn(4), torch.randn(1)
    loss = (ret - critic(state)) ** 2
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="a single state: the loss has one element",
        ),
    ),
)
