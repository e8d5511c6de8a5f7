# reduction-of: Knowledge-Distillation-Zoo@65470c846c13 kd_losses/pkt.py:26 GA403
# false: GA402, GA403
# quiet: GA402, GA403
"""A distillation trainer picks its criterion by a mode (`if mode == "pkt": criterion = PKT() elif
mode == "fsp": criterion = FSP()`) and calls it in the step by the same mode: the FSP criterion
with four feature maps, every other one with the student's and the teacher's feature
(`criterion(feat_s, feat_t.detach())`). PKT's `forward(feat_s, feat_t, eps=1e-6)` divides by
`norm + eps` and takes the root of the detached teacher's squared norm.

False findings: GA403 at the teacher's root (and, in the published code, GA402 at both divisions by
`norm + eps`). The engine joined the criteria and ran PKT's forward at the
four-argument call too, binding a student's map to `eps` and to `feat_t`. PKT cannot take four
arguments (TypeError): a callee among several joined ones that cannot take a call's arguments is
not the one that call runs. With two arguments `eps` is its default, and the teacher's feature
carries no gradient.

Verified with torch 2.13 (CPU): PKT raises TypeError on four arguments; in "pkt" mode the loss and
every gradient are finite. Prints OK.
"""
import sys

import torch
import torch.nn as nn


class PKT(nn.Module):
    def forward(self, feat_s, feat_t, eps=1e-6):
        feat_s_norm = torch.sqrt(torch.sum(feat_s**2, dim=1, keepdim=True) + eps)
        feat_s = feat_s / (feat_s_norm + eps)
        feat_t_norm = torch.sqrt(torch.sum(feat_t**2, dim=1, keepdim=True))
        feat_t = feat_t / (feat_t_norm + eps)
        sim_s = (feat_s @ feat_s.t() + 1.0) / 2.0
        sim_t = (feat_t @ feat_t.t() + 1.0) / 2.0
        p_s = sim_s / sim_s.sum(dim=1, keepdim=True)
        p_t = sim_t / sim_t.sum(dim=1, keepdim=True)
        return torch.mean(p_t * torch.log((p_t + eps) / (p_s + eps)))


class FSP(nn.Module):
    def forward(self, a_s, b_s, a_t, b_t):
        return (a_s.t() @ b_s - a_t.t() @ b_t).pow(2).mean()


def main(mode):
    torch.manual_seed(0)
    student = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
    teacher = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
    if mode == "pkt":
        criterion = PKT()
    elif mode == "fsp":
        criterion = FSP()
    else:
        raise ValueError(mode)
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    for _ in range(3):
        x = torch.randn(16, 6)
        feat_s = student(x)
        with torch.no_grad():
            feat_t = teacher(x)
        if mode == "fsp":
            loss = criterion(feat_s, feat_s * 2, feat_t.detach(), feat_t.detach() * 2)
        else:
            loss = criterion(feat_s, feat_t.detach())
        opt.zero_grad()
        loss.backward()
        opt.step()
        assert torch.isfinite(loss) and all(torch.isfinite(p.grad).all() for p in student.parameters())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "pkt")
    main("fsp")
    try:
        PKT()(torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 3))
    except TypeError:
        print("OK")
