"""A template stack (AlphaFold's): each template is taken as a slice of the pair tensor, updated by
a triangle attention whose layer norm saves that slice for backward, and written back into the pair
tensor in place, which bumps the version of the saved slice: any backward through the block raises.
The stack runs its blocks through a checkpointing helper of another file, so the block runs on its
own here. No training step in this file uses it."""
import torch.nn as nn

from checkpointing import checkpoint_blocks  # another file of the project, not in this test


class Linear(nn.Linear):
    """A linear layer with the project's own initialisation; forward is nn.Linear's."""


class TriangleAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer_norm = nn.LayerNorm(c)
        self.linear = Linear(c, c)

    def forward(self, x, mask=None):
        return self.linear(self.layer_norm(x))


class TemplatePairStackBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tri_att = TriangleAttention(c)

    def forward(self, z, mask=None):
        for i in range(z.shape[-4]):
            single = z[..., i : i + 1, :, :, :]
            single = single + self.tri_att(single, mask=mask)
            z[..., i : i + 1, :, :, :] = single  # <- GA110
        return z


class TemplatePairStack(nn.Module):
    def __init__(self, c, blocks):
        super().__init__()
        self.blocks = nn.ModuleList([TemplatePairStackBlock(c) for _ in range(blocks)])
        self.layer_norm = nn.LayerNorm(c)

    def forward(self, t, mask):
        (t,) = checkpoint_blocks(blocks=list(self.blocks), args=(t,), blocks_per_ckpt=None)
        return self.layer_norm(t)
