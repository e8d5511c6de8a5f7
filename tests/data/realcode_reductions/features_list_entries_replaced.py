# reduction-of: overhaul-distillation@76344a84a7ce CIFAR-100/distiller.py:68 GA110
# false: GA110
# quiet: GA110
"""A feature distiller whose networks' `extract_feature` (a method of networks the engine does not
see built) returns a Python list of feature maps; the distiller replaces each entry by its
connector's output, `s_feats[i] = self.Connectors[i](s_feats[i])`, and sums a margin loss over them.

False finding: GA110 suspicious: "in-place change of a tensor that `linear` saved for backward". The
store replaces an element of a list; no tensor is written in place. Verified with torch 2.13 (CPU):
the backward runs and the connectors and the student get gradient. Prints OK.
"""
import sys

import torch
import torch.nn as nn


def distillation_loss(source, target, margin):
    loss = (source - target) ** 2 * ((source > target) | (target > margin)).float()
    return torch.abs(loss).sum()


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList([nn.Conv2d(3 if i == 0 else 8, 8, 3, padding=1) for i in range(3)])
        self.fc = nn.Linear(8, 10)

    def extract_feature(self, x, preReLU=False):
        feats = []
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
            x = torch.relu(x)
        return feats, self.fc(x.mean((2, 3)))


class Distiller(nn.Module):
    def __init__(self, t_net, s_net):
        super().__init__()
        self.Connectors = nn.ModuleList([nn.Sequential(nn.Conv2d(8, 8, 1), nn.BatchNorm2d(8)) for _ in range(3)])
        self.t_net = t_net
        self.s_net = s_net

    def forward(self, x):
        t_feats, t_out = self.t_net.extract_feature(x, preReLU=True)
        s_feats, s_out = self.s_net.extract_feature(x, preReLU=True)
        feat_num = len(t_feats)
        loss_distill = 0
        for i in range(feat_num):
            s_feats[i] = self.Connectors[i](s_feats[i])
            loss_distill += distillation_loss(s_feats[i], t_feats[i].detach(), 0.5) / 2 ** (feat_num - i - 1)
        return s_out, loss_distill


# built by name at run time, as the repository's model factory does: the engine runs the distiller alone
make = vars(sys.modules[__name__])["Backbone"]
torch.manual_seed(0)
distiller = Distiller(make(), make())
s_out, loss = distiller(torch.randn(2, 3, 8, 8))
(loss + s_out.sum()).backward()
assert all(p.grad is not None for p in distiller.Connectors.parameters())
assert all(p.grad is not None for p in distiller.s_net.stages.parameters())
print("OK")
