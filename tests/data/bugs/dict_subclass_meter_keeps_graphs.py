# runtime: skip (checked by hand: the meter's running total holds a graph)
"""After YOLOX's trainer: a meter buffer is a project subclass of `defaultdict` whose factory,
given to `super().__init__`, makes one running-average meter per key; the loop logs the loss
tensor itself, and each meter adds it to a running total. Every iteration's graph stays alive in
that total (memory grows until the loop ends). Checked with torch 2.13 (CPU): after the loop,
`meter["total_loss"]._total.grad_fn` is not None; with `loss.item()`
(valid/dict_subclass_meter_logs_numbers.py) it is a float."""
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
        self._deque.append(value)  # <- GA303
        self._count += 1
        self._total += value  # <- GA303

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
    meter.update(total_loss=loss)
print(meter["total_loss"].global_avg)
