# runtime: error: modified by an inplace operation
"""A gate reshaped in place (unsqueeze_) after sigmoid saved it: a shape change is a version bump."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ChannelGate(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.score = nn.Linear(c, c)
        self.head = nn.Linear(c * 3, 2)

    def forward(self, x):
        g = torch.sigmoid(self.score(x.mean(2)))
        g.unsqueeze_(2)  # <- GA110
        return self.head((x * g).flatten(1))


torch.manual_seed(4)
model = ChannelGate()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(2):
    loss = F.cross_entropy(model(torch.randn(5, 4, 3)), torch.randint(0, 2, (5,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
