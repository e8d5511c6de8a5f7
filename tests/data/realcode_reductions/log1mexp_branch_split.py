# reduction-of: trl==1.16.0 trl/experimental/orpo/orpo_trainer.py:91 GA405
# false: GA405
"""An odds-ratio loss built on a numerically stable log(1 - exp(x)) of log-probabilities.

The real code (trl's ORPO trainer): `log1mexp(x)` returns
`torch.where(x < t, torch.log1p(-torch.exp(x)), torch.log(-torch.expm1(x)))` with t = -ln 2, the
standard branch split that avoids cancellation, applied to log-probabilities (x <= 0).

False finding: GA405 confirmed, "where the condition is false it is inf or NaN, and although the
forward value is finite its gradient is NaN". The condition splits the domain at -ln 2; it is not a
guard against the singular point. Each branch is finite, with a finite gradient, wherever the where
discards it (log1p(-exp(x)) for x >= -ln 2 until x = 0; log(-expm1(x)) for any x < -ln 2), and at
x = 0 the selected branch is -inf too, so no finite forward hides a NaN gradient. The operands of the
log and log1p are new functions of x (exp, expm1), whose zeros the condition says nothing about.

Verified with torch 2.13 (CPU): every gradient stays finite over the steps and the model changes.
Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def log1mexp(x):
    t = -0.6931471805599453
    return torch.where(x < t, torch.log1p(-torch.exp(x)), torch.log(-torch.expm1(x)))


torch.manual_seed(0)
policy = nn.Linear(6, 5)
opt = torch.optim.AdamW(policy.parameters(), lr=1e-2)
x = torch.randn(32, 6)
chosen, rejected = torch.randint(0, 5, (32,)), torch.randint(0, 5, (32,))
before = [p.detach().clone() for p in policy.parameters()]
for step in range(5):
    logp = F.log_softmax(policy(x), dim=-1)
    lc = logp.gather(1, chosen[:, None]).squeeze(1)
    lr = logp.gather(1, rejected[:, None]).squeeze(1)
    log_odds = (lc - log1mexp(lc)) - (lr - log1mexp(lr))
    loss = -F.logsigmoid(log_odds).mean() - lc.mean()
    opt.zero_grad()
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in policy.parameters())
    opt.step()
assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters()))
print("OK")
