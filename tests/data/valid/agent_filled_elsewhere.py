# runtime: trains
"""An agent whose log-probabilities and rewards are recorded per worker in a dict of lists by
methods that other threads call: the update builds its loss from lists the engine never saw
filled, and turns float returns into a tensor."""
import argparse
import threading

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

parser = argparse.ArgumentParser()
parser.add_argument("--gamma", type=float, default=0.99)
args = parser.parse_args([])


class Agent:
    def __init__(self, workers):
        self.policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.eps = np.finfo(np.float32).eps.item()
        self.log_probs = {w: [] for w in workers}
        self.rewards = {w: [] for w in workers}
        self.lock = threading.Lock()

    def act(self, worker, state):
        dist = Categorical(logits=self.policy(state))
        action = dist.sample()
        with self.lock:
            self.log_probs[worker].append(dist.log_prob(action))
        return action.item()

    def reward(self, worker, r):
        with self.lock:
            self.rewards[worker].append(r)

    def finish_episode(self):
        R, probs, rewards = 0.0, [], []
        for w in self.rewards:
            probs.extend(self.log_probs[w])
            rewards.extend(self.rewards[w])
            self.log_probs[w], self.rewards[w] = [], []
        returns = []
        for r in rewards[::-1]:
            R = r + args.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + self.eps)
        loss = torch.cat([(-lp * g).reshape(1) for lp, g in zip(probs, returns)]).sum()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def worker_loop(agent, worker):
    for t in range(4):
        action = agent.act(worker, torch.randn(4))
        agent.reward(worker, float(action == t % 2))


torch.manual_seed(5)
agent = Agent(workers=[0, 1])
for episode in range(2):
    threads = [threading.Thread(target=worker_loop, args=(agent, w)) for w in (0, 1)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    agent.finish_episode()
