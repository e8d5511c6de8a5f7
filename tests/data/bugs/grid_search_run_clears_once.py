# runtime: stale-grads
"""A grid search as TextClassificationBenchmark ran it: each setting trains a new model with a new
optimizer, whose gradients are cleared once, before the epoch and batch loops, and never inside
them. The model is new for each setting, but within one run every step applies the sum of all
gradients since the run began."""
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F


def train(lr, hidden, batches, epochs=2):
    model = nn.Sequential(nn.Linear(8, hidden), nn.ReLU(), nn.Linear(hidden, 3))
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=lr)
    optimizer.zero_grad()
    for epoch in range(epochs):
        for x, y in batches:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()  # <- GA201


torch.manual_seed(0)
data = [(torch.randn(16, 8), torch.randint(0, 3, (16,))) for _ in range(4)]
for lr, hidden in itertools.product([1e-3, 1e-2], [8, 16]):
    train(lr, hidden, data)
