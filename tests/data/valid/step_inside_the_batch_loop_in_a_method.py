"""The same learner stepping inside the batch loop, after each backward(); and a second method
that accumulates over the task's batches on purpose (one clear before the loop, the mean loss,
one step after it)."""
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
            loss.backward()
            self.optimizer.step()

    def observe_whole_task(self, batches):
        self.optimizer.zero_grad()
        for x, y in batches:
            loss = F.cross_entropy(self.net(x), y) / len(batches)
            loss.backward()
        self.optimizer.step()


def run():
    torch.manual_seed(0)
    learner = Learner(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)))
    for task in range(3):
        batches = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(5)]
        learner.observe(batches)
        learner.observe_whole_task(batches)


if __name__ == "__main__":
    run()
