# runtime: skip (a runner elsewhere builds the policy the class is given)
# confidence: suspicious
"""After rsl_rl's distillation: the algorithm is given its policy by a runner the file does not hold
(the runner picks the class from a configuration), and the class's annotation says what it may be.
With the recurrent student, the optimizer is built from the student's head only: the GRU memory
feeds the loss, gets gradients, and never changes. The annotation is what the engine goes by, not
proof (another class may be given), so the finding is suspicious. Checked with torch 2.13 (CPU),
`Distillation(StudentRecurrent()).update(...)`: after four steps the GRU's weights are exactly the
initial ones while their .grad is not zero; with `policy.parameters()`
(valid/annotated_policy_all_optimized.py) they change."""
import torch.nn as nn
import torch.optim as optim


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)

    def act(self, obs):
        return self.net(obs)


class StudentRecurrent(Student):
    def __init__(self):
        super().__init__()
        self.memory = nn.GRU(4, 4)

    def act(self, obs):
        h, _ = self.memory(obs.unsqueeze(0))
        return self.net(h.squeeze(0))


class Distillation:
    policy: Student | StudentRecurrent

    def __init__(self, policy, lr=1e-3):
        self.policy = policy
        self.optimizer = optim.Adam(self.policy.net.parameters(), lr=lr)  # <- GA108

    def update(self, obs, target):
        for _ in range(4):
            loss = (self.policy.act(obs) - target).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
