"""A segmentation head in SETR's style: the base class's `forward` encodes and calls `decode`,
which the subclass writes by building its convolutions and norm inside it (`nn.Conv2d(...)(x)`).
Every call makes new layers with fresh random weights: `model.parameters()` never holds them, so
no optimizer trains them. The activation and the upsampling hold no weights and are fine there.
No training step in this file uses it."""
import torch.nn as nn


class SegmentationHead(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.channels, self.classes = channels, classes
        self.encoder = nn.Conv2d(3, channels, 3, padding=1)

    def decode(self, x):
        raise NotImplementedError

    def forward(self, x):
        return self.decode(self.encoder(x))


class NaiveHead(SegmentationHead):
    def decode(self, x):
        x = nn.Conv2d(self.channels, self.channels, 1)(x)  # <- GA108
        x = nn.BatchNorm2d(self.channels)(x)  # <- GA108
        x = nn.ReLU()(x)
        x = nn.Conv2d(self.channels, self.classes, 1)(x)  # <- GA108
        return nn.Upsample(scale_factor=2, mode="bilinear")(x)
