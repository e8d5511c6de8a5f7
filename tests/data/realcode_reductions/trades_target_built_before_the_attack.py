# reduction-of: adv-robust@6df6a8f0cd49 core/utils/trades.py:38 GA301
# false: GA301
"""TRADES adversarial training: the clean prediction `p_natural` is computed once with its graph,
and every step of the PGD attack takes `torch.autograd.grad(loss_kl, [x_adv])` of a KL loss
against it, without retain_graph; the final loss backpropagates through the model again.

False finding: GA301 confirmed at the attack's autograd.grad ("shares part of its graph with a loss
whose backward() already ran"): autograd.grad(out, [x_adv]) runs the graph from the loss down to
x_adv only; the branch of `p_natural`, built before x_adv existed, is on no path to it and is
neither run nor freed.

Verified with torch 2.13 (CPU): every attack step and the final backward run, and the weights
change. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
criterion_kl = nn.KLDivLoss(reduction="sum")


def trades_loss(x, y, steps=3):
    p_natural = F.softmax(model(x), dim=1)
    x_adv = x.detach() + 0.001 * torch.randn(x.shape)
    for _ in range(steps):
        x_adv.requires_grad_()
        loss_kl = criterion_kl(F.log_softmax(model(x_adv), dim=1), p_natural)
        grad = torch.autograd.grad(loss_kl, [x_adv])[0]
        x_adv = torch.clamp(x_adv.detach() + 0.01 * torch.sign(grad.detach()), 0.0, 1.0)
    opt.zero_grad()
    logits_natural, logits_adv = model(x), model(x_adv)
    robust = criterion_kl(F.log_softmax(logits_adv, dim=1), F.softmax(logits_natural, dim=1)) / len(x)
    return F.cross_entropy(logits_natural, y) + robust


before = model[0].weight.detach().clone()
for _ in range(3):
    loss = trades_loss(torch.rand(8, 4), torch.randint(0, 3, (8,)))
    loss.backward()
    opt.step()
assert not torch.equal(before, model[0].weight)
print("OK")
