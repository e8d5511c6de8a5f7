# runtime: stale-grads
"""A detectron2-style training script: the model class is picked from a registry by a name in the
configuration, the registry being fvcore's `Registry` (a library object) filled by class
decorators in another module. The loop never clears the gradients.

The engine cannot read which class the configuration names; every registered class is an
nn.Module, so the model is one, and the optimizer holds its parameters.

Verified with torch 2.13 (CPU), with a stand-in for fvcore's Registry (a dict filled by the
decorator, `get` returning the class): from the second batch on, each backward() adds to the
gradient the previous step applied."""
import json
import sys

import torch

from detect.meta_arch import build_model


def do_train(cfg, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model.train()
    for batch in loader:
        loss_dict = model(batch)
        losses = sum(loss_dict.values())
        losses.backward()
        optimizer.step()  # <- GA201


def main(path):
    with open(path) as fh:
        cfg = json.load(fh)
    model = build_model(cfg)
    loader = [(torch.randn(8, cfg["dim"]), torch.randint(0, 3, (8,))) for _ in range(3)]
    do_train(cfg, model, loader)


if __name__ == "__main__":
    main(sys.argv[1])
