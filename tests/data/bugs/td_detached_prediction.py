# runtime: error: does not require grad
"""A TD update whose prediction is detached: the bootstrap under no_grad is the idiom, the
detached prediction is the break."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
qnet = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(qnet.parameters(), lr=1e-3)
for it in range(3):
    s, s2 = torch.randn(8, 4), torch.randn(8, 4)
    a, r = torch.randint(0, 2, (8,)), torch.randn(8)
    q = qnet(s).gather(1, a.unsqueeze(1)).squeeze(1).detach()  # <- GA101
    with torch.no_grad():
        target = r + 0.9 * qnet(s2).max(dim=1).values
    loss = F.smooth_l1_loss(q, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
