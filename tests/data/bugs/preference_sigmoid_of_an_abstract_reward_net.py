# runtime: nonfinite
# confidence: suspicious
"""A preference-comparison trainer (after imitation's `CrossEntropyRewardTrainer`) typed
`model: RewardNet`, an abstract module whose subclasses write the forward: the probability that
one fragment is preferred is a sigmoid written by hand over the difference of the two returns,
`1 / (1 + exp(returns_diff))`. exp overflows to inf once the difference passes about 88, and the
gradient of the sigmoid there is inf / inf = NaN. Suspicious: the engine does not see which
reward network the caller gives (here one is picked by name at run time)."""
import abc
import os

import torch
import torch.nn as nn


class RewardNet(nn.Module, abc.ABC):
    @abc.abstractmethod
    def forward(self, obs):
        """The reward of each transition."""


class LinearReward(RewardNet):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 1, bias=False)  # a bias would cancel in the difference of returns

    def forward(self, obs):
        return self.linear(obs).squeeze(-1)


class PreferenceTrainer:
    def __init__(self, model: RewardNet):
        self.model = model
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def probability(self, rews1, rews2):
        returns_diff = (rews2 - rews1).sum()
        return 1 / (1 + returns_diff.exp())  # <- GA404

    def train(self, pairs):
        for obs1, obs2, preferred in pairs:
            p = self.probability(self.model(obs1), self.model(obs2))
            loss = nn.functional.binary_cross_entropy(p.reshape(1), preferred)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    # the reward network and the trainer are picked by name, as a configuration picks them
    net = globals()[os.environ.get("PICKED", "LinearReward")]()
    a, b = -100 * torch.rand(16, 4), 100 * torch.rand(16, 4)
    globals()["PreferenceTrainer"](net).train([(a, b, torch.ones(1)), (b, a, torch.zeros(1))])
