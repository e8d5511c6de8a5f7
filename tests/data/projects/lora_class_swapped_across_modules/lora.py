from contextlib import contextmanager

import torch
import torch.nn as nn

import layers


class MergedLinear(nn.Linear):
    def __init__(self, d, r):
        nn.Linear.__init__(self, d, d, bias=False)
        self.lora_a = nn.Parameter(torch.randn(r, d) * 0.1)
        self.lora_b = nn.Parameter(torch.zeros(d, r))

    def forward(self, x):
        return nn.functional.linear(x, self.weight) + x @ self.lora_a.T @ self.lora_b.T


class LoRAAttention(layers.Attention):
    rank = 0

    def __init__(self, d):
        nn.Module.__init__(self)
        self.proj = MergedLinear(d, self.rank)


@contextmanager
def lora(r):
    LoRAAttention.rank = r
    original = layers.Attention
    layers.Attention = LoRAAttention
    try:
        yield
    finally:
        layers.Attention = original


def mark_only_lora_as_trainable(model):
    for n, p in model.named_parameters():
        if "lora_" not in n:
            p.requires_grad = False
