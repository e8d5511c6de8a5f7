"""Loss callbacks: each adds its term into the trainer's running total for the batch."""
import torch.nn.functional as F
from callbacks import *


class MSELossCallback(Callback):
    order = 10

    def __init__(self, trainer, weight=1.0):
        self.trainer = trainer
        self.weight = weight

    def compute_loss(self):
        t = self.trainer
        t.loss += self.weight * F.mse_loss(t.model(t.x), t.y)  # <- GA111
