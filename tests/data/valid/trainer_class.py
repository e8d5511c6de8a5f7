# runtime: trains
"""A small Trainer class with a scheduler, evaluation under inference_mode and early stopping."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, lr=1e-2, epochs=3):
        self.model = model
        self.epochs = epochs
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=1, gamma=0.5)
        self.history = []

    def training_step(self, batch):
        x, y = batch
        logits = self.model(x)
        return F.cross_entropy(logits, y)

    @torch.inference_mode()
    def evaluate(self, loader):
        self.model.eval()
        losses = [self.training_step(b).item() for b in loader]
        self.model.train()
        return sum(losses) / len(losses)

    def fit(self, train_loader, val_loader):
        best = float("inf")
        for epoch in range(self.epochs):
            for batch in train_loader:
                loss = self.training_step(batch)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.history.append(loss.item())
            self.scheduler.step()
            val = self.evaluate(val_loader)
            if val > best:
                break
            best = val


torch.manual_seed(6)
X, Y = torch.randn(64, 8), torch.randint(0, 3, (64,))
train = DataLoader(TensorDataset(X[:48], Y[:48]), batch_size=16, shuffle=True)
val = DataLoader(TensorDataset(X[48:], Y[48:]), batch_size=16)
Trainer(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))).fit(train, val)
