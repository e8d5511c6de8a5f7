# runtime: trains
"""Multi-label tagging with the sigmoid inside the model and BCELoss outside: saturated, confidently
wrong samples get exactly zero gradient (it trains, but not on those)."""
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, inp=20, tags=6):
        super().__init__()
        self.fc1 = nn.Linear(inp, 32)
        self.fc2 = nn.Linear(32, tags)

    def forward(self, x):
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x))))


torch.manual_seed(0)
model = Tagger()
criterion = nn.BCELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    x = torch.randn(16, 20)
    tags = (torch.rand(16, 6) > 0.7).float()
    optimizer.zero_grad()
    loss = criterion(model(x), tags)  # <- GA408
    loss.backward()
    optimizer.step()
