# runtime: no-update: meta.inner_lr
"""A Meta-SGD learner (after MAML-Pytorch's Learner): the network keeps its weights in an
`nn.ParameterList` and defines its own `parameters()`, which returns that list; the meta-learner
adds a learnable inner step size, `inner_lr`, used to make the fast weights. The meta-optimizer
is built from the network's parameters only: `inner_lr` gets a gradient through the query loss at
every step, and never changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Learner(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.vars = nn.ParameterList()
        for d_out, d_in in sizes:
            self.vars.append(nn.Parameter(torch.randn(d_out, d_in) * 0.1))
            self.vars.append(nn.Parameter(torch.zeros(d_out)))

    def forward(self, x, vars=None):
        vars = self.vars if vars is None else vars
        x = F.relu(F.linear(x, vars[0], vars[1]))
        return F.linear(x, vars[2], vars[3])

    def parameters(self):
        return self.vars


class Meta(nn.Module):
    def __init__(self, meta_lr=1e-3):
        super().__init__()
        self.net = Learner([(16, 8), (4, 16)])
        self.inner_lr = nn.Parameter(torch.tensor(0.1))
        self.meta_optim = torch.optim.Adam(self.net.parameters(), lr=meta_lr)  # <- GA108

    def forward(self, x_spt, y_spt, x_qry, y_qry):
        loss = F.cross_entropy(self.net(x_spt), y_spt)
        grad = torch.autograd.grad(loss, self.net.parameters(), create_graph=True)
        fast = [p - self.inner_lr * g for p, g in zip(self.net.parameters(), grad)]
        loss_q = F.cross_entropy(self.net(x_qry, fast), y_qry)
        self.meta_optim.zero_grad()
        loss_q.backward()
        self.meta_optim.step()
        return loss_q.item()


torch.manual_seed(0)
meta = Meta()
for step in range(3):
    meta(torch.randn(10, 8), torch.randint(0, 4, (10,)), torch.randn(10, 8), torch.randint(0, 4, (10,)))
