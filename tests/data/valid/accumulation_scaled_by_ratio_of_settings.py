# runtime: trains
"""A PPO learner (after rlgym-ppo's fix) accumulates the value loss over the mini-batches of one
batch and steps once after them; each mini-batch's loss is scaled by `mini_batch_size /
batch_size`, a ratio of two settings the learner was given (read from a configuration the engine
cannot see): the accumulated gradient is the batch's mean, as one big batch would give."""
import json

import torch
import torch.nn as nn


class Learner:
    def __init__(self, batch_size, mini_batch_size):
        self.value_net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
        self.value_optimizer = torch.optim.Adam(self.value_net.parameters(), lr=1e-3)
        self.value_loss_fn = nn.MSELoss()
        self.batch_size = batch_size
        self.mini_batch_size = mini_batch_size

    def learn(self, states, returns):
        for epoch in range(3):
            self.value_optimizer.zero_grad()
            for start in range(0, self.batch_size, self.mini_batch_size):
                stop = start + self.mini_batch_size
                vals = self.value_net(states[start:stop]).squeeze(-1)
                minibatch_ratio = self.mini_batch_size / self.batch_size
                value_loss = self.value_loss_fn(vals, returns[start:stop]) * minibatch_ratio
                value_loss.backward()
            torch.nn.utils.clip_grad_norm_(self.value_net.parameters(), max_norm=0.5)
            self.value_optimizer.step()


torch.manual_seed(0)
config = json.loads('{"batch_size": 64, "mini_batch_size": 16}')
learner = Learner(**config)
learner.learn(torch.randn(64, 4), torch.randn(64))
