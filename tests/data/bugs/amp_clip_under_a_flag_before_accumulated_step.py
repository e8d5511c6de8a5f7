# runtime: trains
"""Mixed precision with gradient accumulation: the loss is scaled and backpropagated every batch,
clipped when `clip_grad_norm` is set, and the scaler steps every `accumulate` batches. The clip sees
the gradients still multiplied by the loss scale (no `scaler.unscale_(optimizer)` before it): a
threshold of 1.0 on values thousands of times larger clips every update to almost nothing."""
import os

import torch
import torch.nn as nn

device = "cpu"
clip_grad_norm = float(os.environ.get("CLIP_GRAD_NORM", "1.0"))  # 0 turns clipping off
accumulate = 2
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler(device, init_scale=2.0**12)
for it in range(4):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    with torch.autocast(device, dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y) / accumulate
    scaler.scale(loss).backward()
    if clip_grad_norm:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)  # <- GA208
    if (it + 1) % accumulate == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
