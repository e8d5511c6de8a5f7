# runtime: trains
"""A mean aggregation over neighbours: the summed messages are divided by each node's degree,
clamped in place to at least 1 (`deg.view(-1, 1).clamp_(min=1)`), so an isolated node divides by
1, not 0."""
import torch
import torch.nn as nn


def train():
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    adj = (torch.rand(6, 6) > 0.7).float()
    adj[0] = 0.0  # an isolated node
    for _ in range(3):
        h = lin(torch.randn(6, 4))
        deg = adj.sum(dim=1)
        out = adj @ h / deg.view(-1, 1).clamp_(min=1)
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    train()
