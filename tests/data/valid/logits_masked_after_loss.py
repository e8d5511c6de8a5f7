# runtime: trains
"""Logits reused for a top-k metric, masked in place after the loss: cross_entropy does not save them
(log_softmax keeps its own result, nll_loss the targets)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(6)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 5))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(2):
    x, y, seen = torch.randn(6, 8), torch.randint(0, 5, (6,)), torch.rand(6, 5) > 0.7
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    logits.masked_fill_(seen, float("-inf"))
    top = logits.topk(2, dim=1).indices
    opt.zero_grad()
    loss.backward()
    opt.step()
