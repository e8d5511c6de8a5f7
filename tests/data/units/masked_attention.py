"""Attention that fills masked positions with -inf before the softmax: whether a row can be fully
masked is decided by whoever builds the mask (a causal mask with self-attention never is), so the
unit alone proves nothing."""
import torch
import torch.nn as nn


class MaskedAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.scale = dim**-0.5

    def forward(self, x, mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = (q @ k.transpose(-2, -1)) * self.scale
        scores = scores.masked_fill(mask, float("-inf"))
        return scores.softmax(dim=-1) @ v
