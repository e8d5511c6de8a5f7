# reduction-of: Deep-Reinforcement-Learning-Hands-On-Second-Edition@d5a421d63c6d Chapter21/mcar_ppo.py:137 GA108
# false: GA108
"""Random network distillation, built only when an option asks for it: the module holds a fixed
random reference network, put in eval mode where it is built, and a predictor trained to match it;
only the predictor is given to an optimizer.

The real code (Deep-RL-Hands-On, chapter 21): `if args.params == 'distill': net_distill =
MountainCarNetDistillery(...)`, whose `__init__` builds `self.ref_net` and calls
`self.ref_net.train(False)`; `opt_distill = Adam(net_distill.trn_net.parameters())`.

False finding: GA108 confirmed at the optimizer ("parameters of `net_distill.ref_net` feed the loss
but are in no param group ... they never train"): a network the code puts in eval mode and gives to
no optimizer is a fixed one the loss is measured through, which gradaudit already accepts; here the
eval mode was taken as uncertain because the network was built under a condition, though no path
has that network without the call.

Verified with torch 2.13 (CPU): the reference network stays fixed, the predictor's distillation error
falls. Prints OK.
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Distillery(nn.Module):
    def __init__(self, obs_size, hid_size=32):
        super().__init__()
        self.ref_net = nn.Sequential(nn.Linear(obs_size, hid_size), nn.ReLU(), nn.Linear(hid_size, 1))
        self.ref_net.train(False)
        self.trn_net = nn.Sequential(nn.Linear(obs_size, hid_size), nn.ReLU(), nn.Linear(hid_size, 1))

    def loss(self, obs):
        return F.mse_loss(self.trn_net(obs), self.ref_net(obs))


net_distill = None
if "--plain" not in sys.argv:
    net_distill = Distillery(2)
if net_distill is not None:
    opt = torch.optim.Adam(net_distill.trn_net.parameters(), lr=1e-2)
    ref = [p.detach().clone() for p in net_distill.ref_net.parameters()]
    obs = torch.randn(256, 2)
    first = None
    for _ in range(200):
        opt.zero_grad()
        loss = net_distill.loss(obs)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert all(torch.equal(a, b) for a, b in zip(ref, net_distill.ref_net.parameters()))
    assert loss.item() < first
print("OK")
