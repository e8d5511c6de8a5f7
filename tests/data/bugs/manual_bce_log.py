# runtime: nonfinite
# confidence: suspicious
"""Binary cross-entropy written out by hand on sigmoid outputs: once a logit saturates the sigmoid
is exactly 0 or 1 in float32 and log(1 - p) is -inf."""
import torch
import torch.nn as nn


def bce(logits, y):
    p = torch.sigmoid(logits)
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()  # <- GA401, GA401


torch.manual_seed(0)
model = nn.Linear(30, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = 50 * torch.randn(32, 30)
    y = torch.randint(0, 2, (32, 1)).float()
    loss = bce(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
