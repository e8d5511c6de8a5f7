# runtime: graph-kept: epoch_losses
"""Per-epoch loss logging that appends the loss tensors and averages them with torch.stack at the
end of the epoch: the whole epoch's graphs stay alive until then."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    epoch_losses = []
    for _ in range(4):
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        epoch_losses.append(loss)  # <- GA303
    print(epoch, torch.stack(epoch_losses).mean().item())
