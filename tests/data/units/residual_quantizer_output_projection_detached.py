"""A residual vector quantizer whose stages project into and out of a smaller code space. Each
stage's output is detached before it is summed (the straight-through estimator is applied once, at
the end, from the input), so the output projections get no gradient from anything the forward
returns; the input projections still do, through the commitment losses it also returns. The finding
names the output projections only."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Stage(nn.Module):
    def __init__(self, dim=8, code_dim=4, size=16):
        super().__init__()
        self.project_in = nn.Linear(dim, code_dim)
        self.project_out = nn.Linear(code_dim, dim)
        self.register_buffer("codes", torch.randn(size, code_dim))

    def forward(self, x):
        z = self.project_in(x)
        idx = torch.cdist(z, self.codes).argmin(-1)
        q = self.codes[idx]
        commit = F.mse_loss(q.detach(), z)
        q = z + (q - z).detach()
        return self.project_out(q), commit


class ResidualQuantizer(nn.Module):
    def __init__(self, stages=2):
        super().__init__()
        self.stages = nn.ModuleList([Stage() for _ in range(stages)])

    def forward(self, x):
        out = 0.0
        residual = x
        losses = []
        for stage in self.stages:
            q, commit = stage(residual)
            q = q.detach()  # <- GA101
            residual = residual - q
            out = out + q
            losses.append(commit)
        out = x + (out - x).detach()
        return out, torch.stack(losses).sum() / len(self.stages)
