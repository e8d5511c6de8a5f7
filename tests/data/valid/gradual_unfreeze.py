# runtime: trains
"""Fine-tuning with gradual unfreezing: the encoder is frozen for the first epoch and unfrozen
afterwards; it has its own param group with a lower learning rate from the start."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 20), nn.ReLU())
head = nn.Linear(20, 2)
optimizer = torch.optim.AdamW([
    {"params": encoder.parameters(), "lr": 1e-4},
    {"params": head.parameters(), "lr": 1e-2},
])
for p in encoder.parameters():
    p.requires_grad = False

for epoch in range(3):
    if epoch == 1:
        for p in encoder.parameters():
            p.requires_grad = True
    for _ in range(2):
        x, y = torch.randn(8, 10), torch.randint(0, 2, (8,))
        loss = F.cross_entropy(head(encoder(x)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
