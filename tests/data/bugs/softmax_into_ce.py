# runtime: trains
"""A classifier whose forward returns probabilities (for convenient inference), trained with
CrossEntropyLoss, which applies log_softmax again: it trains toward a flattened objective."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, inp=8, classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(inp, 32), nn.ReLU(), nn.Linear(32, classes))

    def forward(self, x):
        return torch.softmax(self.body(x), dim=-1)


def train(model, optimizer, criterion, loader, epochs=2):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            probs = model(x)
            loss = criterion(probs, y)  # <- GA407
            loss.backward()
            optimizer.step()


torch.manual_seed(0)
model = Net()
loader = [(torch.randn(16, 8), torch.randint(0, 4, (16,))) for _ in range(3)]
train(model, torch.optim.Adam(model.parameters(), lr=1e-3), nn.CrossEntropyLoss(), loader)
