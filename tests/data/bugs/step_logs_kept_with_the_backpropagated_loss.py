# runtime: graph-kept: outputs
"""Each step builds a log dict holding its loss, keeps the dict in an epoch-long list (for an
epoch-end summary) and backpropagates the dict's loss. The backward in the same step does not
release anything: the list still holds every step's loss with its graph until the epoch ends."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
outputs = []
for step in range(4):
    x, y = torch.randn(8, 6), torch.randn(8, 1)
    log = {"loss": F.mse_loss(model(x), y), "step": step}
    outputs.append(log)  # <- GA303
    optimizer.zero_grad()
    log["loss"].backward()
    optimizer.step()
print(sum(o["loss"].item() for o in outputs) / len(outputs))
