import torch


def pooled(backbone, x):
    h = backbone(x)
    return torch.cat([h.mean(dim=1), h.amax(dim=1)], dim=-1).detach()  # <- GA101
