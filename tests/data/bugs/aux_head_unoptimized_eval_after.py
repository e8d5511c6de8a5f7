# runtime: no-update: model.head
"""An encoder with an auxiliary head trained jointly, but the optimizer holds the encoder only; the
whole model is switched to eval() for the evaluation after training, which does not make the head a
fixed network during training."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(self.encoder(x))


torch.manual_seed(4)
model = Model()
optimizer = torch.optim.SGD(model.encoder.parameters(), lr=0.1)  # <- GA108
x, y = torch.randn(64, 10), torch.randint(0, 3, (64,))
for step in range(5):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

model.eval()
with torch.no_grad():
    accuracy = (model(x).argmax(1) == y).float().mean().item()
print(f"accuracy {accuracy:.2f}")
