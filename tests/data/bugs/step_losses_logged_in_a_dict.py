# runtime: graph-kept: step_loss_log
"""Per-step losses logged in a dict keyed by the step counter (`step_loss_log[step] = loss`): each
entry is the loss tensor itself, so every step's graph stays alive until the epoch's log is read.
(A constant key, `last["loss"] = loss`, would keep only the latest.)"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = 0
for epoch in range(2):
    step_loss_log = {}
    for i in range(5):
        loss = model(torch.randn(3, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        step_loss_log[step] = loss  # <- GA303
        step += 1
    print(epoch, {k: round(v.item(), 4) for k, v in step_loss_log.items()})
