# runtime: error: a leaf Variable that requires grad is being used in an in-place operation
# confidence: suspicious
"""A trainer's per-batch state (after mrl's BatchState): the total loss starts as
`torch.tensor(0.0, requires_grad=True).to(device)` so that backward() always finds a graph, and the
loss terms are added into it in place. On a GPU `.to()` makes a copy, a non-leaf, and the sum works;
on the CPU it returns the leaf itself and the first `+=` raises. Suspicious: which one happens
depends on the device the run picks."""
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class BatchState:
    def __init__(self):
        self.loss = torch.tensor(0.0, requires_grad=True).to(device)


model = nn.Linear(6, 2).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(16, 6, device=device), torch.randn(16, 2, device=device)
    state = BatchState()
    state.loss += F.mse_loss(model(x), y)  # <- GA111
    opt.zero_grad()
    state.loss.backward()
    opt.step()
