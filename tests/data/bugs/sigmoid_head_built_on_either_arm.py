# runtime: trains
"""A property predictor whose head is a list of layers built on either arm of an `if` (one or more
hidden layers), an activation chosen by name, and a Sigmoid appended for classification, then
`nn.Sequential(*layers)`; BCELoss outside. Whichever arm built the list, its last layer is the
Sigmoid: saturated, confidently wrong molecules get exactly zero gradient."""
import argparse

import torch
import torch.nn as nn


def activation_named(name):
    if name == "relu":
        return nn.ReLU()
    if name == "tanh":
        return nn.Tanh()
    return nn.LeakyReLU(0.1)


def build_head(args):
    act = activation_named(args.activation)
    if args.layers == 1:
        layers = [nn.Dropout(0.1), nn.Linear(32, 1)]
    else:
        layers = [nn.Dropout(0.1), nn.Linear(32, 64)]
        for _ in range(args.layers - 2):
            layers.extend([act, nn.Linear(64, 64)])
        layers.extend([act, nn.Linear(64, 1)])
    if args.task == "classification":
        layers.append(nn.Sigmoid())
    return nn.Sequential(*layers)


parser = argparse.ArgumentParser()
parser.add_argument("--layers", type=int, default=2)
parser.add_argument("--activation", default="relu")
args = parser.parse_args([])
args.task = "classification"

torch.manual_seed(0)
model = build_head(args)
criterion = nn.BCELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    x = torch.randn(16, 32)
    y = (torch.rand(16, 1) > 0.5).float()
    optimizer.zero_grad()
    loss = criterion(model(x), y)  # <- GA408
    loss.backward()
    optimizer.step()
