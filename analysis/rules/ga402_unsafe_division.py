"""GA402 unsafe-division."""

import ast

from ..model.findings import UNSAFE, Finding, Fix
from ..model.model import Risk
from .base import NUMERICAL, Example, Rule, RuleContext, RuntimeCheck
from .common import risk_findings


def _fix(ctx: RuleContext, risk: Risk) -> Fix | None:
    """`a / b` -> `a / b.clamp_min(1e-8)` (changes only the elements that were 0)."""
    text = ctx.text(risk.span)
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Div):
        return None
    left, right = ast.get_source_segment(text, node.left), ast.get_source_segment(text, node.right)
    simple = isinstance(node.right, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    den = f"{right}.clamp_min(1e-8)" if simple else f"({right}).clamp_min(1e-8)"
    return Fix("Clamp the denominator away from 0", UNSAFE, (ctx.replace(risk.span, f"{left} / {den}"),))


def check(ctx: RuleContext) -> list[Finding]:
    return risk_findings(
        ctx,
        RULE,
        lambda r: (
            f"{r.detail} can be exactly 0 (a ReLU output, a standard deviation, a count) with no eps or "
            "clamp: the distribution's argument check raises a ValueError there, and without it log_prob "
            "divides by it and takes its log: inf or NaN, and so is the gradient"
            if r.detail.startswith("the scale of ")
            else "division by a value that can be exactly 0 (a norm, a sum of a mask or of non-negative "
            "values, a standard deviation, a count) with no eps or clamp: the result is inf or NaN "
            "where it is 0, and so is the gradient"
        ),
        _fix,
    )


RULE = Rule(
    code="GA402",
    name="unsafe-division",
    family=NUMERICAL,
    summary="division by a value that can be 0",
    what="""
Flags a division whose denominator can be exactly zero — `.norm()`, `.std()`, the sum of a mask
or of non-negative values (`mask.sum(1)`, counts), a ReLU output, the number of rows a
data-dependent selection picked (`len(torch.nonzero(x))`, `x.nonzero().size(0)`) — with no eps or
clamp, when the
result reaches a loss given to `backward()`. Divisions by Python numbers, by constants, by
`x.clamp_min(eps)` or `(x + eps)`, and arithmetic for logging are not flagged; `F.normalize` is
the safe form of a norm division. A mask joined along a dim other than 0 with a part that is
positive (`torch.cat([ones(n, 1), mask[:, :-1]], 1)`, the first word always counted) keeps an
element in every row: its sums are at least 1. Nor are the norm or std of a layer's output that adds a bias
(`nn.Linear`, a convolution, a norm layer's affine): it is the zero vector only on a set of
measure zero (a ReLU after it brings the zeros back), and a division on the arm of `if n == 0:
... else: x / n` (or under `if n > 0:`), where the count is not 0. Nor are divisions whose inf
or NaN provably goes nowhere: a nonzero number over a value that carries no gradient, clamped on
the side its inf lies
(`(1 - c / rho).clamp(min=0)`); a masked mean over `torch.where(mask, x, 0)`; per-group means
scattered by `arange(g).repeat_interleave(counts)` and broadcast back with
`repeat_interleave(counts)`, which drops an empty group's row. The scale of a
`torch.distributions` family (`Normal(loc, scale)`, `Laplace`, `StudentT`...) that can be 0 is
flagged at the distribution: its `log_prob` divides by the scale and takes its log (torch's
argument check raises a ValueError there first).
""",
    why="""
A padded sequence with no tokens has `mask.sum() == 0`, a constant batch has `std() == 0`, a zero
embedding has norm 0: the division gives inf or NaN (0/0), and one NaN element poisons the loss
and every gradient, so training silently diverges at the first such batch.
""",
    example="""
pooled = (h * mask).sum(1) / mask.sum(1)
""",
    use_instead="""
pooled = (h * mask).sum(1) / mask.sum(1).clamp_min(1.0)
""",
    severity="high",
    lookalike="The divisor can be 0 and no eps or clamp guards it.",
    runtime=RuntimeCheck.nonfinite("a divisor of exactly 0"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
emb = nn.Embedding(60, 16, padding_idx=0)
out = nn.Linear(16, 2)
opt = torch.optim.Adam([*emb.parameters(), *out.parameters()], lr=1e-3)
lengths = torch.tensor([7, 3, 0, 5])
tokens = torch.randint(1, 60, (4, 8))
tokens[torch.arange(8)[None, :] >= lengths[:, None]] = 0
labels = torch.tensor([0, 1, 1, 0])
for epoch in range(3):
    mask = (tokens != 0).float().unsqueeze(-1)
    pooled = (emb(tokens) * mask).sum(1) / mask.sum(1)  # <- GA402
    loss = F.cross_entropy(out(pooled), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
emb = nn.Embedding(60, 16, padding_idx=0)
out = nn.Linear(16, 2)
opt = torch.optim.Adam([*emb.parameters(), *out.parameters()], lr=1e-3)
lengths = torch.tensor([7, 3, 0, 5])
tokens = torch.randint(1, 60, (4, 8))
tokens[torch.arange(8)[None, :] >= lengths[:, None]] = 0
labels = torch.tensor([0, 1, 1, 0])
for epoch in range(3):
    mask = (tokens != 0).float().unsqueeze(-1)
    pooled = (emb(tokens) * mask).sum(1) / mask.sum(1).clamp_min(1e-8)
    loss = F.cross_entropy(out(pooled), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
            note="an empty sequence has no unmasked token",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)
body = nn.Linear(3, 8)
mean_head, scale_head = nn.Linear(8, 2), nn.Linear(8, 2)
with torch.no_grad():
    scale_head.bias.fill_(-1.0)
opt = torch.optim.Adam([*body.parameters(), *mean_head.parameters(), *scale_head.parameters()], lr=1e-3)
x = torch.randn(16, 3)
x[0] = 0.0
y = torch.randn(16, 2)
for it in range(3):
    h = F.relu(body(x))
    dist = Normal(mean_head(h), F.relu(scale_head(h)))  # <- GA402
    loss = -dist.log_prob(y).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="error: Expected parameter scale",
            note="a Gaussian head whose scale is a ReLU output: 0 for some rows (torch's argument check raises)",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(9)
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
lengths = torch.tensor([[0, 0, 0], [0, 0, 0]])
for it in range(3):
    micro_batches = [{"x": torch.randn(3, 8), "mask": n > 0} for n in lengths]
    n_tokens = torch.tensor(sum(mb["mask"].sum().item() for mb in micro_batches))
    for mb in micro_batches:
        per_token = model(mb["x"]).squeeze(-1).pow(2)
        loss = (per_token * mb["mask"]).sum() / n_tokens  # <- GA402
        loss.backward()
    opt.step()
    opt.zero_grad()
""",
            runtime="nonfinite",
            note="a rank given only padding: the token count, gathered through .item(), sum() and torch.tensor(), is 0",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(1)
emb = nn.Embedding(30, 12, padding_idx=0)
proj = nn.Linear(12, 6, bias=False)
policy = nn.Linear(6, 3)
opt = torch.optim.Adam([*emb.parameters(), *proj.parameters(), *policy.parameters()], lr=1e-2)
tokens = torch.randint(1, 30, (5, 7))
tokens[1] = 0
for it in range(3):
    mask = (tokens != 0).float().unsqueeze(-1)
    pooled = (emb(tokens) * mask).sum(1) / mask.sum(1).clamp_min(1.0)
    z = proj(pooled)
    z_unit = z / z.norm(dim=1, keepdim=True).clamp_min(1e-6)
    z_norm = F.normalize(z, dim=1, eps=1e-6)
    dist = Categorical(logits=policy(z))
    returns = torch.zeros(5)
    adv = (returns - returns.mean()) / (returns.std() + 1e-8)
    loss = -(dist.log_prob(dist.sample()) * (adv + 1.0)).mean() - 0.1 * (z_unit * z_norm).sum(1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="clamped denominators, F.normalize, an eps on the std",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)
body = nn.Linear(3, 8)
mean_head, scale_head = nn.Linear(8, 2), nn.Linear(8, 2)
with torch.no_grad():
    scale_head.bias.fill_(-1.0)
opt = torch.optim.Adam([*body.parameters(), *mean_head.parameters(), *scale_head.parameters()], lr=1e-3)
x = torch.randn(16, 3)
x[0] = 0.0
y = torch.randn(16, 2)
for it in range(3):
    h = F.relu(body(x))
    dist = Normal(mean_head(h), F.softplus(scale_head(h)) + 1e-4)
    loss = -dist.log_prob(y).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="the scale kept positive: softplus plus an eps",
        ),
        Example(
            """import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)
actor = nn.Linear(3, 2)
log_std = nn.Parameter(torch.zeros(2))
opt = torch.optim.Adam([*actor.parameters(), log_std], lr=1e-3)
obs, actions, adv = torch.randn(16, 3), torch.randn(16, 2), torch.randn(16)
for it in range(3):
    dist = Normal(actor(obs), torch.sigmoid(log_std) * 0.5)
    loss = -(dist.log_prob(actions).sum(-1) * adv).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="a state-independent std through a sigmoid: exactly 0 only for a log-std near -100",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(10)
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
lengths = torch.tensor([[0, 0, 0], [2, 3, 1]])
for it in range(3):
    micro_batches = [{"x": torch.randn(3, 8), "mask": n > 0} for n in lengths]
    n_tokens = torch.tensor(sum(mb["mask"].sum().item() for mb in micro_batches))
    for mb in micro_batches:
        per_token = model(mb["x"]).squeeze(-1).pow(2)
        loss = (per_token * mb["mask"]).sum() / n_tokens.clamp_min(1)
        loss.backward()
    opt.step()
    opt.zero_grad()
""",
            runtime="trains",
            note="the same count clamped to at least 1 (here one micro-batch is all padding)",
        ),
    ),
)
