# runtime: trains
# confidence: suspicious
"""Gradient accumulation over 4 micro-batches without dividing the loss by 4: the accumulated
gradient is 4 times the gradient of the mean over the micro-batches (checked once, before the
first step), so every step is 4 times larger than the batch's own."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accum_steps = 4
data = [(torch.randn(8, 10), torch.randint(0, 3, (8,))) for _ in range(8)]
xs, ys = torch.cat([x for x, _ in data[:4]]), torch.cat([y for _, y in data[:4]])
full = torch.autograd.grad(F.cross_entropy(model(xs), ys), model[0].weight)[0]
optimizer.zero_grad()
for i, (x, y) in enumerate(data):
    loss = F.cross_entropy(model(x), y)
    loss.backward()  # <- GA205
    if (i + 1) % accum_steps == 0:
        if i + 1 == accum_steps:
            assert torch.allclose(model[0].weight.grad, accum_steps * full, atol=1e-5)
        optimizer.step()
        optimizer.zero_grad()
