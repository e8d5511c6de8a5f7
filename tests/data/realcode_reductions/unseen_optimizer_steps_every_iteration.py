# reduction-of: sb3-contrib==2.9.2 sb3_contrib/tqc/tqc.py:271 GA205
# false: GA205
# quiet: GA205
"""An off-policy learner with three optimizers: the entropy coefficient's, built here and stepped
only when the coefficient is learned, and the critic's, built by a policy object elsewhere and
stepped right after every critic backward().

The real code (sb3-contrib TQC.train): per gradient step, `ent_coef_loss.backward()` and
`self.ent_coef_optimizer.step()` under `if ent_coef_loss is not None`, then
`critic_loss.backward()` followed by `self.critic.optimizer.step()`, where `self.critic.optimizer`
is made by the policy (code the engine does not follow).

False finding: GA205 at `critic_loss.backward()`, "runs for every micro-batch while
`self.ent_coef_optimizer.step()` runs under a condition": the engine saw only the optimizer it
could build; the critic's gradients are consumed by its own optimizer every iteration, and nothing
accumulates.

Verified with torch 2.13 (CPU): the critic's weights change at every iteration, and after each of
its steps the critic's gradients are those of that iteration's loss alone. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_policy():
    critic = nn.Linear(3, 1)
    critic.optimizer = torch.optim.SGD(critic.parameters(), lr=0.1)
    return critic


class Learner:
    def __init__(self, policy_factory, learn_ent_coef):
        self.critic = policy_factory()
        self.log_ent_coef = torch.zeros(1, requires_grad=True)
        self.ent_coef_optimizer = torch.optim.Adam([self.log_ent_coef], lr=1e-3) if learn_ent_coef else None

    def train(self, steps):
        seen = []
        for _ in range(steps):
            x, y = torch.randn(8, 3), torch.randn(8, 1)
            ent_coef_loss = None
            if self.ent_coef_optimizer is not None:
                ent_coef = torch.exp(self.log_ent_coef.detach())
                ent_coef_loss = -(self.log_ent_coef * (ent_coef - 1.0).detach()).mean()
            if ent_coef_loss is not None:
                self.ent_coef_optimizer.zero_grad()
                ent_coef_loss.backward()
                self.ent_coef_optimizer.step()
            with torch.no_grad():  # this iteration's gradient alone, by hand, for the check
                before = self.critic.weight.clone()
                own = 2 * (self.critic(x) - y).T @ x / y.numel()
            critic_loss = F.mse_loss(self.critic(x), y)
            self.critic.optimizer.zero_grad()
            critic_loss.backward()
            self.critic.optimizer.step()
            assert torch.allclose(before - 0.1 * own, self.critic.weight.detach(), atol=1e-6)
            seen.append(not torch.equal(before, self.critic.weight.detach()))
        return seen


if __name__ == "__main__":
    torch.manual_seed(0)
    assert all(Learner(make_policy, learn_ent_coef=False).train(4))
    assert all(Learner(make_policy, learn_ent_coef=True).train(4))
    print("OK")
