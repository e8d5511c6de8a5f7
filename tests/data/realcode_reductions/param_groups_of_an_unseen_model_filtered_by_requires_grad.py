# reduction-of: SLIP@8ca728a3a1a2 main.py:310 GA201
# false: GA201
"""SLIP's trainer: the model class is picked by name (`getattr(models, args.model)(...)`), its
parameters are split into weight-decay groups in a loop that skips frozen ones (`if not
p.requires_grad: continue`), and the loop clears the gradients with `model.zero_grad()` after
each step.

False finding: GA201 confirmed, "nothing in the loop clears the gradients". The engine cannot see
the model, so it cannot tell whether any parameter requires grad: it read `p.requires_grad` of an
unseen parameter as False, skipped every append, and took the optimizer for one with two exactly
empty groups, which `model.zero_grad()` of an unknown model then did not clear. The flag of a
parameter the engine cannot name is now unknown: the groups are not known exactly, and the model's
zero_grad() may clear them.

Verified with torch 2.13 (CPU): after each step every gradient is None, and the next backward
starts from nothing. Prints OK.
"""
import os

import torch
import torch.nn as nn

model = getattr(nn, os.environ.get("REDUCTION_LAYER", "Linear"))(4, 1)
p_wd, p_non_wd = [], []
for n, p in model.named_parameters():
    if not p.requires_grad:
        continue
    if p.ndim < 2 or "bias" in n:
        p_non_wd.append(p)
    else:
        p_wd.append(p)
optimizer = torch.optim.AdamW([{"params": p_wd, "weight_decay": 0.1}, {"params": p_non_wd, "weight_decay": 0}])
for it in range(5):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
    model.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in model.parameters())
print("OK")
