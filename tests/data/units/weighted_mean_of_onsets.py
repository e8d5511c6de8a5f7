"""An onset loss weighted per frame: the element-wise BCE of the onset probabilities is dotted
with the frame weights the caller passes and divided by their sum. A clip with no onset frame has
all-zero weights: 0/0 = NaN in the loss and every gradient. No training step in this file uses it."""
import torch
import torch.nn as nn


class OnsetLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.bce = nn.BCELoss(reduction="none")

    def forward(self, onset_prob, onset_target, on_weight):
        per_frame = self.bce(onset_prob.clamp(1e-7, 1 - 1e-7), onset_target)
        return torch.dot(per_frame[0], on_weight[0]) / torch.sum(on_weight)  # <- GA402
