# runtime: trains
"""Knowledge distillation: a frozen teacher under no_grad, a student trained on soft targets."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_mlp(d_in, width, d_out):
    return nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, d_out))


def distill_loss(student_logits, teacher_logits, labels, T=2.0, alpha=0.7):
    soft = F.kl_div(F.log_softmax(student_logits / T, dim=-1), F.softmax(teacher_logits / T, dim=-1),
                    reduction="batchmean") * T * T
    return alpha * soft + (1 - alpha) * F.cross_entropy(student_logits, labels)


torch.manual_seed(0)
teacher = make_mlp(12, 64, 5)
teacher.eval()
for p in teacher.parameters():
    p.requires_grad_(False)
student = make_mlp(12, 16, 5)
optimizer = torch.optim.AdamW(student.parameters(), lr=3e-3)
for step in range(4):
    x, y = torch.randn(16, 12), torch.randint(0, 5, (16,))
    with torch.no_grad():
        t_logits = teacher(x)
    loss = distill_loss(student(x), t_logits, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
