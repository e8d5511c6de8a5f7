# runtime: graph-kept: outputs
"""A Lightning-style loop that keeps each training step's output for the end of the epoch, as a
dict holding the loss itself (`outputs.append({"loss": loss, "n": ...})`): every step's graph
stays alive until the epoch ends."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    outputs = []
    for _ in range(5):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        outputs.append({"loss": loss, "n": len(x)})  # <- GA303
    print(epoch, sum(o["loss"].item() * o["n"] for o in outputs) / sum(o["n"] for o in outputs))
