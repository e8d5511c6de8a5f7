# runtime: nonfinite
"""Mixed precision switched on by one setting: the backward is scaled under `if use_amp:`, but the
optimizer is stepped directly whatever the setting, so with it on the scaled gradients are
applied as they are (65536 times too large) and the weights blow up."""
import os

import torch
import torch.nn as nn

use_amp = os.environ.get("USE_AMP", "1") == "1"  # a setting, on by default
torch.manual_seed(0)
model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", enabled=use_amp)
for _ in range(5):
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16, enabled=use_amp):
        out = model(x)
    loss = nn.functional.mse_loss(out.float(), y)
    if use_amp:
        scaler.scale(loss).backward()
    else:
        loss.backward()
    optimizer.step()  # <- GA409
