# runtime: warning: lr_scheduler.step()
"""A training loop that advances its warmup schedule in a helper called before the optimizer step."""
import torch
import torch.nn as nn


def advance_schedule(scheduler, step, log_every=2):
    scheduler.step()  # <- GA207
    if step % log_every == 0:
        print(step, scheduler.get_last_lr())


torch.manual_seed(0)
model = nn.Linear(5, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 10))
for step in range(5):
    x, y = torch.randn(4, 5), torch.randint(0, 2, (4,))
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    advance_schedule(scheduler, step)
    optimizer.step()
