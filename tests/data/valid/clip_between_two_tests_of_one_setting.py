"""A language-model loop (after pytorch/examples' word_language_model) tests one setting twice:
`if args.use_optimizer: optimizer.zero_grad() else: model.zero_grad()`, then after backward() and
a clip, `if args.use_optimizer: optimizer.step() else:` a hand-written update. The rest of the
block after the first test runs inside each of its arms (the second test decided there), so the
clip is made on both arms; each arm's run stays apart from the other's. Taking the clip as
conditioned by neither arm once made it follow the other arm's step() (GA208, confirmed, false)."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--use-optimizer", action="store_true")
args = parser.parse_args()
model = nn.Linear(8, 4)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
lr = 0.1
for step in range(4):
    data, targets = torch.randn(5, 8), torch.randn(5, 4)
    if args.use_optimizer:
        optimizer.zero_grad()
    else:
        model.zero_grad()
    loss = criterion(model(data), targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    if args.use_optimizer:
        optimizer.step()
    else:
        with torch.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-lr)
