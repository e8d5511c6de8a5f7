# runtime: trains
"""Distillation from a project folder: nets.py builds the student (blocks in a ModuleList) and a
frozen teacher, losses.py holds a guarded KL and a weighted cross-entropy."""
import torch

from losses import kl_div_loss, weighted_ce
from nets import Student, mlp


def distill(student, teacher, optimizer, scheduler, batches, class_weights, alpha=0.5):
    teacher.eval()
    for x, y in batches:
        with torch.no_grad():
            t_logits = teacher(x)
        s_logits = student(x)
        loss = alpha * kl_div_loss(s_logits, t_logits) + (1 - alpha) * weighted_ce(s_logits, y, class_weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    teacher = mlp(8, 32, 4)
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = Student()
    optimizer = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=6)
    batches = [(torch.randn(8, 8), torch.randint(0, 4, (8,))) for _ in range(3)]
    for epoch in range(2):
        distill(student, teacher, optimizer, scheduler, batches, torch.tensor([1.0, 2.0, 1.0, 0.5]))
