"""Fine-tuning with a smaller learning rate for the encoder, which is frozen: its group never trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
head = nn.Linear(16, 3)
for p in encoder.parameters():
    p.requires_grad = False
optimizer = torch.optim.Adam([{"params": encoder.parameters(), "lr": 1e-4}, {"params": head.parameters()}], lr=1e-2)
for step in range(4):
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    loss = F.cross_entropy(head(encoder(x)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
