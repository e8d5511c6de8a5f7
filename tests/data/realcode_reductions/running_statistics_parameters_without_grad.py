# reduction-of: on-policy@de66d7a4b23f onpolicy/utils/valuenorm.py:21 GA113
# false: GA113
# quiet: GA113
"""Running statistics of a value normaliser kept as `nn.Parameter(..., requires_grad=False)` and
moved with `.to(device, dtype)`, then updated by hand under no_grad (the PPO/MAPPO value
normalisers of on-policy: ValueNorm, PopArt's statistics).

False finding: GA113 suspicious at each `nn.Parameter(..., requires_grad=False).to(**self.tpdv)`
("makes a new tensor from the one created with requires_grad=True: the name holds a non-leaf"): the
parameter was created without requires_grad, so the copy is a plain tensor, no gradient is lost and
nothing is meant to train it.

Verified with torch 2.13 (CPU; float64 stands in for a device so that `.to` copies): the copy is a
leaf with requires_grad False and no grad_fn; the running mean follows the data and the critic
trains. Prints OK.
"""
import torch
import torch.nn as nn


class ValueNorm(nn.Module):
    def __init__(self, input_shape, beta=0.99):
        super().__init__()
        self.beta = beta
        self.tpdv = dict(dtype=torch.float64)
        self.running_mean = nn.Parameter(torch.zeros(input_shape), requires_grad=False).to(**self.tpdv)
        self.debiasing_term = nn.Parameter(torch.tensor(0.0), requires_grad=False).to(**self.tpdv)

    @torch.no_grad()
    def update(self, x):
        self.running_mean.mul_(self.beta).add_(x.to(**self.tpdv).mean(0) * (1 - self.beta))
        self.debiasing_term.mul_(self.beta).add_(1 - self.beta)

    def normalize(self, x):
        return x - self.running_mean / self.debiasing_term.clamp(min=1e-5)


vn = ValueNorm(1)
assert vn.running_mean.is_leaf and not vn.running_mean.requires_grad and vn.running_mean.grad_fn is None
critic = nn.Linear(4, 1).double()
opt = torch.optim.Adam(critic.parameters(), lr=1e-2)
before = critic.weight.detach().clone()
for _ in range(3):
    ret = torch.randn(16, 1, dtype=torch.float64) + 3
    vn.update(ret)
    loss = (critic(torch.randn(16, 4, dtype=torch.float64)) - vn.normalize(ret)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
assert vn.running_mean.item() != 0.0 and not torch.equal(before, critic.weight)
print("OK")
