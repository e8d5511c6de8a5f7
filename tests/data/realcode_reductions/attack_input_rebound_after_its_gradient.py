# reduction-of: adv-robust@6df6a8f0cd49 core/attacks/fgsm.py:53 GA111
# false: GA111
"""A one-step FGSM attack called once per training batch: a copy of the input is made a leaf,
its `.grad` read once, and the name rebound to `x + eps * grad.sign()`, returned detached.

False finding: GA111 confirmed at the rebinding ("replaces the leaf with a computed tensor: ...
its `.grad` stays None and it stops training"): the leaf is the attack's input, made anew at each
call, not a weight; nothing reads its `.grad` again.

Verified with torch 2.13 (CPU): the model trains on the adversarial inputs, its weights change and
stay finite. Prints OK.
"""
import torch
import torch.nn as nn

model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.CrossEntropyLoss(reduction="sum")


def fgsm(x, y, eps=0.1):
    x = x.detach().clone()
    xadv = x.requires_grad_()
    loss = loss_fn(model(xadv), y)
    loss.backward()
    grad_sign = xadv.grad.detach().sign()
    xadv = xadv + eps * grad_sign
    xadv = torch.clamp(xadv, 0.0, 1.0)
    return xadv.detach()


before = model.weight.detach().clone()
for _ in range(3):
    x, y = torch.rand(8, 4), torch.randint(0, 3, (8,))
    x_adv = fgsm(x, y)
    opt.zero_grad()
    nn.functional.cross_entropy(model(x_adv), y).backward()
    opt.step()
assert not torch.equal(before, model.weight) and model.weight.isfinite().all()
print("OK")
