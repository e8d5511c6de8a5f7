# runtime: error: modified by an inplace operation
"""An attention gate whose output is clamped in place before use."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Gate(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.score = nn.Linear(d, d)
        self.value = nn.Linear(d, d)

    def forward(self, x):
        g = torch.sigmoid(self.score(x))
        g.clamp_(0.05, 0.95)  # <- GA110
        return self.value(x) * g


torch.manual_seed(6)
gate, head = Gate(), nn.Linear(8, 2)
opt = torch.optim.Adam([*gate.parameters(), *head.parameters()], lr=1e-3)
for _ in range(2):
    loss = F.cross_entropy(head(gate(torch.randn(5, 8))), torch.randint(0, 2, (5,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
