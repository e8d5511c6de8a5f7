# runtime: trains
"""One epoch function for both phases: `train` decides grad mode and whether to step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 5), torch.randint(0, 2, (4,))) for _ in range(3)]


def run_epoch(loader, train):
    total = 0.0
    model.train(train)
    for x, y in loader:
        with torch.set_grad_enabled(train):
            loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(loader)


for epoch in range(2):
    run_epoch(data, True)
    with torch.no_grad():
        run_epoch(data, False)
