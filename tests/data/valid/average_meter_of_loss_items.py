# runtime: trains
"""The meter of bugs/average_meter_of_loss_lists.py handed Python numbers (`.item()`): the running
sums hold no graph."""
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self, items):
        self.items = items
        self.reset()

    def reset(self):
        self._val = [0] * len(self.items)
        self._sum = [0] * len(self.items)
        self._count = [0] * len(self.items)

    def update(self, values):
        for idx, v in enumerate(values):
            self._val[idx] = v
            self._sum[idx] += v
            self._count[idx] += 1


torch.manual_seed(0)
coarse_net, refine_net = nn.Linear(3, 3), nn.Linear(3, 3)
params = list(coarse_net.parameters()) + list(refine_net.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)
meter = AverageMeter(["CoarseLoss", "RefineLoss"])
for step in range(3):
    points, target = torch.randn(16, 3), torch.randn(16, 3)
    coarse = coarse_net(points)
    refine = refine_net(coarse)
    coarse_loss = (coarse - target).pow(2).mean()
    refine_loss = (refine - target).pow(2).mean()
    optimizer.zero_grad()
    (coarse_loss + refine_loss).backward()
    optimizer.step()
    meter.update([coarse_loss.item() * 1000, refine_loss.item() * 1000])
