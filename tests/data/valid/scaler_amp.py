# runtime: trains
"""Mixed precision with a GradScaler: scale, unscale before clipping, step, update."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)
model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu")
for step in range(3):
    x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x).float(), y)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
