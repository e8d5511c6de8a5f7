# runtime: trains
"""The optimizer is created inside train_epoch, which main() calls every epoch: Adam's moment
estimates restart each epoch (it trains, with a fresh Adam every epoch)."""
import torch
import torch.nn as nn


def train_epoch(model, loader, lr):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)  # <- GA206
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


def main(epochs=3):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    loader = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(3)]
    for epoch in range(epochs):
        print(epoch, train_epoch(model, loader, lr=1e-3))


main()
