# runtime: skip (a function that no step in the file uses: it is checked alone, on inputs that require grad)
"""As bugs/cosine_over_product_of_norms.py, fixed as torchani did: the product of the norms is
clamped away from 0 before the division."""
import torch


def angular_loss(vectors, target):
    distances = vectors.norm(2, dim=-1)
    cos_angles = vectors.prod(0).sum(-1) / distances.prod(0).clamp(min=1e-10)
    return ((torch.acos(0.95 * cos_angles) - target) ** 2).mean()
