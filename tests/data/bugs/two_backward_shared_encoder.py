# runtime: error: Trying to backward through the graph a second time
"""A two-task model whose losses are backpropagated one after the other to log each task's
gradient norm; the shared encoder's graph is freed by the first backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        self.task_a = nn.Linear(16, 3)
        self.task_b = nn.Linear(16, 1)

    def forward(self, x):
        h = self.encoder(x)
        return self.task_a(h), self.task_b(h).squeeze(-1)


def grad_norm(module):
    return sum(p.grad.norm() ** 2 for p in module.parameters() if p.grad is not None) ** 0.5


torch.manual_seed(0)
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for step in range(3):
    x, ya, yb = torch.randn(8, 8), torch.randint(0, 3, (8,)), torch.randn(8)
    out_a, out_b = net(x)
    opt.zero_grad()
    loss_a = F.cross_entropy(out_a, ya)
    loss_a.backward()
    norm_a = grad_norm(net.encoder)
    loss_b = F.mse_loss(out_b, yb)
    loss_b.backward()  # <- GA301
    opt.step()
