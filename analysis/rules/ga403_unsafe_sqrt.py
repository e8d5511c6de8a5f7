"""GA403 unsafe-sqrt."""

import ast

from ..model.findings import UNSAFE, Finding, Fix
from ..model.model import Risk
from .base import NUMERICAL, Example, Rule, RuleContext, RuntimeCheck
from .common import risk_findings


def _fix(ctx: RuleContext, risk: Risk) -> Fix | None:
    """`torch.sqrt(x)` -> `torch.sqrt(x + 1e-12)`; `x ** 0.5` -> `(x + 1e-12) ** 0.5`."""
    text = ctx.text(risk.span)
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        arg = ast.get_source_segment(text, node.args[0])
        head = text[: text.index("(")]
        return Fix("Add an eps inside the sqrt", UNSAFE, (ctx.replace(risk.span, f"{head}({arg} + 1e-12)"),))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, exp = ast.get_source_segment(text, node.left), ast.get_source_segment(text, node.right)
        return Fix("Add an eps inside the root", UNSAFE, (ctx.replace(risk.span, f"({base} + 1e-12) ** {exp}"),))
    return None


def check(ctx: RuleContext) -> list[Finding]:
    return risk_findings(
        ctx,
        RULE,
        lambda r: (
            f"{r.detail} of a value that can be exactly 0 (a squared distance, a norm): the value is "
            f"fine but its gradient at 0 is infinite, so backward() gives NaN there"
        ),
        _fix,
    )


RULE = Rule(
    code="GA403",
    name="unsafe-sqrt",
    family=NUMERICAL,
    summary="sqrt of a value that can be 0 (infinite gradient)",
    what="""
Flags `sqrt`, `rsqrt`, `** 0.5` and `.pow(0.5)` (fractional powers below 1) of a value that can
be exactly zero — a sum of squared differences of a tensor with itself (pairwise distances include
each point with itself), a ReLU output, a norm, a sum of squares over a dimension (a norm written by
hand, `sqrt((x * x).sum(-1))`: 0 for a zero vector), one minus a squared cosine similarity or
tanh (`sqrt(1 - cos ** 2)`, an ArcFace margin's sine: 0 where a feature lines up with its class
weight, and a clamp to `[0, 1]` keeps the 0) — with no eps, when it reaches `backward()`. The
distance between two outputs of one network (siamese branches `net(x1) - net(x2)`) is zero when
the two inputs coincide: suspicious, since the data decides, as for a norm written by hand. A
root of a mean over every element (an RMSE, 0 only at a perfect fit of the whole batch), `sqrt(x
+ eps)` and `torch.linalg.vector_norm`, whose gradient at 0 is defined, are not flagged (a root of
a partial mean is: a per-sample or per-source RMSE, also of `mse_loss(..., reduction="none")`, is 0
where one sample is fitted exactly, a silent or zero-padded one), nor is
the hand-written norm of a layer's output that adds a bias (the zero vector only on a null set),
nor of a gradient taken with `torch.autograd.grad(..., create_graph=True)` (a gradient penalty, a
path-length regularizer: the zero vector only where the network is flat in what it is taken
against). A clamp after the root does not help: the root's infinite gradient times the clamp's
zero is NaN.
""",
    why="""
The derivative of `sqrt(x)` is `1 / (2 sqrt(x))`: infinite at 0. The forward value is finite, so
the loss prints normally while the gradient is NaN and the first step destroys the weights.
""",
    example="""
d = (z.unsqueeze(1) - z.unsqueeze(0)).pow(2).sum(-1) ** 0.5
""",
    use_instead="""
d = torch.linalg.vector_norm(z.unsqueeze(1) - z.unsqueeze(0), dim=-1)
""",
    severity="high",
    lookalike="The square root's argument can be 0, where its gradient is infinite.",
    runtime=RuntimeCheck.nonfinite("a square root at exactly 0"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn


def pairwise_distances(z):
    diff = z.unsqueeze(1) - z.unsqueeze(0)
    return diff.pow(2).sum(-1) ** 0.5  # <- GA403


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    d = pairwise_distances(model(x))
    same = (y[:, None] == y[None, :]).float()
    loss = (same * d.pow(2) + (1 - same) * torch.relu(1.0 - d).pow(2)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn


def pairwise_distances(z):
    diff = z.unsqueeze(1) - z.unsqueeze(0)
    return (diff.pow(2).sum(-1) + 1e-12) ** 0.5


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    d = pairwise_distances(model(x))
    same = (y[:, None] == y[None, :]).float()
    loss = (same * d.pow(2) + (1 - same) * torch.relu(1.0 - d).pow(2)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
            note="each point's distance to itself is exactly 0",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
points = torch.randn(8, 16, 3)
points[0, 0] = 0.0  # a point at the origin
encoder = nn.Linear(3, 3, bias=False)
head = nn.Linear(3, 4)
opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-3)
for step in range(3):
    x = encoder(points)
    norm = torch.sqrt((x * x).sum(-1, keepdim=True))  # <- GA403
    direction = x / norm.clamp(min=1e-6)
    loss = head(direction.mean(1)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
points = torch.randn(8, 16, 3)
points[0, 0] = 0.0  # a point at the origin
encoder = nn.Linear(3, 3, bias=False)
head = nn.Linear(3, 4)
opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-3)
for step in range(3):
    x = encoder(points)
    norm = torch.sqrt((x * x).sum(-1, keepdim=True) + 1e-12)
    direction = x / norm.clamp(min=1e-6)
    loss = head(direction.mean(1)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
            note="a norm written by hand is 0 for a zero vector; clamping it afterwards leaves 0 * inf",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
weight = nn.Parameter(torch.eye(4, 8))
backbone = nn.Linear(8, 8)
with torch.no_grad():
    backbone.weight.copy_(torch.eye(8))
    backbone.bias.zero_()
opt = torch.optim.SGD([weight, *backbone.parameters()], lr=0.1)
x, y = torch.eye(8)[:4], torch.arange(4)
for it in range(2):
    cosine = F.linear(F.normalize(backbone(x)), F.normalize(weight))
    sine = torch.sqrt(1.0 - torch.pow(cosine, 2))  # <- GA403
    phi = cosine * 0.8776 - sine * 0.4794
    one_hot = F.one_hot(y, 4).float()
    loss = F.cross_entropy(30.0 * (one_hot * phi + (1.0 - one_hot) * cosine), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
            note="an ArcFace margin: the sine of a cosine that is exactly 1 where a feature lines up with its class",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
weight = nn.Parameter(torch.randn(4, 8))
backbone = nn.Linear(8, 8)
opt = torch.optim.SGD([weight, *backbone.parameters()], lr=0.1)
x, y = torch.randn(4, 8), torch.arange(4)
for it in range(2):
    cosine = F.linear(F.normalize(backbone(x)), F.normalize(weight))
    sine = torch.sqrt((1.0 - torch.pow(cosine, 2)).clamp(1e-6, 1))
    phi = cosine * 0.8776 - sine * 0.4794
    one_hot = F.one_hot(y, 4).float()
    loss = F.cross_entropy(30.0 * (one_hot * phi + (1.0 - one_hot) * cosine), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="the ArcFace sine with 1 - cos ** 2 clamped away from 0",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(1)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    z = model(x)
    diff = z.unsqueeze(1) - z.unsqueeze(0)
    d = torch.sqrt(diff.pow(2).sum(-1) + 1e-12)
    d_alt = torch.linalg.vector_norm(diff, dim=-1)
    same = (y[:, None] == y[None, :]).float()
    loss = (same * d.pow(2) + (1 - same) * torch.relu(1.0 - d_alt).pow(2)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="an eps inside the sqrt; vector_norm",
        ),
    ),
)
