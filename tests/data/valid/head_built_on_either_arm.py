# runtime: trains
"""A head built as a list on either arm of an `if`: probabilities (a Sigmoid last) regressed with
MSE on one arm, logits with BCEWithLogitsLoss on the other. Each loss gets the output it expects."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--output", choices=["probs", "logits"], default="logits")
args = parser.parse_args([])

if args.output == "probs":
    layers = [nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1), nn.Sigmoid()]
    criterion = nn.MSELoss()
else:
    layers = [nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 1)]
    criterion = nn.BCEWithLogitsLoss()
model = nn.Sequential(*layers)

torch.manual_seed(0)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    x = torch.randn(16, 32)
    y = (torch.rand(16, 1) > 0.5).float()
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
