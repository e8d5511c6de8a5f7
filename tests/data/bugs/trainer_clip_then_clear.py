# runtime: no-update: trainer.model
"""A Trainer whose train_step clips, then clears the gradients "to be safe" before stepping."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, lr=1e-3, max_norm=1.0):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.loss_fn = nn.HuberLoss()
        self.max_norm = max_norm

    def train_step(self, x, y):
        pred = self.model(x)
        loss = self.loss_fn(pred, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        self.optimizer.zero_grad(set_to_none=True)  # <- GA202
        self.optimizer.step()
        return loss.detach()

    def train_epoch(self, batches):
        self.model.train()
        losses = [self.train_step(x, y) for x, y in batches]
        return torch.stack(losses).mean().item()


torch.manual_seed(0)
trainer = Trainer(nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1)))
data = [(torch.randn(10, 3), torch.randn(10, 1)) for _ in range(3)]
for epoch in range(2):
    print(epoch, trainer.train_epoch(data))
