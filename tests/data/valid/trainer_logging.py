# runtime: trains
"""A Trainer with train_epoch/train_step, logging with .item(), a scheduler stepped per epoch after
the optimizer, and an evaluation pass under torch.no_grad()."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, train_data, val_data, lr=0.05, epochs=2):
        self.model = model
        self.train_data, self.val_data = train_data, val_data
        self.criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=1, gamma=0.5)
        self.epochs = epochs
        self.history = []

    def train_step(self, x, y):
        self.optimizer.zero_grad(set_to_none=True)
        logits = self.model(x)
        loss = self.criterion(logits, y)
        loss.backward()
        self.optimizer.step()
        return loss.item(), (logits.argmax(1) == y).float().sum().item()

    def train_epoch(self):
        self.model.train()
        total, correct = 0.0, 0.0
        for x, y in self.train_data:
            loss, hits = self.train_step(x, y)
            total += loss
            correct += hits
        self.scheduler.step()
        return total / len(self.train_data), correct

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        return sum(self.criterion(self.model(x), y).item() for x, y in self.val_data)

    def fit(self):
        for epoch in range(self.epochs):
            self.history.append((self.train_epoch(), self.evaluate()))


torch.manual_seed(0)
data = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(3)]
trainer = Trainer(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)), data, data[:1])
trainer.fit()
