"""A residual stack in StarGANv2-VC's ASR style: each block is conv, ReLU, norm, dropout, conv,
ReLU, dropout, and the residual is added in place (`x += res`). The dropout rate defaults to 0.0,
and a dropout with p=0 gives back its input itself: the in-place add then writes the last ReLU's
output, which ReLU saved for backward, so any backward through the stack raises. No training step
in this file uses it."""
import torch.nn as nn


class ConvBlock(nn.Module):
    def __init__(self, hidden_dim, n_conv=3, dropout_p=0.0):
        super().__init__()
        self.blocks = nn.ModuleList([self._get_conv(hidden_dim, dropout_p) for _ in range(n_conv)])

    def forward(self, x):
        for block in self.blocks:
            res = x
            x = block(x)
            x += res  # <- GA110
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
