# runtime: no-update: model.q90
"""Point forecast plus a 90% quantile head; the pinball loss was ported from a NumPy notebook and
computes on `.numpy()` copies, so the quantile head gets no gradient."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Forecaster(nn.Module):
    def __init__(self, window=12):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(window, 32), nn.Tanh())
        self.point = nn.Linear(32, 1)
        self.q90 = nn.Linear(32, 1)

    def forward(self, x):
        h = self.body(x)
        return self.point(h).squeeze(-1), self.q90(h).squeeze(-1)


def pinball_loss(pred, target, q=0.9):
    diff = target.numpy() - pred.detach().numpy()  # <- GA105
    loss = np.maximum(q * diff, (q - 1) * diff).mean()
    return torch.from_numpy(np.asarray(loss, dtype=np.float32))


def train(model, optimizer, series, window=12, epochs=3):
    for epoch in range(epochs):
        idx = torch.randint(0, series.numel() - window - 1, (32,))
        x = torch.stack([series[i:i + window] for i in idx])
        y = torch.stack([series[i + window] for i in idx])
        point, upper = model(x)
        loss = F.mse_loss(point, y) + pinball_loss(upper, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(epoch, float(loss))


if __name__ == "__main__":
    torch.manual_seed(0)
    series = torch.sin(torch.linspace(0, 20, 400)) + 0.1 * torch.randn(400)
    model = Forecaster()
    train(model, torch.optim.Adam(model.parameters(), lr=1e-2), series)
