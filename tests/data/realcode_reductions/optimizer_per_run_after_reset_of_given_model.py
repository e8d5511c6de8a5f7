# reduction-of: pytorch_geometric@5c6461b2305a benchmark/citation/train_eval.py:56 GA206
# false: GA206
# quiet: GA206
"""A benchmark's training function, handed the model: for each run it re-initialises the model
(`model.to(device).reset_parameters()`), builds a fresh Adam, and trains it for some epochs.

False finding: GA206 confirmed, "`optimizer` (Adam) is built anew in every iteration of the
training loop". A fresh optimizer per run, after the model's parameters start over, is a new
training, not a rebuilt optimizer; the engine saw `reset_parameters()` only on models it had
built itself, not on one handed to the function. It now counts for a model argument too.

Verified with torch 2.13 (CPU): two runs of three epochs, each backward succeeding. Prints OK.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam


def run_train(x, y, model, runs, epochs, lr, device):
    for _run in range(runs):
        model.to(device).reset_parameters()
        optimizer = Adam(model.parameters(), lr=lr)
        for _epoch in range(epochs):
            model.train()
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    # called the way the benchmark's scripts call it: from code this file does not show
    globals()["run_train"](torch.randn(8, 5), torch.randint(0, 3, (8,)), nn.Linear(5, 3), 2, 3, 0.01, "cpu")
    print("OK")
