"""GA112 nondifferentiable-op-in-loss."""

from ..model.findings import Finding, Fix
from ..model.model import Cut, Step
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import cut_findings


def _fix(ctx: RuleContext, cut: Cut, step: Step) -> Fix | None:
    """No mechanical fix keeps the objective: suggest the surrogate, change nothing (unsafe)."""
    return None


# the detail of the cut torch.autograd.grad makes when it is called without create_graph=True
_GRAD = "torch.autograd.grad"


def _phrase(cut: Cut, what: str, step: Step) -> str:
    op = cut.detail
    if op == _GRAD:
        return (
            f"`{op}` without `create_graph=True` gives gradients that carry no graph: {what} reach "
            f"`{step.loss or 'the loss'}` only through them"
        )
    if cut.kind == "sample":
        return (
            f"`{op}` draws without gradient (torch.distributions samples under no_grad): {what} reach "
            f"`{step.loss or 'the loss'}` only through the draw"
        )
    if cut.kind == "zerograd":
        return (
            f"`{op}` has a zero gradient almost everywhere: backward() runs, but {what} get exactly 0 through "
            f"it, the only way they reach `{step.loss or 'the loss'}`"
        )
    return (
        f"`{op}` gives integers or booleans, which carry no gradient: {what} reach `{step.loss or 'the loss'}` "
        f"only through it"
    )


def check(ctx: RuleContext) -> list[Finding]:
    found = cut_findings(ctx, ("nondiff", "zerograd", "sample"), RULE, _phrase, _fix)
    from ..source.prebuilt import replace

    return [
        replace(
            f,
            message=f.message
            + (
                " (pass `create_graph=True` to `torch.autograd.grad`, as a penalty on gradients needs)"
                if f.message.startswith(f"`{_GRAD}`")
                else " (`rsample()`, the reparameterised draw, where the distribution has one; else weigh "
                "the draws' `log_prob` by the objective, as REINFORCE does)"
                if f.data.get("cut") == "sample"
                else " (a differentiable surrogate: the probabilities instead of the "
                "decision, or a straight-through estimator `x + (q(x) - x).detach()`)"
            ),
        )
        for f in found
    ]


RULE = Rule(
    code="GA112",
    name="nondifferentiable-op-in-loss",
    family=GRAPH_BREAK,
    summary="argmax, comparisons, integer casts or round/sign on the only path to the loss",
    what="""
Flags an op whose result carries no gradient (`argmax`/`argmin`, comparisons, casts to integer or
bool, the indices of `sort`/`topk`/`max(dim)`) or a zero one (`round`, `floor`, `ceil`, `trunc`,
`sign`), or a `torch.distributions` draw with `.sample()` (not `.rsample()`), applied to a tensor
carrying gradient from optimized parameters, when it is the only path from those parameters to the
loss. Metrics and logging, straight-through estimators
(`x + (q(x) - x).detach()`) and indices used to gather from a tensor that keeps its gradient are
not flagged.
""",
    why="""
An integer or boolean result has no `grad_fn`: the loss is cut from the model (and `backward()`
raises if nothing else requires grad). `round`/`sign` keep the graph but their derivative is 0
almost everywhere: `backward()` runs and every parameter upstream gets a zero gradient, so the
encoder of a quantised autoencoder never changes.
""",
    example="""
predicted = logits.argmax(dim=1).float()
loss = F.mse_loss(predicted, stars)
""",
    use_instead="""
expected = (torch.softmax(logits, dim=1) * torch.arange(5.0)).sum(1)
loss = F.mse_loss(expected, stars)
""",
    severity="high",
    lookalike=(
        "The non-differentiable result is the only path from the parameters to the loss; metrics, "
        "straight-through estimators and indices used to gather from a differentiable tensor are valid."
    ),
    runtime=RuntimeCheck(
        "into", "`into` fails: the parameters get no gradient, or only zeros, through the non-differentiable op"
    ),
    supersedes=("GA101",),
    check=check,
    fix_available=False,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class QuantAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 8), nn.Tanh())
        self.decoder = nn.Linear(8, 16)

    def forward(self, x):
        code = self.encoder(x)
        code = torch.round(code * 4) / 4  # <- GA112
        return self.decoder(code)


torch.manual_seed(0)
model = QuantAE()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(32, 16)
    loss = F.mse_loss(model(x), x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: model.encoder",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
net = nn.Sequential(nn.Linear(10, 24), nn.ReLU(), nn.Linear(24, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for epoch in range(3):
    x = torch.randn(64, 10)
    churned = (torch.rand(64, 1) < 0.3).float()
    decision = (torch.sigmoid(net(x)) > 0.5).float()  # <- GA112
    loss = F.binary_cross_entropy(decision, churned)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="error: does not require grad",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
encoder = nn.Sequential(nn.Linear(16, 8), nn.Tanh())
decoder, classifier = nn.Linear(8, 16), nn.Linear(8, 3)
optimizer = torch.optim.Adam([*encoder.parameters(), *decoder.parameters(), *classifier.parameters()], lr=1e-2)
for step in range(3):
    x, y = torch.randn(32, 16), torch.randint(0, 3, (32,))
    code = encoder(x)
    q = code + (torch.round(code * 4) / 4 - code).detach()
    logits = classifier(q)
    loss = F.mse_loss(decoder(q), x) + F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    acc = (logits.argmax(dim=1) == y).float().mean().item()
""",
            runtime="trains",
            note="a straight-through estimator; argmax for a metric",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
embed = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 8))
optimizer = torch.optim.SGD(embed.parameters(), lr=0.05)
for step in range(3):
    x, labels = torch.randn(24, 20), torch.arange(24) % 4
    z = F.normalize(embed(x), dim=1)
    dist = torch.cdist(z, z) + 1e-6
    same = labels[:, None] == labels[None, :]
    hardest_pos = dist.gather(1, (dist * same).argmax(dim=1, keepdim=True))
    hardest_neg = dist.gather(1, (dist + same * 1e3).argmin(dim=1, keepdim=True))
    loss = F.relu(hardest_pos - hardest_neg + 0.2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="argmax indices gather from a tensor that keeps its gradient",
        ),
    ),
)
