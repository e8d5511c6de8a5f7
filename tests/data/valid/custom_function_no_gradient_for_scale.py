# runtime: skip (the scale requires grad yet backward gives it none: it never changes, by design)
"""A gradient-reversal layer (domain-adversarial training) written as a custom autograd Function
whose backward returns None for its scale: the scale is a tensor that requires grad, yet backward
gives it no gradient, so leaving it out of the optimizer loses nothing; the features and the heads
train through the reversed gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(scale)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        (scale,) = ctx.saved_tensors
        return grad_output.neg() * scale, None


features = nn.Linear(6, 8)
label_head = nn.Linear(8, 3)
domain_head = nn.Linear(8, 2)
scale = torch.tensor(0.5, requires_grad=True)
params = list(features.parameters()) + list(label_head.parameters()) + list(domain_head.parameters())
opt = torch.optim.SGD(params, lr=0.1)
for step in range(3):
    x, y, d = torch.randn(16, 6), torch.randint(0, 3, (16,)), torch.randint(0, 2, (16,))
    h = features(x)
    loss = F.cross_entropy(label_head(h), y) + F.cross_entropy(domain_head(GradReverse.apply(h, scale)), d)
    opt.zero_grad()
    loss.backward()
    opt.step()
