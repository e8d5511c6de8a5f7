# runtime: no-update: model.encoder
"""Multi-task regression: a shared encoder feeds two heads, and both heads read the encoder's
features through `.detach()` (copied from a probing script), so the encoder never trains."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiTaskNet(nn.Module):
    def __init__(self, in_dim, hidden):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.price_head = nn.Linear(hidden, 1)
        self.volume_head = nn.Linear(hidden, 1)

    def forward(self, x):
        feats = self.encoder(x).detach()  # <- GA101
        return self.price_head(feats).squeeze(-1), self.volume_head(feats).squeeze(-1)


def make_batches(n_batches, batch_size, in_dim):
    for _ in range(n_batches):
        x = torch.randn(batch_size, in_dim)
        yield x, x[:, 0] * 2.0, x[:, 1].abs()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--hidden", type=int, default=16)
    args = parser.parse_args([])

    torch.manual_seed(0)
    model = MultiTaskNet(8, args.hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        for x, price, volume in make_batches(4, 32, 8):
            pred_price, pred_volume = model(x)
            loss = F.mse_loss(pred_price, price) + 0.5 * F.l1_loss(pred_volume, volume)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
