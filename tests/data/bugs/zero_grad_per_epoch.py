# runtime: stale-grads
"""zero_grad() is called once per epoch, outside the batch loop: within an epoch every step
applies the sum of all earlier batches' gradients."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
dataset = TensorDataset(torch.randn(64, 5), torch.randn(64, 1))
loader = DataLoader(dataset, batch_size=16)
model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
criterion = nn.MSELoss()

for epoch in range(2):
    model.train()
    optimizer.zero_grad()
    for xb, yb in loader:
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()  # <- GA201
