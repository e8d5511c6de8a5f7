# runtime: nonfinite
# confidence: suspicious
"""Training functions handed their model by a caller the engine does not see (picked by name at
run time, as a command line or a framework picks it), typed `model: nn.Module`: the softmax and
the sigmoid over the model's outputs are written by hand (after imitation's preference
comparisons, `1 / (1 + exp(returns_diff))`). exp of a network's raw output overflows to inf once it
passes about 88, and inf / inf is NaN. Suspicious: the engine does not see the module's last layer.
Verified with torch 2.13 (CPU): on inputs scaled by 100 the softmax loss is inf and the
sigmoid's gradient NaN."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def train_one_epoch(model: nn.Module, loader, optimizer):
    for x, y in loader:
        e = model(x).exp()  # <- GA404
        p = e / e.sum(-1, keepdim=True)
        loss = F.nll_loss(p.log(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


class PreferenceTrainer:
    def __init__(self, model: torch.nn.Module, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)

    def train(self, pairs):
        for a, b, preferred in pairs:
            returns_diff = self.model(a).sum() - self.model(b).sum()
            p = 1 / (1 + returns_diff.exp())  # <- GA404
            loss = F.binary_cross_entropy(p.reshape(1), preferred)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def run(kind, model):
    if kind == "classify":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = [(100 * torch.randn(16, 8), torch.randint(0, 4, (16,)))]
        globals()["train_one_epoch"](model, loader, optimizer)
    else:
        pairs = [(-100 * torch.randn(16, 8), 100 * torch.randn(16, 8), torch.ones(1))]
        globals()["PreferenceTrainer"](model).train(pairs)


if __name__ == "__main__":
    torch.manual_seed(0)
    for kind in os.environ.get("KINDS", "classify,compare").split(","):
        run(kind, nn.Linear(8, 4))
