# reduction-of: mdistiller@a08d46f10d61 mdistiller/distillers/PKT.py:13 GA403
# false: GA403
# quiet: GA403
"""A distiller module whose `forward_train` (called by the base class's `forward`) computes the
teacher's features under no_grad and passes them, with the student's, to a loss function of the same
file, `pkt_loss(f_s, f_t)`, which takes a root of each one's sum of squares. No training step of the
checked code reaches the distiller (a registry picks it from the configuration).

False finding: GA403 suspicious on the teacher's `torch.sqrt(torch.sum(f_t**2, ...))`: "seen
running `pkt_loss` on its own with inputs that require grad". The only caller gives it a teacher
feature made under no_grad: no gradient goes through that root. The loss is now run inside the
method that calls it. Verified with torch 2.13 (CPU): the teacher gets no gradient and the student's
gradients are finite. Prints OK.
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def pkt_loss(f_s, f_t, eps=1e-7):
    output_net_norm = f_s.norm(dim=1, keepdim=True)  # the student's side through torch's norm here
    f_s = f_s / (output_net_norm + eps)
    target_net_norm = torch.sqrt(torch.sum(f_t**2, dim=1, keepdim=True))
    f_t = f_t / (target_net_norm + eps)
    model_similarity = (torch.mm(f_s, f_s.transpose(0, 1)) + 1.0) / 2.0
    target_similarity = (torch.mm(f_t, f_t.transpose(0, 1)) + 1.0) / 2.0
    model_similarity = model_similarity / torch.sum(model_similarity, dim=1, keepdim=True)
    target_similarity = target_similarity / torch.sum(target_similarity, dim=1, keepdim=True)
    return torch.mean(target_similarity * torch.log((target_similarity + eps) / (model_similarity + eps)))


class Distiller(nn.Module):
    def __init__(self, student, teacher):
        super().__init__()
        self.student = student
        self.teacher = teacher

    def forward(self, **kwargs):
        return self.forward_train(**kwargs)


class PKT(Distiller):
    def forward_train(self, image, target, **kwargs):
        logits_student, feature_student = self.student(image)
        with torch.no_grad():
            _, feature_teacher = self.teacher(image)
        loss_ce = F.cross_entropy(logits_student, target)
        loss_feat = 30000.0 * pkt_loss(feature_student, feature_teacher)
        return logits_student, {"loss_ce": loss_ce, "loss_kd": loss_feat}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16))
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        feat = self.body(x)
        return self.fc(feat), feat


# picked by name from a registry at run time: the engine runs the distiller's units alone
distillers = vars(sys.modules[__name__])
torch.manual_seed(0)
distiller = distillers["PKT"](Net(), Net())
logits, losses = distiller(image=torch.randn(5, 8), target=torch.randint(0, 4, (5,)))
sum(losses.values()).backward()
assert all(p.grad is None for p in distiller.teacher.parameters())
assert all(torch.isfinite(p.grad).all() for p in distiller.student.parameters())
print("OK")
