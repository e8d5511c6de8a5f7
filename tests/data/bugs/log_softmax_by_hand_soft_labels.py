# runtime: nonfinite
# confidence: suspicious
"""Cross-entropy against soft labels written by hand as `-(target * torch.log(softmax(logits)))`
over all the categories: on unnormalised inputs the logits spread by more than ~100, a
probability underflows to exactly 0 in float32, its log is -inf, and the loss is infinite (then NaN
once the step has written non-finite weights)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 5))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(16, 8) * 200
    target = F.one_hot(torch.randint(0, 5, (16,)), 5).float() * 0.9 + 0.02
    log_probs = torch.log(F.softmax(model(x), dim=1))  # <- GA401
    loss = -(target * log_probs).sum(1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
