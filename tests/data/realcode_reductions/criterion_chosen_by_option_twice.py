# reduction-of: RepDistiller@b84f547c5db6 distiller_zoo/PKT.py:23 GA403
# false: GA403
# quiet: GA403
"""A distillation option chooses the criterion in one function and, in another, what is fed to it.

The real code (RepDistiller): train_student.py builds `criterion_kd = PKT()` when
`opt.distill == 'pkt'` and other criteria for other options; helper/loops.py's train_distill then
tests `opt.distill` again and calls `criterion_kd(f_s, f_t)` with the teacher's detached feature in
the pkt branch, or with a trainable embedding of it (`module_list[2](feat_t[-1])`) in the
correlation branch. PKT takes `torch.sqrt(torch.sum(target_net ** 2, dim=1))` of its second input.

False finding: GA403 suspicious at the root of the target's norm. With the pkt option the target is
the teacher's feature under no_grad, so that root's backward never runs; a trainable target reaches
PKT only by combining the pkt criterion with the correlation branch's input, which no run does. The
engine joins the two choices of the option because they are made in two functions.

Verified with torch 2.13 (CPU): with the pkt option and a zero teacher feature vector, every
gradient of the student stays finite. Prints OK.
"""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--distill", default="pkt", choices=["pkt", "correlation"])
opt = parser.parse_args([])


class PKTLike(nn.Module):
    def forward(self, f_s, f_t):
        s = f_s / torch.sqrt(torch.sum(f_s**2, dim=1, keepdim=True) + 1e-7)
        t = f_t / (torch.sqrt(torch.sum(f_t**2, dim=1, keepdim=True)) + 1e-7)
        return (s @ s.t() - t @ t.t()).pow(2).mean()


class Correlation(nn.Module):
    def forward(self, f_s, f_t):
        return (f_s - f_t).pow(2).mean()


def train(student, teacher, embed, criterion, optimizer, x):
    with torch.no_grad():
        feat_t = teacher(x)
    feat_t[0] = 0.0  # a zero teacher feature vector
    feat_s = student(x)
    if opt.distill == "pkt":
        loss = criterion(feat_s, feat_t.detach())
    else:
        loss = criterion(feat_s, embed(feat_t))
    optimizer.zero_grad()
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in student.parameters())
    optimizer.step()


torch.manual_seed(0)
student, teacher, embed = nn.Linear(8, 4), nn.Linear(8, 4), nn.Linear(4, 4)
if opt.distill == "pkt":
    criterion = PKTLike()
else:
    criterion = Correlation()
optimizer = torch.optim.SGD(list(student.parameters()) + list(embed.parameters()), lr=0.1)
for step in range(3):
    train(student, teacher, embed, criterion, optimizer, torch.randn(6, 8))
print("OK")
