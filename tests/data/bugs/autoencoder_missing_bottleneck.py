# runtime: no-update: model.bottleneck
"""An autoencoder whose optimizer is assembled from the encoder's and decoder's parameters; the
bottleneck layer between them was added later and is in no param group."""
import torch
import torch.nn as nn


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 12), nn.ReLU())
        self.bottleneck = nn.Linear(12, 4)
        self.decoder = nn.Sequential(nn.Linear(4, 12), nn.ReLU(), nn.Linear(12, 20))

    def forward(self, x):
        return self.decoder(self.bottleneck(self.encoder(x)))


def make_optimizer(model, lr):
    params = list(model.encoder.parameters()) + list(model.decoder.parameters())
    return torch.optim.Adam(params, lr=lr)  # <- GA108


torch.manual_seed(0)
model = AE()
optimizer = make_optimizer(model, 1e-3)
for epoch in range(3):
    x = torch.randn(16, 20)
    loss = nn.functional.mse_loss(model(x), x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
