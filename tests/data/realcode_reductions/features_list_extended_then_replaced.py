# reduction-of: overhaul-distillation@HEAD Segmentation/distiller.py:70 GA110
# false: GA110
"""Feature distillation that replaces each student feature in its list by the connector's output.

The real code (Overhaul of Feature Distillation, segmentation): the student's `extract_feature`
returns a Python list of features (`feats, x, low = self.backbone.extract_feature(input)`, then
`feats += feat` for the ASPP's and the decoder's; the backbone is chosen by a name given on the
command line, among backbones some of which have no `extract_feature`, so what the backbone's call
returns is not known until `feats += feat` adds a list to it: a tensor plus a list raises), and the distiller's forward runs
`s_feats[i] = self.Connectors[i](s_feats[i])` for each feature before the loss on it.

False finding: GA110 confirmed at `s_feats[i] = ...` ("in-place change of a tensor that `linear`
saved for backward"): the assignment rebinds an element of a Python list; no tensor the
connector's convolution saved is written.

Verified with torch 2.13 (CPU): backward runs, every student and connector weight changes after
the step. Prints OK.
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Conv2d(3, 4, 3, padding=1)
        self.l2 = nn.Conv2d(4, 4, 3, padding=1)

    def extract_feature(self, x):
        f1 = self.l1(x)
        f2 = self.l2(f1)
        return [f1, f2], F.relu(f2), F.relu(f1)


def build_backbone(name):
    return globals()[name]()  # a backbone class named on the command line


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)

    def extract_feature(self, x):
        feat = self.conv(x)
        return [feat], F.relu(feat)


class Net(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = build_backbone(backbone)
        self.head = Head()

    def extract_feature(self, x):
        feats, x, low = self.backbone.extract_feature(x)
        feat, x = self.head.extract_feature(x)
        feats += feat
        return feats, x


class Distiller(nn.Module):
    def __init__(self, t_net, s_net):
        super().__init__()
        self.connectors = nn.ModuleList([nn.Conv2d(4, 4, 1, bias=False) for _ in range(3)])
        self.t_net = t_net
        self.s_net = s_net

    def forward(self, x):
        t_feats, t_out = self.t_net.extract_feature(x)
        s_feats, s_out = self.s_net.extract_feature(x)
        loss_distill = 0
        for i in range(len(t_feats)):
            s_feats[i] = self.connectors[i](s_feats[i])
            loss_distill += F.mse_loss(s_feats[i], t_feats[i].detach())
        return s_out, loss_distill


teacher, student = Net("Backbone"), Net(sys.argv[1] if len(sys.argv) > 1 else "Backbone")
d_net = Distiller(teacher, student)
optimizer = torch.optim.SGD(list(student.parameters()) + list(d_net.connectors.parameters()), lr=0.1)
before = [p.detach().clone() for p in optimizer.param_groups[0]["params"]]
x = torch.randn(2, 3, 8, 8)
y = torch.randn(2, 4, 8, 8)
for _ in range(2):
    optimizer.zero_grad()
    out, loss_distill = d_net(x)
    loss = F.mse_loss(out, y) + loss_distill.sum()
    loss.backward()
    optimizer.step()
assert all(not torch.equal(b, p) for b, p in zip(before, optimizer.param_groups[0]["params"]))
print("OK")
