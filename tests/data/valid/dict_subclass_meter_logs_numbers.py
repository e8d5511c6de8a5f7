# runtime: skip (checked by hand: the meter's running total is a float)
"""The valid form of bugs/dict_subclass_meter_keeps_graphs.py: the loop logs `loss.item()`, a
Python number, so the meter's running total holds no graph."""
import functools
from collections import defaultdict, deque

import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self, window_size=50):
        self._deque = deque(maxlen=window_size)
        self._total = 0.0
        self._count = 0

    def update(self, value=None):
        self._deque.append(value)
        self._count += 1
        self._total += value

    @property
    def global_avg(self):
        return self._total / max(self._count, 1)


class MeterBuffer(defaultdict):
    def __init__(self, window_size=20):
        factory = functools.partial(AverageMeter, window_size=window_size)
        super().__init__(factory)

    def update(self, values=None, **kwargs):
        if values is None:
            values = {}
        values.update(kwargs)
        for k, v in values.items():
            self[k].update(v)


model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
meter = MeterBuffer(window_size=10)
for _ in range(100):
    x = torch.randn(8, 4)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    meter.update(total_loss=loss.item())
print(meter["total_loss"].global_avg)
