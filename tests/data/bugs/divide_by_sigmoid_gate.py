# runtime: nonfinite
# confidence: suspicious
"""A feature rescaled by the inverse of its own sigmoid gate: one sigmoid, not a sum of many, so a
gate logit below about -104 makes it exactly 0 in float32 and the division inf (and the gradient
NaN). Its twin in the real-code reductions divides by the sum of the sigmoids over the channels,
which is 0 only if all of them underflow at once: quiet."""
import torch
import torch.nn as nn

torch.manual_seed(0)
feat = nn.Linear(4, 4)
gate = nn.Linear(4, 4)
with torch.no_grad():
    gate.bias.fill_(-120.0)
opt = torch.optim.SGD(list(feat.parameters()) + list(gate.parameters()), lr=0.1)
for _ in range(3):
    x = torch.randn(8, 4)
    out = feat(x) / torch.sigmoid(gate(x))  # <- GA402
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
