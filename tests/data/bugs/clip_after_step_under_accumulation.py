# runtime: trains
"""Gradient accumulation over micro-batches counted in samples: when the virtual batch is full the
trainer steps, then clips, then clears. The clip runs after the step on gradients already applied
and about to be zeroed, so --max_grad_norm never limits an update."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, lr=1e-3, virtual_batch=32, max_grad_norm=1.0):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.virtual_batch = virtual_batch
        self.max_grad_norm = max_grad_norm

    def train(self, batches):
        seen = 0
        for x, y in batches:
            loss = nn.functional.mse_loss(self.model(x), y)
            (loss * x.shape[0] / self.virtual_batch).backward()
            seen += x.shape[0]
            if seen == self.virtual_batch:
                self.optimizer.step()
                nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)  # <- GA208
                self.optimizer.zero_grad()
                seen = 0


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
data = [(torch.randn(8, 8), torch.randn(8, 1) * 30) for _ in range(16)]
Trainer(model).train(data)
