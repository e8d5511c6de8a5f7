# runtime: trains
"""MAML with functional fast weights: the inner step builds new tensors from autograd.grad with
create_graph=True (no in-place update of the leaves), the outer loss trains the meta-parameters."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
w1 = torch.nn.Parameter(torch.randn(1, 32) * 0.5)
b1 = torch.nn.Parameter(torch.zeros(32))
w2 = torch.nn.Parameter(torch.randn(32, 1) * 0.1)
b2 = torch.nn.Parameter(torch.zeros(1))
params = [w1, b1, w2, b2]
meta_opt = torch.optim.Adam(params, lr=1e-3)


def forward(x, p):
    return torch.tanh(x @ p[0] + p[1]) @ p[2] + p[3]


for it in range(3):
    meta_opt.zero_grad()
    x_s, x_q = torch.rand(10, 1) * 10 - 5, torch.rand(10, 1) * 10 - 5
    amp = torch.rand(1) * 4 + 1
    support_loss = F.mse_loss(forward(x_s, params), amp * torch.sin(x_s))
    grads = torch.autograd.grad(support_loss, params, create_graph=True)
    fast = [p - 0.01 * g for p, g in zip(params, grads)]
    query_loss = F.mse_loss(forward(x_q, fast), amp * torch.sin(x_q))
    query_loss.backward()
    meta_opt.step()
