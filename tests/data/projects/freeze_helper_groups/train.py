# runtime: no-update: model.encoder
"""Fine-tuning from a project folder: the model lives in model.py, a freezing helper in utils.py;
the encoder is frozen for a warmup that is never ended, yet has its own param group."""
import torch
import torch.nn.functional as F

from model import Regressor
from utils import count_trainable, set_trainable


def train(model, optimizer, steps):
    for step in range(steps):
        x = torch.randn(16, 6)
        y = x.sum(dim=1)
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Regressor()
    set_trainable(model.encoder, False)  # <- GA107
    optimizer = torch.optim.Adam([
        {"params": model.encoder.parameters(), "lr": 1e-4},
        {"params": model.head.parameters(), "lr": 1e-3},
    ])
    print(count_trainable(model))
    print(train(model, optimizer, steps=5))
