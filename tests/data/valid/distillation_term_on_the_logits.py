# runtime: trains
"""The valid look-alike of distillation_term_rewrapped_as_a_leaf: the KL term takes the student's
logits themselves; the tensors made with `new_tensor` and `torch.tensor(..., requires_grad=True)`
are built from data (class weights, a temperature learned by an optimizer of its own), not from
values that carry gradient."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
student = nn.Linear(8, 4)
teacher = nn.Linear(8, 4).requires_grad_(False)
log_temperature = torch.tensor(1.0, requires_grad=True)
optimizer = torch.optim.SGD([*student.parameters(), log_temperature], lr=0.1)

for _ in range(3):
    x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
    out = student(x)
    t = teacher(x)
    weights = out.new_tensor([1.0, 2.0, 1.0, 0.5])
    temperature = log_temperature.exp()
    kd = F.kl_div(F.log_softmax(out / temperature, 1), F.softmax(t / temperature, 1), reduction="batchmean")
    loss = F.cross_entropy(out, y, weight=weights) + kd
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
