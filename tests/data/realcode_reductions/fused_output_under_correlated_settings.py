# reduction-of: End-to-end-ASR-Pytorch@1103d144423e src/util.py:120 GA301
# false: GA301
# quiet: GA301
"""An ASR trainer with an optional embedding regulariser: `self.emb_fuse` starts False and is set
only inside `if self.emb_reg:` in `__init__`; in the loop, `fuse_output` is made under
`if self.emb_reg:` and read under `... if self.emb_fuse else ...`; a word-error metric then loops
over the batch's predictions.

False finding: GA301 confirmed at the metric's loop, "this assignment carries a tensor with the
previous iteration's graph into `loss`". A setting has the same truth in every iteration: when the
branch that makes `fuse_output` is not taken in this iteration it was never taken, so no earlier
iteration's `fuse_output` exists to be read (and `emb_fuse` is true only when `emb_reg` is). In a
later run of a loop, a name that a setting's arm assigns is, on the other arm, what the loop found.

Verified with torch 2.13 (CPU): every configuration the constructor allows trains several steps,
each backward succeeding. Prints OK.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def error_rate(pred, truth):
    er = []
    for p, t in zip(pred.argmax(dim=-1), truth):
        er.append(float(p.item() != t.item()))
    return sum(er) / len(er)


class Trainer:
    def __init__(self, config):
        self.model = nn.Linear(6, 4)
        self.emb_reg = "emb" in config
        self.emb_fuse = False
        params = list(self.model.parameters())
        if self.emb_reg:
            self.emb_decoder = nn.Linear(4, 4)
            self.emb_fuse = config["emb"] == "fuse"
            params += list(self.emb_decoder.parameters())
        self.optimizer = torch.optim.SGD(params, lr=0.1)

    def exec(self, steps=4):
        for step in range(steps):
            x, y = torch.randn(8, 6), torch.randint(0, 4, (8,))
            self.optimizer.zero_grad()
            att_output = self.model(x)
            total_loss = 0
            if self.emb_reg:
                fuse_output = self.emb_decoder(att_output)
                total_loss += fuse_output.pow(2).mean()
            att_output = fuse_output if self.emb_fuse else att_output
            total_loss += F.cross_entropy(att_output, y)
            total_loss.backward()
            self.optimizer.step()
            wer = error_rate(att_output, y)
        return wer


for setting in (None, "reg", "fuse", os.environ.get("EMB")):
    torch.manual_seed(0)
    Trainer({} if setting is None else {"emb": setting}).exec()
print("OK")
