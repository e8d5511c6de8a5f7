# reduction-of: ogb@61e9784ca76e examples/nodeproppred/arxiv/gnn.py:155 GA206
# false: GA206
"""Several independent runs: each run re-initialises the model (`model.reset_parameters()`) and
builds a fresh optimizer, then trains for some epochs.

False finding: GA206 confirmed at the optimizer: "built anew in every iteration of the training
loop: its state ... starts from zero at each step". The loop that builds it is the loop over runs;
the steps are in the epoch loop inside it, and the parameters start over too: a fresh run, not a
state lost at every step. reset_parameters() in the iteration now makes the optimizer a fresh run's.

Verified with torch 2.13 (CPU): each run starts from re-initialised weights and trains. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.lins = nn.ModuleList([nn.Linear(6, 16), nn.Linear(16, 3)])

    def reset_parameters(self):
        for lin in self.lins:
            lin.reset_parameters()

    def forward(self, x):
        return self.lins[1](F.relu(self.lins[0](x)))


def train(model, x, y, optimizer):
    model.train()
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = MLP()
x, y = torch.randn(20, 6), torch.randint(0, 3, (20,))
for run in range(2):
    model.reset_parameters()
    start = model.lins[0].weight.detach().clone()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(1, 4):
        train(model, x, y, optimizer)
    assert not torch.equal(start, model.lins[0].weight)
print("OK")
