# runtime: skip (no backward: the demo runs the loss on data that requires no grad)
# confidence: suspicious
"""A loss module published with a demo under `__main__`, as AnchorLoss was: the demo calls it on
`torch.rand` inputs and prints the value, so nothing there requires grad and no backward() runs.
The module's forward takes `log(1 - sigmoid(x))`, which is -inf once sigmoid(x) rounds to 1
(x > ~17 in float32) and gives NaN gradients in any training that uses it; run alone, on inputs
that require grad, the forward shows it. (With torch: `torch.log(1 - torch.sigmoid(torch.tensor(
[20.0], requires_grad=True)))` is -inf and its backward gives NaN.)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AnchorLoss(nn.Module):
    def __init__(self, gamma=0.5):
        super().__init__()
        self.gamma = gamma
        self.sig = nn.Sigmoid()

    def forward(self, input, target):
        target = target.view(-1, 1)
        pt = self.sig(input)
        logpt_pos = F.logsigmoid(input)
        logpt_neg = torch.log(1 - pt)  # <- GA401
        class_mask = torch.zeros_like(input).scatter_(1, target, 1.0)
        loss = class_mask * -logpt_pos + (1 - class_mask) * -(1 + pt).pow(self.gamma) * logpt_neg
        return loss.sum(1).mean()


if __name__ == "__main__":
    inputs = torch.rand(4, 5)
    targets = torch.randint(0, 5, (4,))
    print(AnchorLoss()(inputs, targets).item())
