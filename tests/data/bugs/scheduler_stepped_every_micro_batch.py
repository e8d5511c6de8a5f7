# runtime: warning: lr_scheduler.step()
# confidence: suspicious
"""Gradient accumulation whose warmup scheduler steps at every micro-batch while the optimizer
steps every fourth (OneVision-Encoder's stage 2): the warmup runs four times too fast, and on
the first micro-batch the scheduler steps before any optimizer.step() (torch warns)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(8, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 100))
accum = 4
for step in range(8):
    x, y = torch.randn(16, 8), torch.randn(16, 2)
    loss = nn.functional.mse_loss(model(x), y) / accum
    loss.backward()
    if (step + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
    scheduler.step()  # <- GA207
