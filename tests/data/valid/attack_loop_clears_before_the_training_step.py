"""Adversarial training with a PGD attack (after fast-adv): the attack's inner loop clears the
model's gradients and backpropagates to read the perturbation's gradient; after the loop the
training loss is cleared, backpropagated and stepped. The step applies the training backward's
gradients, not the attack's: no step is missing from the inner loop."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
epsilon, alpha = 0.3, 0.1
for i in range(4):
    X, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    for _ in range(3):
        delta.requires_grad_(True)
        loss = F.cross_entropy(model(X + delta), y)
        opt.zero_grad()
        loss.backward()
        delta = (delta + alpha * delta.grad.sign()).clamp(-epsilon, epsilon).detach()
    loss = F.cross_entropy(model(X + delta), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
