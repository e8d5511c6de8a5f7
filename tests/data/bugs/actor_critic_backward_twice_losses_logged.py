# runtime: error: Trying to backward through the graph a second time
"""An actor-critic step that backpropagates the actor's and the critic's losses one after the
other, without retain_graph, over one forward pass: the second backward() reaches the shared
encoder's graph that the first one freed. The step returns both losses and the loop sums them into
a list of running totals (`running[k] += losses[k]`); that element update builds on the old total,
so it drops no graph and does not hide the freed one. The totals are made before the loop and keep
every iteration's graph: once the step is mended, they are the next defect (GA303). The advantage
in the actor's loss is not detached, so that loss trains the critic too (GA304)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 8)
        self.actor = nn.Linear(8, 3)
        self.critic = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.encoder(x))
        return torch.log_softmax(self.actor(h), -1), self.critic(h).squeeze(-1)


class Trainer:
    def __init__(self, agent):
        self.agent = agent
        self.optim = torch.optim.Adam(agent.parameters(), lr=1e-3)

    def train_step(self, x, reward):
        self.optim.zero_grad()
        log_probs, value = self.agent(x)
        loss1 = (-(reward - value) * log_probs[:, 0]).mean()  # <- GA304
        loss2 = F.mse_loss(value, reward)
        loss1.backward()
        loss2.backward()  # <- GA301
        self.optim.step()
        return [loss1, loss2]

    def run(self, steps=3):
        running = [0, 0]
        for _ in range(steps):
            losses = self.train_step(torch.randn(4, 6), torch.randn(4))
            running[0] += losses[0]  # <- GA303
            running[1] += losses[1]  # <- GA303
        return running


torch.manual_seed(0)
Trainer(ActorCritic()).run()
