# runtime: trains
"""Distillation run where the KL term is computed for monitoring only (the ablation trains on the
labels): every student parameter still gets gradient from the cross-entropy."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)).eval()
student = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.Adam(student.parameters(), lr=1e-2)
log = []
for step in range(3):
    x, y = torch.randn(12, 6), torch.randint(0, 3, (12,))
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    ce_loss = F.cross_entropy(s_logits, y)
    kd_loss = F.kl_div(F.log_softmax(s_logits, -1), F.softmax(t_logits, -1), reduction="batchmean")
    opt.zero_grad()
    ce_loss.backward()
    opt.step()
    log.append((ce_loss.item(), kd_loss.item()))
