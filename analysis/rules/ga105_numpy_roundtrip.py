"""GA105 numpy-roundtrip."""
from .base import GRAPH_BREAK, Example, Rule, RuleContext
from .common import cut_findings


def check(ctx: RuleContext):
    return cut_findings(
        ctx, ("numpy",), RULE.code, RULE.name, RULE.family,
        lambda cut, what, step: f"`{cut.detail}` leaves autograd: the values come back into torch without "
                                f"history, so `{step.loss or 'the loss'}` gets no gradient to {what}",
        None)


RULE = Rule(
    code="GA105",
    name="numpy-roundtrip",
    family=GRAPH_BREAK,
    summary="a tensor that carries gradient goes through NumPy and back into the loss",
    what="""
Flags `.numpy()` or a NumPy function applied to a tensor that carries gradient from optimized
parameters, when the result is brought back into torch and feeds the loss. Labels, data and
metrics handled in NumPy are not flagged.
""",
    why="""
NumPy arrays have no autograd history. On a tensor that requires grad, `.numpy()` raises
("Can't call numpy() on Tensor that requires grad"); with `.detach()` first, or through
`np.*` on detached data, the loss silently gets no gradient through that term.
""",
    example="""
probs = torch.softmax(model(x), dim=1)
log_probs = torch.from_numpy(np.log(probs.detach().numpy() + 1e-8))
loss = F.nll_loss(log_probs, y)
""",
    use_instead="""
log_probs = torch.log_softmax(model(x), dim=1)
loss = F.nll_loss(log_probs, y)
""",
    check=check,
    fix_available=False,
    invalid=(
        Example('''import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 4, (8,))
    probs = torch.softmax(model(x), dim=1)
    log_probs = torch.from_numpy(np.log(probs + 1e-8))  # <- GA105
    loss = F.nll_loss(log_probs, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
''', runtime="error: Can't call numpy() on Tensor that requires grad"),
        Example('''import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(1)
body = nn.Sequential(nn.Linear(5, 16), nn.Tanh())
value_head = nn.Linear(16, 1)
policy_head = nn.Linear(16, 3)
opt = torch.optim.RMSprop([*body.parameters(), *value_head.parameters(), *policy_head.parameters()], lr=1e-3)


def value_loss(values, returns):
    v = values.detach().numpy()  # <- GA105
    return torch.tensor(np.mean((v - returns) ** 2), dtype=torch.float32)


for _ in range(3):
    obs = torch.randn(16, 5)
    returns = np.random.default_rng(0).normal(size=16).astype(np.float32)
    h = body(obs)
    dist = torch.distributions.Categorical(logits=policy_head(h))
    policy_loss = -(dist.log_prob(dist.sample()) * torch.from_numpy(returns)).mean()
    loss = policy_loss + 0.5 * value_loss(value_head(h).squeeze(-1), returns)
    opt.zero_grad()
    loss.backward()
    opt.step()
''', runtime="no-update: value_head"),
    ),
    valid=(
        Example('''import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(2)
features = rng.normal(size=(40, 5)).astype(np.float32)
labels = (features @ np.array([1.0, -2.0, 0.5, 0.0, 1.0]) > 0).astype(np.int64)
X, y = torch.from_numpy(features), torch.from_numpy(labels)
torch.manual_seed(2)
clf = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.Adam(clf.parameters(), lr=1e-2)
for epoch in range(3):
    logits = clf(X)
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = np.mean(logits.detach().argmax(dim=1).numpy() == labels)
''', runtime="trains", note="NumPy data in, NumPy metrics out"),
    ),
)
