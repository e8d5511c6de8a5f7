# runtime: error: Trying to backward through the graph a second time
"""A loss backpropagated on one arm of a condition (every other step) and, scaled, once more after
it: on the steps where the first backward() ran, its graph is freed and the second raises."""
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for t in range(4):
    loss = net(torch.randn(2, 4)).tanh().sum()
    opt.zero_grad()
    if t % 2:
        loss.backward()
    total = loss * 2
    total.backward()  # <- GA301
    opt.step()
