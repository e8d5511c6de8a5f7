# runtime: no-update: model.mix
"""Two reconstruction losses blended by a learned mixing weight; the weight is read with float()
when building the total, so the mixing parameter never trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.mix = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return self.net(x)


def batches(n):
    for _ in range(n):
        x = torch.randn(8, 4)
        yield x, x[:, :2] * 3


def blended(l1, l2, mix_logit):
    w = float(torch.sigmoid(mix_logit))  # <- GA103
    return w * l1 + (1 - w) * l2


torch.manual_seed(0)
model = Model()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for x, y in batches(4):
    pred = model(x)
    loss = blended(F.mse_loss(pred, y), F.l1_loss(pred, y), model.mix)
    opt.zero_grad()
    loss.backward()
    opt.step()
