# runtime: nonfinite
# confidence: suspicious
"""A Beta distribution head (after pytorch-forecasting's BetaDistributionLoss): the mean is a
sigmoid, and the shape is divided by `tanh(k * sqrt(mean * (1 - mean))) ** 2`. Once the sigmoid
saturates to exactly 0 or 1 in float32 (a logit beyond about 17 or -104), `mean * (1 - mean)` is 0:
the root's gradient is infinite there, and the divisor is 0, so the shape and the loss are inf or
NaN. A value that can be 0 stays one through sqrt and tanh (both 0 exactly where their input is).
Checked with torch 2.13 (CPU, a logit pushed to 40): the loss is NaN and so is every gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
net = nn.Linear(4, 2)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
with torch.no_grad():
    net.bias[0] = 40.0  # a saturated mean, as a confident model reaches
for step in range(3):
    x, y = torch.randn(8, 4), torch.rand(8).clamp(0.01, 0.99)
    out = net(x)
    mean = torch.sigmoid(out[:, 0])
    spread = torch.sqrt(mean * (1 - mean))  # <- GA403
    shape = F.softplus(out[:, 1]) / torch.tanh(2.0 * spread) ** 2  # <- GA402
    dist = torch.distributions.Beta(mean * shape, (1 - mean) * shape, validate_args=False)
    loss = -dist.log_prob(y).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
