# reduction-of: HowToTrainYourMAMLPytorch@86964701651c few_shot_learning_system.py:346 GA207
# false: GA207
# quiet: GA207
"""A meta-learner that sets its cosine schedule at the start of each epoch from the epoch number,
`scheduler.step(epoch=epoch)`, before the epoch's optimizer steps.

False finding: GA207 confirmed: "`scheduler.step()` runs before the optimizer's step(): the first
value of the schedule is skipped". Given the epoch, step() sets `last_epoch` and the rate from the
schedule's closed form: epoch e trains at cosine(e), starting at the base rate; nothing is skipped
(torch still prints its order warning). Verified with torch 2.13 (CPU): the rate used by each epoch
equals the closed form. Prints OK.
"""
import math
import warnings

import torch
import torch.nn as nn

warnings.simplefilter("ignore")
torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10, eta_min=1e-5)
used = []
for epoch in range(10):
    scheduler.step(epoch=epoch)
    used.append(optimizer.param_groups[0]["lr"])
    for _ in range(3):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
expected = [1e-5 + (1e-3 - 1e-5) * (1 + math.cos(math.pi * e / 10)) / 2 for e in range(10)]
assert all(abs(u - x) < 1e-12 for u, x in zip(used, expected)), (used, expected)
print("OK")
