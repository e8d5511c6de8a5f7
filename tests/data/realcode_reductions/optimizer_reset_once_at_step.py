# reduction-of: CORL@6afec90484bb algorithms/finetune/spot.py:820 GA206
# false: GA206, GA204
"""Offline-to-online fine-tuning: at the iteration where the online phase starts
(`if t == offline_iterations:`), the trainer's optimizers are rebuilt on purpose ("Resetting
optimizers"), once.

False finding: GA206 confirmed at the rebuilt optimizer: "built anew in every iteration of the
training loop". It is built under a condition on the iteration counter, once: a deliberate reset.
An optimizer built under such a condition (one that varies between iterations) is no longer
reported as rebuilt at every step. The same reduction drew GA204 ("`self.actor_optimizer`, which
holds them, never steps") on the backward(): the attribute now keeps both optimizers, the one
stepped before the switch and the one after.

Verified with torch 2.13 (CPU): the optimizer object changes once, at the switch. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, actor):
        self.actor = actor
        self.actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)

    def train(self, s, a):
        loss = F.mse_loss(self.actor(s), a)
        self.actor_optimizer.zero_grad()
        loss.backward()
        self.actor_optimizer.step()


torch.manual_seed(0)
actor = nn.Linear(3, 2)
trainer = Trainer(actor)
offline_iterations, seen = 3, set()
for t in range(6):
    if t == offline_iterations:
        trainer.actor_optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4)
    trainer.train(torch.randn(8, 3), torch.randn(8, 2))
    seen.add(id(trainer.actor_optimizer))
assert len(seen) == 2
print("OK")
