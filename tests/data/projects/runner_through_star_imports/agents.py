"""An agent built from a configuration of factories (`config.network_fn`, `config.optimizer_fn`),
as DeepRL writes them. Its step never clears the gradients."""
import torch


class Config:
    def __init__(self):
        self.max_steps = 0


class RegressionAgent:
    def __init__(self, config):
        self.config = config
        self.network = config.network_fn()
        self.optimizer = config.optimizer_fn(self.network.parameters())
        self.total_steps = 0

    def step(self):
        x = torch.randn(8, 4)
        loss = (self.network(x) - x.sum(-1, keepdim=True)).pow(2).mean()
        loss.backward()
        self.optimizer.step()  # <- GA201
        self.total_steps += 1
