# runtime: trains
"""Attention distillation whose transfer terms are detached and weighted by a setting
(`criterionAT(s, t).detach() * opt.beta1`, after NAD's first release): each term is a constant in
the student's loss, so it only shifts the loss value; the student still trains, on the
classification term alone. The weights come from the command line, so the engine does not know
them as numbers: a factor not known as a tensor keeps the term scalar."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class AT(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, fm_s, fm_t):
        return F.mse_loss(self.attention_map(fm_s), self.attention_map(fm_t))

    def attention_map(self, fm, eps=1e-6):
        am = torch.pow(torch.abs(fm), self.p).sum(dim=1, keepdim=True)
        return am / (torch.norm(am, dim=(2, 3), keepdim=True) + eps)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 4, 3, padding=1)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        a1 = F.relu(self.c1(x))
        a2 = F.relu(self.c2(a1))
        return a1, a2, self.fc(a2.mean((2, 3)))


def train_step(opt, loader, nets, optimizer, criterions):
    snet, tnet = nets["snet"], nets["tnet"]
    criterion_cls, criterion_at = criterions["cls"], criterions["at"]
    snet.train()
    for img, target in loader:
        a1_s, a2_s, out_s = snet(img)
        a1_t, a2_t, _ = tnet(img)
        cls_loss = criterion_cls(out_s, target)
        at2_loss = criterion_at(a2_s, a2_t).detach() * opt.beta2  # <- GA101
        at1_loss = criterion_at(a1_s, a1_t).detach() * opt.beta1  # <- GA101
        loss = at1_loss + at2_loss + cls_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


parser = argparse.ArgumentParser()
parser.add_argument("--beta1", type=float, default=500.0)
parser.add_argument("--beta2", type=float, default=1000.0)
opt = parser.parse_args([])
torch.manual_seed(0)
student, teacher = Net(), Net().eval()
for p in teacher.parameters():
    p.requires_grad = False
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
data = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))) for _ in range(3)]
train_step(opt, data, {"snet": student, "tnet": teacher}, optimizer, {"cls": nn.CrossEntropyLoss(), "at": AT(2.0)})

# the attention terms send the student nothing: they do not require grad, only the class term does
img, target = data[0]
a1_s, a2_s, out_s = student(img)
a1_t, a2_t, _ = teacher(img)
assert not (AT(2.0)(a1_s, a1_t).detach() * opt.beta1).requires_grad
assert nn.CrossEntropyLoss()(out_s, target).requires_grad
