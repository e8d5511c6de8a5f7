# runtime: trains
"""Full-batch LBFGS: zero_grad, forward and backward happen inside the closure that step() calls."""
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.linspace(-2, 2, 50).unsqueeze(1)
y = x ** 3 - x
model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5)


def closure():
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    return loss


for it in range(3):
    loss = optimizer.step(closure)
    print(it, loss.item())
