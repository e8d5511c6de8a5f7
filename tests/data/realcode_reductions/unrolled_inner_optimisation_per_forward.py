# reduction-of: pytorch_geometric@5c6461b2305a torch_geometric/nn/aggr/equilibrium.py:100 GA302
# false: GA302
# quiet: GA302
"""An aggregation that solves a small optimisation inside its forward: from fresh zeros, a few
momentum steps on an energy, each taking `torch.autograd.grad(energy, y, create_graph=True,
retain_graph=True)`; the training loop adds each loss, with its graph, to a running total (a true
GA303, not the claim here).

The real code (PyG nn/aggr/equilibrium.py, examples/equilibrium_median.py): `momentum_buffer =
torch.zeros_like(y)`, `for _ in range(iterations): val = func(x, y, ...); grad =
torch.autograd.grad(val, y, create_graph=True, retain_graph=True)[0]; ...; y = y + momentum_buffer`,
with `y` made fresh by each forward; the example's loop does `total_loss += loss`.

False finding: GA302 at the autograd.grad, "`retain_graph=True` keeps the previous iteration's graph
alive, and this iteration's loss reaches back into it; a step() has since changed parameters that
graph saved" (confirmed), with `total_loss` as the state that carries it. Each forward builds its
graph from new zeros; no backward() ever runs through the total, so no loss reaches a graph saved
before the previous step().

Verified with torch 2.13 (CPU): thirty Adam steps run without error and the loss falls. Prints OK.
"""
import torch
import torch.nn as nn


class Equilibrium(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.energy = nn.Sequential(nn.Linear(2 * dim, 16), nn.Softplus(), nn.Linear(16, 1))
        self.lr = nn.Parameter(torch.tensor(0.1))

    def forward(self, x, iterations=4):
        y = torch.zeros(x.size(0), x.size(1), requires_grad=True)
        buf = torch.zeros_like(y)
        for _ in range(iterations):
            val = self.energy(torch.cat([x, y], dim=1)).sum()
            grad = torch.autograd.grad(val, y, create_graph=True, retain_graph=True)[0]
            buf = 0.9 * buf - self.lr * grad
            y = y + buf
        return y


torch.manual_seed(0)
model = Equilibrium(3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(8, 3)
target = x.median(dim=1, keepdim=True).values.expand(8, 3)
total_loss = 0
first = None
for step in range(30):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    total_loss += loss
    first = loss.item() if first is None else first
assert loss.item() < first
print("OK")
