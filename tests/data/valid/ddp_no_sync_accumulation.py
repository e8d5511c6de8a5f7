# runtime: skip (needs a process group)
"""DistributedDataParallel gradient accumulation: no_sync() on the micro-batches between steps,
the loss divided by the accumulation count."""
import contextlib

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = DDP(nn.Linear(12, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accum = 4
optimizer.zero_grad()
for i in range(16):
    x, y = torch.randn(8, 12), torch.randint(0, 3, (8,))
    sync = (i + 1) % accum == 0
    with contextlib.nullcontext() if sync else model.no_sync():
        loss = nn.functional.cross_entropy(model(x), y) / accum
        loss.backward()
    if sync:
        optimizer.step()
        optimizer.zero_grad()
