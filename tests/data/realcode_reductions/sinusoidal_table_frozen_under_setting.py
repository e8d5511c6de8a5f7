# reduction-of: LoRA@c4593f060e6a examples/NLU/src/transformers/models/distilbert/modeling_distilbert.py:77 GA111
# false: GA111
# quiet: GA111
"""A position-embedding table filled with a fixed sinusoidal code when a setting asks for it: the
helper sets `out.requires_grad = False` first and then writes into `out` in place. The freeze runs
only under the setting, but so does the write, right after it on the same path, through the same
name: torch allows it. (It only needs the analysis to follow the model's construction far enough,
here and in the repository with raised budgets.)

Verified with torch 2.13 (CPU): with and without the setting the model trains, the table frozen
with it. Prints OK."""
import argparse

import numpy as np
import torch
import torch.nn as nn


def create_sinusoidal_embeddings(n_pos, dim, out):
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out.requires_grad = False
    out[:, 0::2] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))
    out[:, 1::2] = torch.FloatTensor(np.cos(position_enc[:, 1::2]))
    out.detach_()


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
for argv in ([], ["--sinusoidal"]):
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = Embeddings(args.sinusoidal)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        model(torch.arange(16)).pow(2).mean().backward()
        opt.step()
    assert model.position_embeddings.weight.requires_grad is not args.sinusoidal
print("OK")
