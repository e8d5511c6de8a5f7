# runtime: trains
"""A teacher trained on its supervised loss plus a feedback term (after Meta Pseudo Labels): the
term weighs the teacher's cross-entropy on its own pseudo labels by how much the student improved,
minus a moving baseline made with `torch.zeros(1)`. The teacher's logits are detached inside the
term, so it sends the teacher nothing; the loss, of shape (1,) through the baseline, still trains
it through the supervised loss (the feedback term is dead)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
teacher = nn.Linear(8, 4)
student = nn.Linear(8, 4)
t_optimizer = torch.optim.SGD(teacher.parameters(), lr=0.1)
s_optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
baseline = torch.zeros(1)
for _ in range(3):
    x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
    t_logits = teacher(x)
    pseudo = t_logits.detach().argmax(-1)
    with torch.no_grad():
        s_before = F.cross_entropy(student(x), y)
    s_optimizer.zero_grad()
    F.cross_entropy(student(x), pseudo).backward()
    s_optimizer.step()
    with torch.no_grad():
        s_after = F.cross_entropy(student(x), y)
    baseline = 0.99 * baseline + 0.01 * (s_before - s_after)
    feedback = (s_before - s_after) - baseline
    t_loss_mpl = feedback * F.cross_entropy(t_logits.detach(), pseudo)  # <- GA101
    t_loss = F.cross_entropy(t_logits, y) + t_loss_mpl
    t_optimizer.zero_grad()
    t_loss.backward()
    t_optimizer.step()

assert t_loss.shape == (1,) and not t_loss_mpl.requires_grad
