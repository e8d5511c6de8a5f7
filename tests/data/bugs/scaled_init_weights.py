# runtime: error: can't optimize a non-leaf Tensor
"""A two-layer network with hand-made weights, initialised with a 1/sqrt(fan_in) scale applied
after requires_grad=True: the names hold non-leaf tensors and Adam refuses them."""
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)
n_in, n_hidden, n_out = 20, 32, 3
W1 = torch.randn(n_in, n_hidden, requires_grad=True) / math.sqrt(n_in)  # <- GA113
b1 = torch.zeros(n_hidden, requires_grad=True)
W2 = torch.randn(n_hidden, n_out, requires_grad=True) / math.sqrt(n_hidden)  # <- GA113
b2 = torch.zeros(n_out, requires_grad=True)
params = [W1, b1, W2, b2]
optimizer = torch.optim.Adam(params, lr=1e-3)


def forward(x):
    return F.relu(x @ W1 + b1) @ W2 + b2


for step in range(10):
    x = torch.randn(16, n_in)
    y = torch.randint(0, n_out, (16,))
    loss = F.cross_entropy(forward(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
