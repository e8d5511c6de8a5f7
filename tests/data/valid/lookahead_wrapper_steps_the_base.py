# runtime: trains
"""Lookahead as timm and torch-optimizer write it: an Optimizer subclass that wraps the optimizer
it is given, shares its param groups and steps and zeroes it. The wrapper is the optimizer of the
loop; its parameters are the wrapped optimizer's, and they change."""
from collections import defaultdict

import torch
import torch.nn as nn
from torch.optim.optimizer import Optimizer


class Lookahead(Optimizer):
    def __init__(self, base_optimizer, alpha=0.5, k=2):
        # super().__init__() is not called on purpose: the groups are the base optimizer's
        self._optimizer_step_pre_hooks = {}
        self._optimizer_step_post_hooks = {}
        self._base_optimizer = base_optimizer
        self.param_groups = base_optimizer.param_groups
        self.defaults = base_optimizer.defaults
        self.state = defaultdict(dict)
        self.alpha, self.k, self.count = alpha, k, 0

    @torch.no_grad()
    def step(self, closure=None):
        loss = self._base_optimizer.step(closure)
        self.count += 1
        if self.count % self.k == 0:
            for group in self.param_groups:
                for p in group["params"]:
                    slow = self.state[p].setdefault("slow", p.detach().clone())
                    slow.add_(p - slow, alpha=self.alpha)
                    p.copy_(slow)
        return loss

    def zero_grad(self, set_to_none=True):
        self._base_optimizer.zero_grad(set_to_none)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer = Lookahead(optimizer)
for it in range(4):
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
