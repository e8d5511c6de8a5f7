import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
head = nn.Linear(1, 1)
optimizer = torch.optim.SGD(list(model.parameters()) + list(head.parameters()), lr=0.1)
x, y = torch.randn(32, 8), torch.randn(32, 1)

for epoch in range(10):
    optimizer.zero_grad()
    features = model(x).detach()
    loss = ((head(features) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
