# reduction-of: continual-learning@e6d795aa81b9 models/classifier_stream.py:272 GA301
# false: GA301
# quiet: GA301
"""A continual learner with three replay modes chosen on the command line. The replayed batch's
loss is backpropagated on its own only in the 'inequality' and 'both' modes (`mode in (...) and
x_ is not None`), and it is added into the total only in the remaining mode (the `else` of
`x_ is None or mode == 'inequality'` / `mode == 'both'`): the two never meet in one run, so no
backward() goes through a freed graph.

Verified with torch 2.13 (CPU): each of the three modes trains three batches without an error. Prints OK."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Learner(nn.Module):
    def __init__(self, use_replay):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        self.use_replay = use_replay
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.1)

    def forward(self, x):
        return self.net(x)

    def train_a_batch(self, x, y, x_, y_, rnt=0.5):
        self.optimizer.zero_grad()
        loss_replay = F.cross_entropy(self(x_), y_)
        if self.use_replay in ("inequality", "both") and x_ is not None:
            if self.use_replay == "both":
                loss_replay = (1 - rnt) * loss_replay
            loss_replay.backward()
            if self.use_replay == "inequality":
                self.optimizer.zero_grad()
        loss_cur = F.cross_entropy(self(x), y)
        if x_ is None or self.use_replay == "inequality":
            loss_total = loss_cur
        elif self.use_replay == "both":
            loss_total = rnt * loss_cur
        else:
            loss_total = rnt * loss_cur + (1 - rnt) * loss_replay
        loss_total.backward()
        self.optimizer.step()


parser = argparse.ArgumentParser()
parser.add_argument("--replay", default="normal", choices=["normal", "inequality", "both"])
for argv in ([], ["--replay", "inequality"], ["--replay", "both"]):
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    learner = Learner(args.replay)
    for _ in range(3):
        x, x_ = torch.randn(8, 6), torch.randn(8, 6)
        learner.train_a_batch(x, torch.randint(0, 3, (8,)), x_, torch.randint(0, 3, (8,)))
    assert all(torch.isfinite(p).all() for p in learner.parameters())
print("OK")
