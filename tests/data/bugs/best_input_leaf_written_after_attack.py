# runtime: error: a leaf Variable that requires grad is being used in an in-place operation
"""An attack that keeps the best input so far only when `use_best` is set, and otherwise the
current input itself, a leaf made with `requires_grad_(True)`; the last `replace_best` after the
loop runs whatever the flag and outside no_grad, so with `use_best=False` it writes
`bx[replace] = ...` into that leaf and torch raises. (With an `if not use_best: return` before it,
the leaf never gets there: tests/data/realcode_reductions/best_kept_only_with_flag.py.)"""
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
            bx[replace] = x[replace].clone().detach()  # <- GA111
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
    losses = criterion(model(x), target)
    args = [losses, best_loss, x, best_x]
    best_loss, best_x = replace_best(*args)
    return best_x


inputs, target = torch.randn(8, 10), torch.randint(0, 3, (8,))
adv = attack(inputs, target, use_best=False)
