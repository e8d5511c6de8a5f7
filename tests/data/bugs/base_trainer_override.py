# runtime: no-update: trainer.model
"""A BaseTrainer with the loop, and a subclass overriding train_step for a new task; the override
forgot to step the optimizer (the base class's train_step did it)."""
import torch
import torch.nn as nn


class BaseTrainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def compute_loss(self, batch):
        x, y = batch
        return nn.functional.mse_loss(self.model(x), y)

    def train_step(self, batch):
        self.optimizer.zero_grad()
        loss = self.compute_loss(batch)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, batches, epochs=2):
        for epoch in range(epochs):
            for batch in batches:
                self.train_step(batch)


class ClassifierTrainer(BaseTrainer):
    def compute_loss(self, batch):
        x, y = batch
        return nn.functional.cross_entropy(self.model(x), y)

    def train_step(self, batch):
        self.optimizer.zero_grad()
        loss = self.compute_loss(batch)
        loss.backward()  # <- GA204
        return loss.item()


torch.manual_seed(0)
trainer = ClassifierTrainer(nn.Linear(5, 3))
trainer.fit([(torch.randn(8, 5), torch.randint(0, 3, (8,))) for _ in range(3)])
