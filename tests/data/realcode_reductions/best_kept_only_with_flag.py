# reduction-of: robustness@a9541241defd robustness/attacker.py:183 GA111
# false: GA111
"""An attack loop that keeps the best (worst-case) input so far only when a flag asks for it.

The real code (PGD attacks of an adversarial-robustness library): each iteration makes
`x = x.clone().detach().requires_grad_(True)`, takes the gradient of the loss with respect to it,
then under `torch.no_grad()` runs `args = [losses, best_loss, x, best_x]` and
`best_loss, best_x = replace_best(*args) if use_best else (losses, x)`
and steps `x`. After the loop, `if not use_best: return x`; otherwise one last
`replace_best(...)` runs outside no_grad, and writes `bx[replace] = x[replace]` into `best_x`.

False finding: GA111 confirmed at `bx[replace] = ...`: "in-place update of `x`, a leaf that requires
grad, outside torch.no_grad()". `best_x` holds the leaf `x` only on the `else` arm, when `use_best` is
false, and then the function returns before the last `replace_best`; with `use_best` true, `best_x`
is a `clone().detach()` made by `replace_best`, which does not require grad. The engine joined both
arms into `best_x` and did not see that the `if not use_best: return` leaves only the first; and
`replace_best(*args)` gave every parameter the join of the list's elements, so `bx` got `x` too.

Verified with torch 2.13 (CPU): both settings of `use_best` run to the end without the leaf error,
and the best input found is returned. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
for p in model.parameters():
    p.requires_grad_(False)
criterion = nn.CrossEntropyLoss(reduction="none")


def attack(x, target, steps=5, eps=0.1, use_best=True):
    def replace_best(loss, bloss, x, bx):
        if bloss is None:
            bx = x.clone().detach()
            bloss = loss.clone().detach()
        else:
            replace = bloss < loss
            bx[replace] = x[replace].clone().detach()
            bloss[replace] = loss[replace]
        return bloss, bx

    best_loss, best_x = None, None
    for _ in range(steps):
        x = x.clone().detach().requires_grad_(True)
        losses = criterion(model(x), target)
        (grad,) = torch.autograd.grad(losses.mean(), [x])
        with torch.no_grad():
            args = [losses, best_loss, x, best_x]
            best_loss, best_x = replace_best(*args) if use_best else (losses, x)
            x = x + eps * grad.sign()
    if not use_best:
        return x.clone().detach()
    losses = criterion(model(x), target)
    args = [losses, best_loss, x, best_x]
    best_loss, best_x = replace_best(*args)
    return best_x


inputs, target = torch.randn(8, 10), torch.randint(0, 3, (8,))
for flag in (True, False):
    adv = attack(inputs, target, use_best=flag)
    assert adv.shape == inputs.shape and not adv.requires_grad
print("OK")
