# runtime: trains
"""A reference pass before training fills every .grad for a dump, then clears them by hand
(`p.grad = 0.0 * p.grad`, as llm.c's fix does) before the loop, which clears after each step: the
first step applies only its own gradients."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
x, y = torch.randn(8, 6), torch.randn(8, 2)
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
reference = {name: p.grad.clone() for name, p in model.named_parameters()}
for name, p in model.named_parameters():
    p.grad = 0.0 * p.grad

optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
