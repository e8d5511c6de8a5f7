"""A regression loop that never clears the gradients: every step applies the sum of all so far."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(4):
    x = torch.randn(32, 5)
    loss = (model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
    loss.backward()
    optimizer.step()
