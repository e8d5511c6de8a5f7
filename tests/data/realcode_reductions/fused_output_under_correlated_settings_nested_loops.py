# reduction-of: End-to-end-ASR-Pytorch@1103d144423e bin/train_asr.py:130 GA301
# false: GA301
# quiet: GA301
"""The same ASR trainer as fused_output_under_correlated_settings.py, with its real loop nesting:
`while self.step < self.max_step:` around `for data in self.tr_set:`. `fuse_output` is made under
`if self.emb_reg:` and read under `... if self.emb_fuse else ...`.

False finding: GA301 confirmed at `att_output = fuse_output if self.emb_fuse else att_output`
("this assignment carries a tensor with the previous iteration's graph"), once the budgets let the
engine run the outer loop twice: in the outer loop's second run, the inner loop's entry already held
the `fuse_output` of the outer loop's first run, and the setting's other arm kept it. A setting has
the same truth in every iteration of every enclosing loop that does not change it: on the arm that
does not make `fuse_output`, it is what the outermost such loop found.

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

    def exec(self, max_step=6):
        step = 0
        while step < max_step:
            for batch in range(3):
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
                step += 1
        return wer


for setting in (None, "reg", "fuse", os.environ.get("EMB")):
    torch.manual_seed(0)
    Trainer({} if setting is None else {"emb": setting}).exec()
print("OK")
