# runtime: warning: lr_scheduler.step()
"""Training in phases: a warm-up phase trains the head with its own optimizer, then the joint phase
trains everything with another optimizer and its StepLR. In the joint phase the scheduler is stepped
at the top of each epoch, before that epoch's optimizer steps: the first time the phase runs, the
schedule moves before any update and its first learning rate is never used."""
import torch
import torch.nn as nn


def train(model, batches, optimizer):
    for x, y in batches:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
warm_optimizer = torch.optim.Adam(model[2].parameters(), lr=1e-3)
joint_optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
joint_lr_scheduler = torch.optim.lr_scheduler.StepLR(joint_optimizer, step_size=2, gamma=0.1)
data = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
num_warm_epochs = 2
for epoch in range(5):
    if epoch < num_warm_epochs:
        train(model, data, warm_optimizer)
    else:
        joint_lr_scheduler.step()  # <- GA207
        train(model, data, joint_optimizer)
