# runtime: skip (a function that no step in the file uses: it is checked alone, on inputs that require grad)
# confidence: suspicious
"""An angular feature (after torchani's AEV before its fix): the cosine between two neighbour vectors
is their dot product divided by the product of their norms, taken with `.prod(0)`. Two coincident
atoms make a norm 0, the product 0, and the cosine 0/0 = NaN, in the value and in the gradient."""
import torch


def angular_loss(vectors, target):
    distances = vectors.norm(2, dim=-1)
    cos_angles = vectors.prod(0).sum(-1) / distances.prod(0)  # <- GA402
    return ((torch.acos(0.95 * cos_angles) - target) ** 2).mean()
