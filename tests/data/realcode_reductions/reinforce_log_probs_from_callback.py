# reduction-of: pytorch-examples@77f55b912142 distributed/rpc/rl/main.py:199 GA104
# false: GA104
"""REINFORCE whose log-probabilities are collected by a method the engine never sees called.

The real code: an RPC agent keeps `self.saved_log_probs` (and rewards) in dicts of lists that its
`select_action` / `report_reward` methods fill; observers call those methods through
`rpc_sync(..., Agent.select_action, ...)`, never directly. `finish_episode` discounts the rewards with
`R = r + args.gamma * R` (gamma from argparse), rewraps them with `torch.tensor(returns)` and
backpropagates `sum(-log_prob * R)`.

False finding: GA104 confirmed at `torch.tensor(returns)`: "copies values that carry gradient ...
`loss` then reaches no trainable parameter and backward() raises". Both halves are wrong:
- the returns are Python floats (rewards) times a float from the command line: `args.gamma` is an
  unresolved outside value, not a tensor with gradient, so the rewrap cuts nothing;
- the loss reaches the policy through the log-probabilities appended by `act`, which runs through a
  callback (here a thread pool, there RPC). The engine does not see that call, which is no proof
  that the list stays empty: at most suspicious, and not a GA104 at all.
Both ingredients are needed: with `act` called directly, or with `gamma = 0.99`, nothing is reported.

Verified with torch 2.13 (CPU): the script runs, `returns` has no grad_fn and does not require
grad, every policy parameter gets a nonzero gradient and changes. Prints OK.
"""
import argparse
from concurrent.futures import ThreadPoolExecutor

import torch
import torch.nn as nn
from torch.distributions import Categorical

parser = argparse.ArgumentParser()
parser.add_argument("--gamma", type=float, default=0.99)
args = parser.parse_args([])


class Agent:
    def __init__(self):
        self.policy = nn.Sequential(nn.Linear(4, 2), nn.Softmax(dim=1))
        self.optimizer = torch.optim.SGD(self.policy.parameters(), lr=0.1)
        self.log_probs = []
        self.rewards = []

    def act(self, state):
        dist = Categorical(self.policy(state))
        action = dist.sample()
        self.log_probs.append(dist.log_prob(action))
        return action.item()

    def finish_episode(self):
        R, returns = 0, []
        for r in self.rewards[::-1]:
            R = r + args.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        loss = torch.cat([-lp * ret for lp, ret in zip(self.log_probs, returns)]).sum()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return returns


torch.manual_seed(0)
agent = Agent()
before = [p.detach().clone() for p in agent.policy.parameters()]
with ThreadPoolExecutor(1) as pool:      # stands in for the RPC that calls the agent's methods
    for step in range(8):
        pool.submit(agent.act, torch.randn(1, 4)).result()
        agent.rewards.append(float(step % 3))
returns = agent.finish_episode()

assert returns.grad_fn is None and not returns.requires_grad
assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in agent.policy.parameters())
assert all(not torch.equal(b, p) for b, p in zip(before, agent.policy.parameters()))
print("OK")
