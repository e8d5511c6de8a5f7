# runtime: error: does not require grad
"""A loss helper shared by training and validation carries `@torch.no_grad()` because it was first
written for validation; training calls it too and backward() raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


@torch.no_grad()  # <- GA102
def compute_loss(model, batch):
    images, labels = batch
    logits = model(images)
    return F.cross_entropy(logits, labels)


def train_epoch(model, loader, optimizer):
    model.train()
    total = 0.0
    for batch in loader:
        loss = compute_loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


def validate(model, loader):
    model.eval()
    return sum(compute_loss(model, b).item() for b in loader) / len(loader)


if __name__ == "__main__":
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 1, 8, 8), torch.randint(0, 4, (64,)))
    train_loader = DataLoader(data, batch_size=16, shuffle=True)
    val_loader = DataLoader(data, batch_size=32)
    net = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(2):
        tr = train_epoch(net, train_loader, opt)
        va = validate(net, val_loader)
        print(epoch, tr, va)
