# runtime: graph-kept: trainer.running_loss
"""A Trainer keeps a running loss on itself for its progress bar, adding the loss tensor: the
graph of every step stays alive through that attribute."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.running_loss = 0.0
        self.steps = 0

    def train_step(self, x, y):
        self.opt.zero_grad()
        loss = nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.running_loss += loss  # <- GA303
        self.steps += 1

    def train_epoch(self, data):
        self.running_loss = 0.0
        for x, y in data:
            self.train_step(x, y)
        return self.running_loss / max(self.steps, 1)


torch.manual_seed(0)
trainer = Trainer(nn.Linear(4, 2))
data = [(torch.randn(6, 4), torch.randn(6, 2)) for _ in range(3)]
trainer.train_epoch(data)
