# runtime: trains
"""A forward written as a function of the model's parameter dict with torch.func.functional_call,
the dict's values given to a regular optimizer."""
import torch
import torch.nn as nn
from torch.func import functional_call

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
params = dict(model.named_parameters())
opt = torch.optim.Adam(params.values(), lr=1e-2)
for step in range(3):
    x, y = torch.randn(10, 3), torch.randn(10, 1)
    loss = nn.functional.mse_loss(functional_call(model, params, (x,)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
