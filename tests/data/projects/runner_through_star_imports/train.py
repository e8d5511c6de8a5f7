# runtime: stale-grads
"""A launcher in DeepRL's style: one function per experiment fills a configuration and hands the
agent to `run_steps`, which comes from a package through a chain of `from ... import *`. The
experiment is picked by name at run time, so no call of it is written here: the engine runs the
functions that call the package's training loop. The finding is in agents.py.

Verified with torch 2.13 (CPU): the network's gradient after the fourth step is the sum of four
batches' gradients (no zero_grad anywhere)."""
import sys

import torch
import torch.nn as nn

from agents import *
from pkg import *


def regression_experiment():
    config = Config()
    config.network_fn = lambda: nn.Linear(4, 1)
    config.optimizer_fn = lambda params: torch.optim.SGD(params, lr=0.01)
    config.max_steps = 4
    run_steps(RegressionAgent(config))


if __name__ == "__main__":
    torch.manual_seed(0)
    globals()[sys.argv[1] if len(sys.argv) > 1 else "regression_experiment"]()
