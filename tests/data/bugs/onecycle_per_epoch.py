# runtime: trains
"""OneCycleLR is built inside the epoch loop, so the one-cycle schedule restarts from its warmup
every epoch instead of spanning the run (it trains, on the wrong schedule)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def get_loader(n_batches=4):
    return [(torch.randn(16, 8), torch.randint(0, 3, (16,))) for _ in range(n_batches)]


def run(epochs=3, max_lr=0.1):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=max_lr, momentum=0.9)
    loader = get_loader()
    for epoch in range(epochs):
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=max_lr, total_steps=epochs * len(loader))  # <- GA206
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
        print(epoch, scheduler.get_last_lr())


run()
