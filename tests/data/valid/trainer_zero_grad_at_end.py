# runtime: trains
"""A trainer that clears gradients at the end of the iteration (set_to_none) and steps an epoch
scheduler after the batch loop."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
batches = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(3)]
optimizer.zero_grad(set_to_none=True)
for epoch in range(3):
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    scheduler.step()
