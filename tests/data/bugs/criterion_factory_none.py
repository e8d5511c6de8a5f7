# runtime: error: grad can be implicitly created only for scalar outputs
"""The criterion comes from a config-driven factory that builds it with reduction='none' (needed
by the evaluation code); the training loop backpropagates it unreduced."""
import torch
import torch.nn as nn

CONFIG = {"loss": "bce", "lr": 1e-2, "epochs": 2}


def build_criterion(name):
    if name == "bce":
        return nn.BCEWithLogitsLoss(reduction="none")
    return nn.MSELoss(reduction="none")


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
criterion = build_criterion(CONFIG["loss"])
optimizer = torch.optim.Adam(model.parameters(), lr=CONFIG["lr"])
for epoch in range(CONFIG["epochs"]):
    x, y = torch.randn(10, 6), torch.randint(0, 2, (10, 1)).float()
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()  # <- GA305
    optimizer.step()
