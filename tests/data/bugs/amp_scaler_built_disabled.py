# runtime: no-update: model
# confidence: suspicious
"""A trainer's float16 autocast with its GradScaler built `enabled=False` (oumi's trainer, before its
fix): scale() gives the loss back unscaled, so the float16 backward underflows as with no scaler at
all; gradients below ~6e-8 become exactly 0 and Adam never moves the model. (Suspicious: the
gradients' size decides.)"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler("cpu", enabled=False)
for _ in range(3):
    x, y = torch.randn(4, 3) * 1e-3, torch.zeros(4, 1)
    with torch.autocast("cpu", dtype=torch.float16):  # <- GA409
        loss = nn.functional.mse_loss(model(x).float(), y) * 1e-9
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
