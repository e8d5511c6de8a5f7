# runtime: trains
"""A distiller that fills in the base class's loss hook (after KD_Lib's attention distiller): the
student's softmax probabilities go into cross_entropy, which applies log_softmax again, so the
gradients shrink as the student gets confident (it trains, on the wrong objective). Nothing in
this file runs the training loop by itself (the distiller is picked by name at run time, as a
command line picks it): the engine runs the inherited `train_student()` on an instance of this
class, where the hook meets the training step.

Verified with torch 2.13 (CPU): it trains, but the cross-entropy term cannot fall below 0.744
(its value at a one-hot probability vector over 4 classes), where on logits it tends to 0."""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from distiller_base import BaseDistiller


class SoftTargetDistiller(BaseDistiller):
    def __init__(self, teacher, student, loader, optimizer, temperature=4.0):
        super().__init__(teacher, student, loader, optimizer)
        self.temperature = temperature

    def calculate_kd_loss(self, y_pred_student, y_pred_teacher, y_true):
        soft_student = F.log_softmax(y_pred_student / self.temperature, dim=1)
        soft_teacher = F.softmax(y_pred_teacher / self.temperature, dim=1)
        kd = F.kl_div(soft_student, soft_teacher, reduction="batchmean")
        probs = F.softmax(y_pred_student, dim=1)
        return kd + F.cross_entropy(probs, y_true)  # <- GA407


if __name__ == "__main__":
    torch.manual_seed(0)
    teacher, student = nn.Linear(8, 4), nn.Linear(8, 4)
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    loader = [(torch.randn(16, 8), torch.randint(0, 4, (16,))) for _ in range(3)]
    distiller = globals()[sys.argv[1] if len(sys.argv) > 1 else "SoftTargetDistiller"](
        teacher, student, loader, optimizer
    )
    distiller.train_student(epochs=2)
