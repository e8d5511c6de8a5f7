# runtime: no-update: model.down
"""A tracker whose optimizer is built from per-part param groups (backbone, head) that leave out the
upsampling layer between them; training resumes from a checkpoint (`model.load_state_dict(...)`)
before the loop. The layer is on the loss path, gets gradient, and never changes."""
import io

import torch
import torch.nn as nn


class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(8, 16)
        self.down = nn.Linear(16, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(torch.relu(self.down(torch.relu(self.backbone(x)))))


torch.manual_seed(0)
model = Tracker()
optimizer = torch.optim.SGD(  # <- GA108
    [{"params": model.backbone.parameters(), "lr": 0.01}, {"params": model.head.parameters(), "lr": 0.1}]
)
checkpoint = io.BytesIO()
torch.save({"state_dict": model.state_dict()}, checkpoint)
checkpoint.seek(0)
model.load_state_dict(torch.load(checkpoint)["state_dict"])  # resume
for step in range(3):
    x, y = torch.randn(8, 8), torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
