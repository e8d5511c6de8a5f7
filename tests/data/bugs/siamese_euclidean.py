# runtime: nonfinite
# confidence: suspicious
"""A siamese network with a contrastive loss on the Euclidean distance computed by hand; a pair
whose two views are identical (the flip augmentation left it unchanged) has distance 0, and the
sqrt's gradient there is infinite."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def augment(x):
    flip = torch.rand(x.size(0)) < 0.5
    return torch.where(flip[:, None], x.flip(1), x)


def contrastive_loss(a, b, same, margin=1.0):
    dist = torch.sqrt(((a - b) ** 2).sum(dim=1))  # <- GA403
    return (same * dist ** 2 + (1 - same) * F.relu(margin - dist) ** 2).mean()


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for step in range(3):
    x = torch.randn(16, 10)
    same = torch.ones(16)
    loss = contrastive_loss(net(x), net(augment(x)), same)
    opt.zero_grad()
    loss.backward()
    opt.step()
