# runtime: lost-grads
"""A continual learner's `observe` (after CGLB's GEM baseline): for each batch of the task it
clears the gradients and backpropagates, but `self.optimizer.step()` is dedented after the batch
loop. Each iteration's zero_grad() drops the gradient the previous batch computed, so the single
step applies the last batch's gradient alone; the loop is inside a method its driver calls."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Learner:
    def __init__(self, net, lr=0.05):
        self.net = net
        self.optimizer = torch.optim.SGD(net.parameters(), lr=lr)

    def observe(self, batches):
        self.net.train()
        for x, y in batches:
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.net(x), y)
            loss.backward()  # <- GA204
        self.optimizer.step()


def run():
    torch.manual_seed(0)
    learner = Learner(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)))
    for task in range(3):
        batches = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(5)]
        learner.observe(batches)


if __name__ == "__main__":
    run()
