"""Training helpers shared by the project's scripts."""

import torch


def freeze(module):
    """Stop gradient updates for every parameter of `module`."""
    for p in module.parameters():
        p.requires_grad = False
    return module


def count_parameters(module, trainable_only=False):
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)


def make_blobs(n, in_dim, num_classes, seed=0):
    """Gaussian blobs, one per class: a small synthetic tabular data set."""
    g = torch.Generator().manual_seed(seed)
    centers = 2.0 * torch.randn(num_classes, in_dim, generator=g)
    labels = torch.randint(0, num_classes, (n,), generator=g)
    features = centers[labels] + torch.randn(n, in_dim, generator=g)
    return features, labels
