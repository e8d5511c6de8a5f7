# runtime: error: a view of a leaf Variable that requires grad is being used in an in-place operation
"""The twin of realcode_reductions/sinusoidal_table_frozen_under_setting.py in the order XLM's helper
once had: the table is written in place first and frozen after, so the write is made on a leaf
that still requires grad and torch raises."""
import argparse

import numpy as np
import torch
import torch.nn as nn


def create_sinusoidal_embeddings(n_pos, dim, out):
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out[:, 0::2] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))  # <- GA111
    out[:, 1::2] = torch.FloatTensor(np.cos(position_enc[:, 1::2]))  # <- GA111
    out.detach_()
    out.requires_grad = False


class Embeddings(nn.Module):
    def __init__(self, sinusoidal):
        super().__init__()
        self.position_embeddings = nn.Embedding(16, 8)
        self.head = nn.Linear(8, 1)
        if sinusoidal:
            create_sinusoidal_embeddings(16, 8, out=self.position_embeddings.weight)

    def forward(self, positions):
        return self.head(self.position_embeddings(positions))


parser = argparse.ArgumentParser()
parser.add_argument("--sinusoidal", action="store_true")
for argv in (["--sinusoidal"], []):
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = Embeddings(args.sinusoidal)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        model(torch.arange(16)).pow(2).mean().backward()
        opt.step()
    assert model.position_embeddings.weight.requires_grad is not args.sinusoidal
