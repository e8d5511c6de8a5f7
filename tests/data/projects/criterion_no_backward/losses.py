import torch.nn as nn
import torch.nn.functional as F


class DetectionLoss(nn.Module):
    """A box-regression and a classification term, as a detector's criterion returns them."""

    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes

    def forward(self, predictions, targets):
        loc, conf = predictions
        boxes, labels = targets
        loss_l = F.smooth_l1_loss(loc, boxes)
        loss_c = F.cross_entropy(conf.view(-1, self.num_classes), labels.view(-1))
        return loss_l, loss_c
