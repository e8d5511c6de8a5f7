# reduction-of: Deep-Reinforcement-Learning-Hands-On-Second-Edition@d5a421d63c6d Chapter13/adhoc/distr_grad.py:50 GA201
# false: GA201
"""Gradients computed on a copy of the network, then handed to the network by assignment before
its optimizer steps (a sketch of distributed gradient computation).

The real code (Deep-RL-Hands-On, chapter 13): `tgt_net.target_model.zero_grad()`, a loss through
`tgt_net.target_model`, `backward()`, then `param.grad = torch.from_numpy(grad)` for each parameter
of `net`, then `optimizer.step()` on `net`'s optimizer. The copy comes from ptan's `TargetNet`.

False finding: GA201 confirmed at `optimizer.step()` ("nothing in the loop clears the gradients of
`net`: each backward() adds to the previous ones"): the backward sends no gradient to `net` at all
(it runs through the copy), and `net`'s gradients are replaced, not added to, at every iteration.
With the copy made by code the engine cannot read, that the backward does not reach `net` is not
shown either: suspicious at most.

Verified with torch 2.13 (CPU): after each assignment, `net`'s gradients equal that iteration's
gradients of the copy exactly. Prints OK.
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(1, 1)
target_model = copy.deepcopy(net)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
for it in range(3):
    for v in [1.0, 2.0, 3.0]:
        target_model.load_state_dict(net.state_dict())
        target_model.zero_grad()
        loss_v = F.mse_loss(target_model(torch.tensor([v])), torch.tensor([2.5 * v + 10]))
        loss_v.backward()
        grads = [p.grad.clone() for p in target_model.parameters()]
        for grad, param in zip(grads, net.parameters()):
            param.grad = grad
        assert all(torch.equal(p.grad, g) for p, g in zip(net.parameters(), grads))
        optimizer.step()
print("OK")
