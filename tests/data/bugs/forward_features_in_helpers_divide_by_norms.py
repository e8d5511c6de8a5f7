# runtime: skip (a module that no step in the file uses: its forward is checked alone, on inputs that require grad)
# confidence: suspicious
"""A feature module (after torchani's AEVComputer) whose forward computes its features in the file's
helper functions, two calls deep: the angular term divides by the product of two neighbour
distances, 0 for coincident atoms, so the feature and its gradient are 0/0 = NaN there. The
forward's own text holds no hazard; the helpers it calls do."""
import torch
import torch.nn as nn


def angular_terms(vectors12):
    distances12 = vectors12.norm(2, dim=-1)
    return vectors12.prod(0).sum(-1) / distances12.prod(0)  # <- GA402


def compute_features(coordinates, index):
    selected = coordinates.index_select(0, index.view(-1)).view(2, -1, 3)
    return angular_terms(selected)


class AngularFeatures(nn.Module):
    def __init__(self, n_pairs):
        super().__init__()
        self.register_buffer("index", torch.arange(2 * n_pairs))

    def forward(self, input_):
        species, coordinates = input_
        return species, compute_features(coordinates, self.index)
