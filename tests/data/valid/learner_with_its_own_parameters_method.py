"""A MAML learner (after MAML-Pytorch): the network keeps its weights in an `nn.ParameterList` built
in a loop over a configuration and defines its own `parameters()`, which returns that list; the
meta-learner's optimizer is built from it. The weights are in the optimizer."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Learner(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.vars = nn.ParameterList()
        for name, (d_out, d_in) in config:
            w = nn.Parameter(torch.ones(d_out, d_in))
            nn.init.kaiming_normal_(w)
            self.vars.append(w)
            self.vars.append(nn.Parameter(torch.zeros(d_out)))

    def forward(self, x, vars=None):
        vars = self.vars if vars is None else vars
        for i in range(0, len(vars), 2):
            x = F.linear(x, vars[i], vars[i + 1])
            if i + 2 < len(vars):
                x = F.relu(x)
        return x

    def parameters(self):
        return self.vars


class Meta(nn.Module):
    def __init__(self, config, meta_lr=1e-3):
        super().__init__()
        self.net = Learner(config)
        self.meta_optim = torch.optim.Adam(self.net.parameters(), lr=meta_lr)

    def forward(self, x_spt, y_spt, x_qry, y_qry, inner_lr=0.1):
        loss = F.cross_entropy(self.net(x_spt), y_spt)
        grad = torch.autograd.grad(loss, self.net.parameters())
        fast = [p - inner_lr * g for p, g in zip(self.net.parameters(), grad)]
        loss_q = F.cross_entropy(self.net(x_qry, fast), y_qry)
        self.meta_optim.zero_grad()
        loss_q.backward()
        self.meta_optim.step()
        return loss_q.item()


meta = Meta([("fc1", (16, 8)), ("fc2", (4, 16))])
for step in range(3):
    meta(torch.randn(10, 8), torch.randint(0, 4, (10,)), torch.randn(10, 8), torch.randint(0, 4, (10,)))
