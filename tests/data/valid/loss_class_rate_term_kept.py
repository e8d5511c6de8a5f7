# runtime: skip (a loss class that no step in the file uses: it is checked alone, on inputs that require grad)
"""As bugs/loss_class_rate_term_made_a_number.py, fixed as NeuralCompression did: the rate term stays
a tensor with its graph, so the entropy model behind `probabilities` trains through it."""
import math

import torch
import torch.nn as nn


class RateDistortionLoss(nn.Module):
    def __init__(self, trade_off=1e-2):
        super().__init__()
        self.trade_off = trade_off
        self.mse = nn.MSELoss()

    def forward(self, x_hat, probabilities, x):
        n, _, h, w = x.size()
        bpps = []
        for probability in probabilities:
            bpps.append(torch.log(probability).sum() / (-math.log(2) * n * h * w))
        rate = torch.stack(bpps).sum()
        return rate + self.trade_off * self.mse(x_hat, x)
