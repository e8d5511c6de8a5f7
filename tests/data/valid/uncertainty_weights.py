# runtime: trains
"""Multi-task loss weighting with learned log-variances kept as tensors: exp(-log_var) scales each
task loss (exp of a learned log-scale is bounded in practice), float() only for logging."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
net = nn.Linear(4, 3)
log_vars = nn.Parameter(torch.zeros(2))
opt = torch.optim.Adam([*net.parameters(), log_vars], lr=1e-2)
for step in range(3):
    x = torch.randn(8, 4)
    out = net(x)
    l_reg = F.mse_loss(out[:, 0], x.sum(1))
    l_cls = F.cross_entropy(out[:, 1:], (x[:, 0] > 0).long())
    loss = torch.exp(-log_vars[0]) * l_reg + log_vars[0] + torch.exp(-log_vars[1]) * l_cls + log_vars[1]
    opt.zero_grad()
    loss.backward()
    opt.step()
    weights = [float(torch.exp(-v)) for v in log_vars]
