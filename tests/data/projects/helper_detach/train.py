import torch
import torch.nn as nn
import torch.nn.functional as F

from pkg.features import pooled
from pkg.model import Backbone


def main():
    torch.manual_seed(0)
    backbone = Backbone()
    head = nn.Linear(24, 3)
    optimizer = torch.optim.Adam([*backbone.parameters(), *head.parameters()], lr=1e-3)
    for step in range(3):
        x, y = torch.randn(4, 5, 6), torch.randint(0, 3, (4,))
        loss = F.cross_entropy(head(pooled(backbone, x)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
