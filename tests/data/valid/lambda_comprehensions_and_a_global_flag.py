# runtime: trains
"""Helpers written as lambdas around comprehensions, and a module flag set by a function through
`global`: neither changes what trains."""
import torch
import torch.nn as nn

SCALE = 1.0


def set_scale(value):
    global SCALE
    SCALE = value


mean_of = lambda xs: sum([x for x in xs]) / len(xs)  # noqa: E731
scaled = lambda xs: [x * SCALE for x in xs]  # noqa: E731
torch.manual_seed(0)
net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
set_scale(0.5)
for step in range(3):
    losses = scaled([net(torch.randn(2, 4)).pow(2).mean() for _ in range(2)])
    loss = mean_of(losses)
    opt.zero_grad()
    loss.backward()
    opt.step()


class Runner:
    def backward(self, *losses):
        for loss in losses:
            loss.backward()


def run_all(runner, *extra):
    runner.backward(*extra)  # a starred argument that may be empty


run_all(Runner())
