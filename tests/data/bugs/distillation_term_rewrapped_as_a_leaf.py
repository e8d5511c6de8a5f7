# runtime: trains
"""A student trained on cross-entropy plus a distillation term whose logits were copied into new
leaves (after IntelLabs' distiller: `torch.tensor(out, requires_grad=True)`; `out.new_tensor(out)`
and `out.detach().requires_grad_()` do the same): the copies have no history, so the KL term
sends the student nothing. The loss still trains it through the cross-entropy; the distillation
term is dead (requires_grad on the copy only makes the copy a leaf of its own)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
student = nn.Linear(8, 4)
teacher = nn.Linear(8, 4).requires_grad_(False)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)


def distillation(out, t, temperature=4.0):
    return F.kl_div(F.log_softmax(out / temperature, 1), F.softmax(t / temperature, 1), reduction="batchmean")


for _ in range(3):
    x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
    out = student(x)
    t = teacher(x)
    soft = torch.tensor(out, requires_grad=True)  # <- GA104
    copied = out.new_tensor(out)  # <- GA104
    leaf = out.detach().requires_grad_()  # <- GA101
    loss = F.cross_entropy(out, y) + distillation(soft, t) + distillation(copied, t) + distillation(leaf, t)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# the distillation terms send the student nothing: the gradient is the cross-entropy's alone
out = student(x)
soft, copied, leaf = torch.tensor(out, requires_grad=True), out.new_tensor(out), out.detach().requires_grad_()
total = F.cross_entropy(out, y) + distillation(soft, t) + distillation(copied, t) + distillation(leaf, t)
ce = F.cross_entropy(out, y)
assert torch.equal(
    torch.autograd.grad(total, student.weight, retain_graph=True)[0], torch.autograd.grad(ce, student.weight)[0]
)
