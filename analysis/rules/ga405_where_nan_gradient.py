"""GA405 where-nan-gradient."""

from ..model.findings import Finding
from .base import NUMERICAL, Example, Rule, RuleContext, RuntimeCheck
from .common import risk_findings


def check(ctx: RuleContext) -> list[Finding]:
    return risk_findings(
        ctx,
        RULE,
        lambda r: (
            (
                f"NaN entries are dropped only after this op ({r.detail.removeprefix('nan dropped by ')}): "
                "it reads a value that is NaN wherever the data is (a missing target), and although "
                "the loss is finite, backward multiplies their zero gradient by that NaN (0 * NaN): "
                "the gradient is NaN; drop or replace the NaN in the data before this op, e.g. "
                "`mask = ~torch.isnan(y)` then `pred[mask]`, `y[mask]`"
            )
            if r.detail.startswith("nan dropped by")
            else (
                "this op is computed for every element, also those `torch.where` discards: where the "
                "condition is false it is inf or NaN, and although the forward value is finite its gradient "
                "is NaN (0 * inf); make its input safe first, e.g. `torch.where(cond, x, 1)`"
            )
        ),
    )


RULE = Rule(
    code="GA405",
    name="where-nan-gradient",
    family=NUMERICAL,
    summary=(
        "torch.where whose discarded branch is non-finite, or NaN dropped after the op that read it: "
        "NaN gradients under a finite forward"
    ),
    what="""
Flags an unsafe op (`sqrt`, `log`, a division) inside a `torch.where` branch when its operand is
the very value the condition tests (`torch.where(x > 0, torch.sqrt(x), 0)`,
`torch.where(n > 0, s / n, 0)`). Making the operand safe first (`x_safe = torch.where(x > 0, x,
1)`), or clamping it, is not flagged.

The same selection after masking happens when NaN entries of the data (missing targets) are
dropped only after the loss is computed: `F.mse_loss(pred, y, reduction="none").nanmean()`,
`d = torch.linalg.norm(y - pred, dim=-1)` then `d[~torch.isnan(d)]` (or `masked_select`,
`torch.where(torch.isnan(d), 0, d)`, `nan_to_num`). Flagged at the op that reads the NaN in
backward (a square, a norm, a product) when a difference of the prediction and the data reaches
it; an op that only selects by its input (`abs`, `l1_loss`, `relu`, `clamp`) passes a zero
gradient on and is not flagged, nor is data whose NaN was replaced before the op.
""",
    why="""
Both branches are computed for every element. The forward picks the finite one, but backward
multiplies the discarded branch's gradient by 0: `0 * inf = NaN`, so every parameter upstream gets
NaN. The loss prints fine; the model dies at the first step. A NaN dropped after the fact is the
same trap: the dropped entries get gradient 0, and the op that made them multiplies that 0 by the
NaN it read (`d/dx (x - y) ** 2 = 2 (x - y)`), so every parameter behind it gets NaN.
""",
    example="""
speed = torch.where(energy > 0, torch.sqrt(2 * energy / mass), torch.zeros_like(energy))
""",
    use_instead="""
safe = torch.where(energy > 0, energy, torch.ones_like(energy))
speed = torch.where(energy > 0, torch.sqrt(2 * safe / mass), torch.zeros_like(energy))
""",
    severity="high",
    lookalike="The branch `torch.where` does not select is non-finite for some elements, so the gradient is NaN.",
    runtime=RuntimeCheck.nonfinite("an element where the discarded branch is inf or NaN"),
    supersedes=("GA402", "GA403", "GA401"),
    check=check,
    fix_available=False,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
X = torch.randn(32, 3)
v_true = torch.relu(X[:, :1])
for it in range(3):
    energy = net(X)
    speed = torch.where(energy > 0, torch.sqrt(2 * energy / 2.0), torch.zeros_like(energy))  # <- GA405
    loss = nn.functional.mse_loss(speed, v_true)
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
enc = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 8))
opt = torch.optim.SGD(enc.parameters(), lr=0.05)
x = torch.randn(20, 5)
assign = torch.randint(0, 4, (20,))
for it in range(3):
    z = enc(x)
    onehot = F.one_hot(assign, 6).float()
    sums, counts = onehot.t() @ z, onehot.sum(0).unsqueeze(1)
    means = torch.where(counts > 0, sums / counts, torch.zeros_like(sums))  # <- GA405
    loss = (z - means[assign]).pow(2).sum(1).mean() + 0.01 * means.pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
            note="clusters 4 and 5 are empty: their counts are 0",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x = torch.randn(32, 5)
y = torch.randn(32, 3)
y[::4, 1] = float("nan")
for it in range(3):
    per_output = F.mse_loss(net(x), y, reduction="none")  # <- GA405
    loss = per_output.nanmean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
            note="every fourth sample has no label for its second output",
        ),
        Example(
            """import torch
import torch.nn as nn


class KeypointDistanceLoss:
    def __call__(self, targets, predictions):
        dist = torch.linalg.norm(targets - predictions, dim=-1)  # <- GA405
        return torch.masked_select(dist, ~torch.isnan(dist)).mean()


torch.manual_seed(4)
net = nn.Linear(4, 6)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
criterion = KeypointDistanceLoss()
x = torch.randn(8, 4)
targets = torch.randn(8, 2, 3)
targets[2, 1] = float("nan")
for it in range(3):
    loss = criterion(targets, net(x).view(8, 2, 3))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
            note="a keypoint missing from the labels",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(6)
student = nn.Linear(4, 5)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
x = torch.randn(12, 4)
teacher_logp = torch.log_softmax(torch.randn(12, 5), dim=-1)
teacher_logp[::3, 0] = float("-inf")
for it in range(3):
    student_logp = torch.log_softmax(student(x), dim=-1)
    student_p = student_logp.exp()
    reverse_kl = torch.nan_to_num(student_p * (student_logp - teacher_logp), nan=0.0)  # <- GA405
    loss = reverse_kl.sum(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
            note="the teacher gives some tokens no probability (log-probability -inf): the student's factor reads inf",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
energy_net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
enc = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 8))
opt = torch.optim.Adam([*energy_net.parameters(), *enc.parameters()], lr=1e-3)
X, x = torch.randn(32, 3), torch.randn(20, 5)
v_true = torch.relu(X[:, :1])
assign = torch.randint(0, 4, (20,))
for it in range(3):
    energy = energy_net(X)
    positive = energy > 0
    e_pos = torch.where(positive, energy, torch.ones_like(energy))
    speed = torch.where(positive, torch.sqrt(2 * e_pos / 2.0), torch.zeros_like(energy))
    z = enc(x)
    onehot = F.one_hot(assign, 6).float()
    sums, counts = onehot.t() @ z, onehot.sum(0).unsqueeze(1)
    means = torch.where(counts > 0, sums / counts.clamp_min(1.0), torch.zeros_like(sums))
    loss = F.mse_loss(speed, v_true) + (z - means[assign]).pow(2).sum(1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="the operands are made safe before the where",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(5)
net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x = torch.randn(32, 5)
y = torch.randn(32, 3)
y[::4, 1] = float("nan")
for it in range(3):
    pred = net(x)
    known = ~torch.isnan(y)
    loss = F.mse_loss(pred[known], y[known])
    l1 = (pred - y).abs()
    loss = loss + l1[~torch.isnan(l1)].mean()
    y_clean = torch.where(known, y, torch.zeros_like(y))
    dist = torch.linalg.norm(y_clean - pred, dim=-1)
    loss = loss + torch.where(known.all(dim=-1), dist, torch.zeros_like(dist)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="the NaN is dropped from the data before the square and the norm; an absolute error passes 0 on",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(6)
student = nn.Linear(4, 5)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
x = torch.randn(12, 4)
teacher_logp = torch.log_softmax(torch.randn(12, 5), dim=-1)
teacher_logp[::3, 0] = float("-inf")
teacher_p = teacher_logp.exp()
for it in range(3):
    student_logp = torch.log_softmax(student(x), dim=-1)
    forward_kl = torch.nan_to_num(teacher_p * (teacher_logp - student_logp), nan=0.0)
    loss = forward_kl.sum(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="the -inf sits in the teacher's factor, which takes no gradient; the student's factor is finite",
        ),
    ),
)
