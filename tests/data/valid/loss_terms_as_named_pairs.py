# runtime: trains
"""A controller in neural_clbf's style: each loss helper returns a list of `(name, term)` pairs,
the training step gathers them with `component_losses.update(pairs)` and sums the values of the
dict into the loss it backpropagates. Every term reaches backward(): none is a loss computed and
left out."""
import torch
import torch.nn as nn


class Controller(nn.Module):
    def __init__(self):
        super().__init__()
        self.V = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))

    def boundary_loss(self, x):
        loss = []
        loss.append(("goal", self.V(x * 0.0).pow(2).mean()))
        loss.append(("safe", torch.relu(self.V(x) - 1.0).mean()))
        return loss

    def descent_loss(self, x):
        return [("descent", torch.relu(self.V(x + 0.1) - self.V(x)).mean())]

    def training_step(self, x):
        component_losses = {}
        component_losses.update(self.boundary_loss(x))
        component_losses.update(self.descent_loss(x))
        total_loss = torch.tensor(0.0)
        for _, loss_value in component_losses.items():
            total_loss = total_loss + loss_value
        return total_loss


torch.manual_seed(0)
model = Controller()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    loss = model.training_step(torch.randn(32, 2))
    opt.zero_grad()
    loss.backward()
    opt.step()
