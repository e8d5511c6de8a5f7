"""As residual_after_zero_rate_dropout.py with a dropout rate of 0.1: the dropout makes a new
tensor (the input times a mask), so the in-place residual add writes that tensor, which nothing
saved, and the ReLU's saved output is left alone."""
import torch.nn as nn


class ConvBlock(nn.Module):
    def __init__(self, hidden_dim, n_conv=3, dropout_p=0.1):
        super().__init__()
        self.blocks = nn.ModuleList([self._get_conv(hidden_dim, dropout_p) for _ in range(n_conv)])

    def forward(self, x):
        for block in self.blocks:
            res = x
            x = block(x)
            x += res
        return x

    def _get_conv(self, hidden_dim, dropout_p):
        return nn.Sequential(
            nn.Conv1d(hidden_dim, hidden_dim, 3, padding=1),
            nn.ReLU(),
            nn.GroupNorm(2, hidden_dim),
            nn.Dropout(p=dropout_p),
            nn.Conv1d(hidden_dim, hidden_dim, 3, padding=1),
            nn.ReLU(),
            nn.Dropout(p=dropout_p),
        )
