"""A detector in holocron's style: in training mode `forward` requires the targets (it raises
without them) and returns a dict of losses computed by a method of the class. That method
square-roots the picked boxes' sizes in place and writes them back (`sel[..., 2:] =
sel[..., 2:].sqrt_()`), changing the output sqrt_ saved: a backward through the loss raises. No
training step in this file uses it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 8)

    def _compute_losses(self, pred, gt_boxes):
        bbox_loss = torch.zeros(pred.shape[0])
        for idx in range(pred.shape[0]):
            sel = pred[idx].view(-1, 4)[[0, 1]]
            sel[..., 2:] = sel[..., 2:].sqrt_()  # <- GA110
            bbox_loss[idx] += F.mse_loss(sel, gt_boxes[idx])
        return dict(bbox_loss=bbox_loss.mean())

    def forward(self, x, gt_boxes=None):
        if self.training and gt_boxes is None:
            raise ValueError("gt_boxes are needed in training mode")
        pred = self.head(x).sigmoid()
        if self.training:
            return self._compute_losses(pred, gt_boxes)
        return pred
