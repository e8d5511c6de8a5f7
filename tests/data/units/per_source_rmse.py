"""A music separation loss: the root of each source's mean squared spectral error (`reduction=
"none"`, then a mean over all but the batch and source dimensions). A source whose estimate equals
its target (a silent stem of a zero-padded segment, where a masking model outputs 0) has an error
of exactly 0, and the root's infinite gradient times the zero difference is NaN. No training step in
this file uses it."""
import torch
import torch.nn.functional as F


def per_source_rmse_loss(estimate, sources):
    loss = F.mse_loss(estimate, sources, reduction="none")
    dims = tuple(range(2, loss.dim()))
    return loss.mean(dims).sqrt().mean(dim=(0, 1))  # <- GA403
