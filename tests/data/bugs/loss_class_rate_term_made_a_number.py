# runtime: skip (a loss class that no step in the file uses: it is checked alone, on inputs that require grad)
# confidence: suspicious
"""A rate-distortion loss class (after NeuralCompression's RateMSEDistortionLoss before its fix): the
rate term is computed as `float(...)` of the likelihoods' log and wrapped back with `torch.tensor`, then
added to the distortion. Whatever the training code hands it, the rate term is a constant: the entropy
model behind `probabilities` gets no gradient from it, and only the distortion trains."""
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
            bpps.append(float(torch.log(probability).sum() / (-math.log(2) * n * h * w)))  # <- GA103
        rate = torch.tensor(sum(bpps))
        return rate + self.trade_off * self.mse(x_hat, x)
