# runtime: trains
"""A training epoch whose model is chosen by name at run time and whose criterion returns a dict
of terms: the backpropagated `"loss"` term goes to an AverageMeter whose `update` turns a tensor
into a number first (`val.detach().item()` when `isinstance(val, torch.Tensor)`), so no graph
outlives its step."""
import importlib
import os

import torch
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.val = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        if isinstance(val, torch.Tensor):
            val = val.detach().item()
        self.val = val
        self.sum += val * n
        self.count += n


def criterion(pred, target):
    mse = F.mse_loss(pred, target)
    return {"loss": mse + 0.01 * pred.abs().mean(), "mse": mse}


def train_one_epoch(model, loader, optimizer, meter):
    for x, y in loader:
        optimizer.zero_grad()
        out = criterion(model(x), y)
        out["loss"].backward()
        optimizer.step()
        meter.update(out["loss"])


meter = AverageMeter()


def main():
    torch.manual_seed(0)
    layers = importlib.import_module(os.environ.get("MODEL_MODULE", "torch.nn"))
    model = layers.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(3)]
    train_one_epoch(model, loader, optimizer, meter)


if __name__ == "__main__":
    main()
