# reduction-of: Deep-Reinforcement-Learning-Hands-On-Second-Edition@d5a421d63c6d Chapter13/adhoc/distr_grad.py:50 GA201
# false: GA201
# quiet: GA201
"""Gradients computed on a copy of the network and handed over by assignment (the pattern of
distributed or asynchronous training): every iteration the copy is synced, cleared and
backpropagated, its gradients are read out, and each parameter of the trained network gets
`p.grad = g` before `optimizer.step()`. The trained network's `zero_grad()` is never called.

False finding: GA201 suspicious at `optimizer.step()` ("nothing in the loop clears the gradients"):
an assignment replaces `.grad` as a whole, so each step applies that iteration's gradient; nothing
from an earlier iteration is left to add to.

Verified with torch 2.13 (CPU): at every step each parameter's .grad equals the copy's gradient of
that iteration. Prints OK.
"""
import pickle

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
net = nn.Linear(3, 1)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
data = [(torch.randn(1, 3), torch.randn(1, 1)) for _ in range(4)]
for epoch in range(3):
    for x, y in data:
        copy = pickle.loads(pickle.dumps(net))  # synced from the trained network
        copy.zero_grad()
        loss = F.mse_loss(copy(x), y)
        loss.backward()
        grads = [p.grad.detach().numpy() for p in copy.parameters()]
        for g, p in zip(grads, net.parameters()):
            p.grad = torch.from_numpy(g)
        for g, p in zip(grads, net.parameters()):
            assert torch.equal(p.grad, torch.from_numpy(g))
        optimizer.step()
print("OK")
