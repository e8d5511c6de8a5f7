# runtime: trains
"""Peak regression from `aminmax(dim=...)`: the loss is on each curve's maximum only, the minimum
is logged. Both results of aminmax are values that carry gradient (unlike `max(dim=...)`, whose
second result is integer indices)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 20))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
X = torch.randn(64, 6)
peak = X[:, :2].abs().sum(1)

for step in range(20):
    opt.zero_grad()
    trough, top = model(X).aminmax(dim=1)
    loss = ((top - peak) ** 2).mean()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(step, loss.item(), trough.mean().item())
