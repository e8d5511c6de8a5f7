# runtime: trains
"""A meta-attack's surrogate, as pytorch-gnn-meta-attack writes it: for each perturbation the
surrogate's weights are drawn again (`w.data.uniform_(-k, k)`) and a new Adam is built over them,
then trained for a few steps. The optimizer is new because its parameters start over: a fresh
run per perturbation, not an optimizer rebuilt under parameters that keep training."""
import math

import torch
import torch.nn.functional as F
from torch.nn import Parameter

torch.manual_seed(0)
x = torch.randn(32, 8)
y = torch.randint(0, 3, (32,))
weights = [Parameter(torch.empty(8, 16)), Parameter(torch.empty(16, 3))]
biases = [Parameter(torch.empty(16)), Parameter(torch.empty(3))]


def initialize():
    for w, b in zip(weights, biases):
        stdv = 1.0 / math.sqrt(w.size(1))
        w.data.uniform_(-stdv, stdv)
        b.data.uniform_(-stdv, stdv)
    return torch.optim.Adam(weights + biases, lr=0.01)


for perturbation in range(3):
    optimizer = initialize()
    for step in range(20):
        h = x
        for i, (w, b) in enumerate(zip(weights, biases)):
            h = h @ w + b
            if i < len(weights) - 1:
                h = F.relu(h)
        loss = F.cross_entropy(h, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
