"""A criterion that is no nn.Module (a class with `__call__`): the distance between predicted and
labelled keypoints, with the keypoints missing from the labels (NaN) dropped only after the norm.
The loss is finite, but the norm's backward reads the NaN: the predictions get NaN gradients. The
same criterion with the NaN replaced before the norm is not flagged. No training step in this file
uses them."""
import torch


class KeypointDistanceLoss:
    def __call__(self, targets, predictions):
        dist = torch.linalg.norm(targets - predictions, dim=-1)  # <- GA405
        return torch.masked_select(dist, ~torch.isnan(dist)).mean()


class CleanKeypointDistanceLoss:
    def __call__(self, targets, predictions):
        missing = torch.isnan(targets).any(dim=-1)
        clean = torch.where(missing.unsqueeze(-1), torch.zeros_like(targets), targets)
        dist = torch.linalg.norm(clean - predictions, dim=-1)
        return dist[~missing].mean()
