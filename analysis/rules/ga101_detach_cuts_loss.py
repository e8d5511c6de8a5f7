"""GA101 detach-cuts-loss."""

from ..model.findings import SAFE, UNSAFE, Finding, Fix
from ..model.model import Cut, Step
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import cut_findings
from .fixes import mutated_after


def _fix(ctx: RuleContext, cut: Cut, step: Step) -> Fix | None:
    if cut.receiver is None:
        return None
    receiver = ctx.text(cut.receiver)
    if cut.detail == ".detach_()":
        lines = ctx.statement_lines(cut.span)
        if lines is None:
            return None
        return Fix(f"Remove `{receiver}.detach_()`", SAFE, (ctx.delete_lines(cut.span.path, *lines),))
    if not receiver:
        return None
    # a detached copy that is later changed in place would, without the detach, change the graph
    how = UNSAFE if mutated_after(ctx, cut.span) else SAFE
    return Fix(f"Drop `{cut.detail}`", how, (ctx.replace(cut.span, receiver),))


def check(ctx: RuleContext) -> list[Finding]:
    return cut_findings(
        ctx,
        ("detach", "data"),
        RULE,
        lambda cut, what, step: (
            f"`{cut.detail}` cuts gradient to {what}: they reach `{step.loss or 'the loss'}` by no other path"
        ),
        _fix,
    )


RULE = Rule(
    code="GA101",
    name="detach-cuts-loss",
    family=GRAPH_BREAK,
    summary="`.detach()` or `.data` cuts optimized parameters off from the loss",
    what="""
Flags `.detach()`, `.detach_()` and `.data` on a tensor that carries gradient from optimized
parameters into a loss, when those parameters reach the loss by no other path; and a whole
scalar term of the loss cut that way (`l1 + w * perceptual.detach().item()`), which only shifts
the loss's value and trains nothing even where its parameters reach the loss through another term.
Stop-gradients that leave another path (SimSiam, BYOL), target networks, a GAN's
`fake.detach()` in the discriminator step, carried RNN state, a straight-through estimator
(`x + (q(x) - x).detach()`) and logging are not flagged.
""",
    why="""
Everything upstream of the cut gets no gradient: the optimizer steps with `grad=None` and those
parameters never change, while the loss still decreases through the rest of the model. If the
cut removes every trainable parameter, `backward()` raises
"element 0 of tensors does not require grad and does not have a grad_fn".
""",
    example="""
feats = encoder(x).detach()
loss = F.cross_entropy(head(feats), y)
loss.backward()
optimizer.step()  # optimizer holds encoder and head: encoder never changes
""",
    use_instead="""
feats = encoder(x)
loss = F.cross_entropy(head(feats), y)
loss.backward()
optimizer.step()
""",
    severity="high",
    lookalike=(
        "The parameters behind the cut are ones {opt} changes for this loss, and they reach it by no "
        "other path: not a target or EMA network (no optimizer would hold them), not a stop-gradient "
        "branch (SimSiam/BYOL keep a second path), not a GAN sample detached for the other player's step "
        "(their optimizer is the one stepped here), not logging (the value feeds the loss)."
    ),
    runtime=RuntimeCheck("into", "`into` fails: the parameters behind the cut get no gradient from this loss"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
head = nn.Linear(16, 3)
opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-2)

for step in range(3):
    x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))
    feats = encoder(x).detach()  # <- GA101
    loss = F.cross_entropy(head(feats), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
head = nn.Linear(16, 3)
opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-2)

for step in range(3):
    x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))
    feats = encoder(x)
    loss = F.cross_entropy(head(feats), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="no-update: encoder",
        ),
        Example(
            """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 6)
        self.out = nn.Linear(6, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.body(x)).data)  # <- GA101


torch.manual_seed(1)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(5, 6)
    loss = ((model(x) - x.sum(1, keepdim=True)) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 6)
        self.out = nn.Linear(6, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.body(x)))


torch.manual_seed(1)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(5, 6)
    loss = ((model(x) - x.sum(1, keepdim=True)) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: model.body",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(2)
net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
criterion = nn.MSELoss()


def predict(batch):
    return net(batch).detach().squeeze(1)  # <- GA101


for epoch in range(2):
    xb, yb = torch.randn(10, 4), torch.randn(10)
    loss = criterion(predict(xb), yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(2)
net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
criterion = nn.MSELoss()


def predict(batch):
    return net(batch).squeeze(1)


for epoch in range(2):
    xb, yb = torch.randn(10, 4), torch.randn(10)
    loss = criterion(predict(xb), yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="error: does not require grad",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
proj = nn.Linear(10, 6)
clf = nn.Linear(6, 2)
opt = torch.optim.SGD([*proj.parameters(), *clf.parameters()], lr=0.1)
for _ in range(2):
    x, y = torch.randn(8, 10), torch.randint(0, 2, (8,))
    z = proj(x)
    z.detach_()  # <- GA101
    loss = F.cross_entropy(clf(F.normalize(z, dim=1)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
proj = nn.Linear(10, 6)
clf = nn.Linear(6, 2)
opt = torch.optim.SGD([*proj.parameters(), *clf.parameters()], lr=0.1)
for _ in range(2):
    x, y = torch.randn(8, 10), torch.randint(0, 2, (8,))
    z = proj(x)
    loss = F.cross_entropy(clf(F.normalize(z, dim=1)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="no-update: proj",
        ),
    ),
    valid=(
        Example(
            """import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(4)
policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
target = copy.deepcopy(policy)
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
for it in range(4):
    s, s2 = torch.randn(8, 4), torch.randn(8, 4)
    a, r = torch.randint(0, 2, (8,)), torch.randn(8)
    q = policy(s).gather(1, a.unsqueeze(1)).squeeze(1)
    td_target = r + 0.9 * target(s2).max(dim=1).values.detach()
    loss = F.smooth_l1_loss(q, td_target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if it % 2 == 1:
        target.load_state_dict(policy.state_dict())
""",
            runtime="trains",
            note="a target network: it is not optimized",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(5)
backbone = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8))
predictor = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))
opt = torch.optim.SGD([*backbone.parameters(), *predictor.parameters()], lr=0.05)
data = torch.randn(16, 12)
for _ in range(3):
    v1, v2 = data + 0.1 * torch.randn_like(data), data + 0.1 * torch.randn_like(data)
    z1, z2 = backbone(v1), backbone(v2)
    p1, p2 = predictor(z1), predictor(z2)
    loss = -(F.cosine_similarity(p1, z2.detach()).mean() + F.cosine_similarity(p2, z1.detach()).mean()) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="a stop-gradient with another path to the backbone",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(6)
G = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for _ in range(3):
    real, fake = torch.randn(8, 2) + 2, G(torch.randn(8, 3))
    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(8, 1)) + bce(D(fake.detach()), torch.zeros(8, 1))
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = bce(D(fake), torch.ones(8, 1))
    g_loss.backward()
    opt_g.step()
""",
            runtime="trains",
            note="the discriminator step must not update the generator",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)
rnn = nn.GRU(5, 8, batch_first=True)
out = nn.Linear(8, 5)
opt = torch.optim.Adam([*rnn.parameters(), *out.parameters()], lr=1e-2)
stream = torch.randint(0, 5, (2, 31))
h = None
history = []
for start in range(0, 30, 10):
    x = F.one_hot(stream[:, start:start + 10], 5).float()
    y = stream[:, start + 1:start + 11]
    if h is not None:
        h = h.detach()
    seq, h = rnn(x, h)
    loss = F.cross_entropy(out(seq).reshape(-1, 5), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(loss.detach())
""",
            runtime="trains",
            note="carried RNN state is detached at the iteration boundary; logging",
        ),
    ),
)
