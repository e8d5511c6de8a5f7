# runtime: skip (needs a process group)
"""A model sharded with FSDP2's `fully_shard` (which shards the module in place and returns it, as
lingua does before training): the optimizer is built over the head's parameters only, and the
encoder's, which require grad and feed the loss, are in no param group: they never train."""
import torch
import torch.nn as nn
from torch.distributed.fsdp import fully_shard

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
for layer in model:
    fully_shard(layer)
model = fully_shard(model)
optimizer = torch.optim.AdamW(model[2].parameters(), lr=1e-3)  # <- GA108
for i in range(16):
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
