# runtime: no-update: model.log_temp
"""Contrastive-style classifier with a learned temperature; the temperature is turned into a
Python float before scaling the logits, so the log-temperature parameter never trains."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    dim: int = 16
    classes: int = 5
    lr: float = 3e-3
    steps: int = 5
    batch: int = 24


class CosineClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(cfg.dim, 32), nn.GELU(), nn.Linear(32, 32))
        self.prototypes = nn.Parameter(torch.randn(cfg.classes, 32))
        self.log_temp = nn.Parameter(torch.tensor(0.0))

    def forward(self, x):
        z = F.normalize(self.backbone(x), dim=-1)
        protos = F.normalize(self.prototypes, dim=-1)
        temp = self.log_temp.exp().item()  # <- GA103
        return z @ protos.t() / temp


def train(cfg: Config):
    torch.manual_seed(1)
    model = CosineClassifier(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    for step in range(cfg.steps):
        x = torch.randn(cfg.batch, cfg.dim)
        y = torch.randint(0, cfg.classes, (cfg.batch,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 2 == 0:
            print(step, loss.item(), model.log_temp.exp().item())
    return model


if __name__ == "__main__":
    train(Config())
