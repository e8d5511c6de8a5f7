"""The same per-batch state with a plain zero as the start of the sum (no requires_grad): the
first `+=` makes it a tensor with the loss's graph, on any device."""
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class BatchState:
    def __init__(self):
        self.loss = torch.tensor(0.0).to(device)


model = nn.Linear(6, 2).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(16, 6, device=device), torch.randn(16, 2, device=device)
    state = BatchState()
    state.loss += F.mse_loss(model(x), y)
    state.loss += 1e-4 * model.weight.pow(2).sum()
    opt.zero_grad()
    state.loss.backward()
    opt.step()
