# runtime: error: 'NoneType' object has no attribute 'norm'
"""Logging the gradient norm of the hidden features during training for a debugging dashboard:
the features are an intermediate tensor whose .grad is never kept."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(12, 24)
        self.cls = nn.Linear(24, 2)

    def forward(self, x):
        self.feats = F.relu(self.enc(x))
        return self.cls(self.feats)


torch.manual_seed(0)
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
stats = []
for step in range(3):
    x, y = torch.randn(8, 12), torch.randint(0, 2, (8,))
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    stats.append(net.feats.grad.norm().item())  # <- GA306
    opt.step()
