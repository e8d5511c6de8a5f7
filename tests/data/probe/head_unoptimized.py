"""A classifier whose optimizer is built from the encoder only: the head never trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
head = nn.Linear(16, 3)
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
for step in range(4):
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    loss = F.cross_entropy(head(encoder(x)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
