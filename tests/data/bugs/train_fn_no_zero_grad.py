# runtime: stale-grads
"""A train_one_epoch(model, optimizer, loader, criterion, device) function in the usual style that
never clears the gradients: every step applies the sum of all previous batches' gradients."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, optimizer, loader, criterion, device):
    model.train()
    running, seen = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()  # <- GA201
        running += loss.item() * inputs.size(0)
        seen += inputs.size(0)
    return running / seen


def main():
    torch.manual_seed(0)
    device = torch.device("cpu")
    ds = TensorDataset(torch.randn(96, 6), torch.randint(0, 2, (96,)))
    loader = DataLoader(ds, batch_size=32, shuffle=True)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(2):
        print(epoch, train_one_epoch(model, optimizer, loader, criterion, device))


if __name__ == "__main__":
    main()
