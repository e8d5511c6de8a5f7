# runtime: trains
"""The valid look-alike of manual_softmax_of_an_annotated_module: the same training functions
typed `model: nn.Module`, with the stable forms (log_softmax, binary_cross_entropy_with_logits)."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def train_one_epoch(model: nn.Module, loader, optimizer):
    for x, y in loader:
        loss = F.nll_loss(F.log_softmax(model(x), dim=-1), y)
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
            loss = F.binary_cross_entropy_with_logits(-returns_diff.reshape(1), preferred)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def run(kind, model):
    if kind == "classify":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = [(torch.randn(16, 8), torch.randint(0, 4, (16,)))]
        globals()["train_one_epoch"](model, loader, optimizer)
    else:
        pairs = [(-torch.randn(16, 8), torch.randn(8, 8), torch.ones(1))]  # fragments of two lengths
        globals()["PreferenceTrainer"](model).train(pairs)


if __name__ == "__main__":
    torch.manual_seed(0)
    for kind in os.environ.get("KINDS", "classify,compare").split(","):
        run(kind, nn.Linear(8, 4))
