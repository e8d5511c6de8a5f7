# runtime: no-update: model.body
"""A temperature parameter created inside forward: a new leaf at every call."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(7, 5)

    def forward(self, x):
        temperature = nn.Parameter(torch.ones(1))  # <- GA108
        return self.body(x).detach() / temperature  # <- GA101


torch.manual_seed(4)
model = Scorer()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(3):
    loss = F.cross_entropy(model(torch.randn(4, 7)), torch.randint(0, 5, (4,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
