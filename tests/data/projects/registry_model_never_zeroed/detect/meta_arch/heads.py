import torch.nn as nn

from .build import META_ARCH_REGISTRY


@META_ARCH_REGISTRY.register()
class Classifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(cfg["dim"], 16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, batch):
        x, y = batch
        return {"loss_cls": nn.functional.cross_entropy(self.head(self.body(x)), y)}


@META_ARCH_REGISTRY.register()
class Regressor(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.body = nn.Linear(cfg["dim"], 1)

    def forward(self, batch):
        x, y = batch
        return {"loss_reg": (self.body(x).squeeze(1) - y.float()).pow(2).mean()}
