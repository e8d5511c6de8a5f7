# runtime: no-update: w
"""A weight started from values read off data (`torch.tensor(init, requires_grad=True)`) and used
in the forward computation, but the optimizer holds only the model: `w` gets a gradient and never
changes. Made from data like an input leaf, it is not given to the model as its input: a weight."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(4, 3)
init = np.random.default_rng(0).normal(size=(4, 4))
w = torch.tensor(init, requires_grad=True, dtype=torch.float)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # <- GA108
x = torch.randn(8, 4)
y = torch.randint(0, 3, (8,))
for _ in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x @ w), y)
    loss.backward()
    optimizer.step()
