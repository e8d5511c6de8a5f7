# reduction-of: byol-pytorch@299312613c1f byol_pytorch/byol_pytorch.py:367 GA102
# false: GA102
# quiet: GA102
"""BYOL's momentum target: the trainer is handed its network typed `net: nn.Module`, so the engine
takes it for a module of parameters it does not see; the target encoder is a `copy.deepcopy` of the
online one, frozen with `requires_grad = False` on each of its parameters, and run under no_grad.

False finding: GA102 suspicious at the `with torch.no_grad():` ("records no graph for the
parameters of `self.byol.target`: ... the optimizer never changes them"): the copy of a module of
unseen parameters lost what it was (a library model's forward) and ran on the original's
parameters, not on its own frozen ones. The target is frozen and updated by its moving average only.

Verified with torch 2.13 (CPU): after the steps the target's parameters have no gradient and are as
copied; the online network's change."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def set_requires_grad(model, val):
    for p in model.parameters():
        p.requires_grad = val


class BYOL(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.online = net
        self.predictor = nn.Linear(8, 8)
        self.target = copy.deepcopy(self.online)
        set_requires_grad(self.target, False)

    def forward(self, x):
        p = self.predictor(self.online(x))
        with torch.no_grad():
            t = self.target(x)
        return F.mse_loss(p, t)


class Trainer:
    def __init__(self, net: nn.Module):
        self.byol = BYOL(net)
        self.optimizer = torch.optim.Adam(self.byol.parameters(), lr=1e-2)

    def train(self, loader):
        for x in loader:
            loss = self.byol(x)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    trainer = globals()["Trainer"](nn.Linear(8, 8))  # handed in by a caller the engine does not see
    target_before = [p.clone() for p in trainer.byol.target.parameters()]
    online_before = [p.clone() for p in trainer.byol.online.parameters()]
    trainer.train([torch.randn(16, 8) for _ in range(3)])
    assert all(p.grad is None for p in trainer.byol.target.parameters())
    assert all(torch.equal(a, b) for a, b in zip(target_before, trainer.byol.target.parameters()))
    assert not any(torch.equal(a, b) for a, b in zip(online_before, trainer.byol.online.parameters()))
    print("OK")
