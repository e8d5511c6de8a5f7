# runtime: trains
"""An epoch loop that steps its schedule at the top of each epoch but the first: the first epoch
trains at the schedule's first rate, every later one at the next. The optimizer steps in every epoch,
so the condition is what keeps the schedule in order."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
for epoch in range(4):
    if epoch > 0:
        scheduler.step()
    for _ in range(3):
        x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
