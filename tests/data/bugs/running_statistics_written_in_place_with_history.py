# runtime: graph-kept: model.norm.stored_mean
"""A hand-written normalisation layer (after synsin's) that keeps running statistics in a buffer
and, in training, writes them in place from the batch mean, which still has its autograd history:
by slice assignment, `copy_` and `mul_().add_()`. Each write keeps the graph of the version it
overwrote (CopySlices, CopyBackwards), so every iteration's graph stays alive with the buffers."""
import torch
import torch.nn as nn


class RunningNorm(nn.Module):
    def __init__(self, channels, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.weight = nn.Parameter(torch.ones(1, channels))
        self.register_buffer("stored_mean", torch.zeros(channels))
        self.register_buffer("stored_sq", torch.zeros(channels))
        self.register_buffer("stored_max", torch.zeros(channels))

    def forward(self, x):
        mean = x.mean(0)
        if self.training:
            self.stored_mean[:] = self.stored_mean * (1 - self.momentum) + mean * self.momentum  # <- GA303
            self.stored_sq.copy_(self.stored_sq * (1 - self.momentum) + (x * x).mean(0) * self.momentum)  # <- GA303
            self.stored_max.mul_(1 - self.momentum).add_(x.amax(0) * self.momentum)  # <- GA303
            return (x - mean) * self.weight
        return (x - self.stored_mean) * self.weight


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 8, bias=False)  # a bias would cancel in the centring
        self.norm = RunningNorm(8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(self.norm(self.inp(x)))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(5):
    loss = model(torch.randn(16, 8)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
