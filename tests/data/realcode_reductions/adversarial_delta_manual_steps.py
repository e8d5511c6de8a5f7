# reduction-of: fast_adversarial@54f728755e71 MNIST/train_mnist.py:98 GA101
# false: GA101, GA205
# quiet: GA205
"""PGD adversarial training: an inner attack loop makes the perturbation `delta` a leaf
(`delta.requires_grad = True`), backpropagates the model's loss into it, moves it by hand from its
gradient (`delta.data[I] = clamp(delta + alpha * sign(grad))[I]`), clearing the model's gradients
before each attack step; then `delta = delta.detach()` and the model trains on `X + delta`.

False findings: GA101 confirmed at `delta = delta.detach()`: "cuts gradient to `delta`...: they
reach `loss` by no other path, so `opt` never changes them". The perturbation is an input
differentiated with respect to, not trained by `opt`; the hand update belongs to the attack's own
backward(), and the engine now gives a hand update to the backward() right before it, not to every
step. GA205 (suspicious) at the attack's backward(): "runs for every micro-batch while `opt.step()`
runs once after the inner loop": `opt.zero_grad()` clears them before the training backward().

Verified with torch 2.13 (CPU): the attack moves delta, the model trains. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
epsilon, alpha = 0.3, 0.1
before = model[0].weight.detach().clone()
for _ in range(3):
    X, y = torch.rand(8, 10), torch.randint(0, 3, (8,))
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    start = delta.clone()
    for _ in range(2):
        delta.requires_grad = True
        loss = F.cross_entropy(model(X + delta), y)
        opt.zero_grad()
        loss.backward()
        grad = delta.grad.detach()
        I = model(X + delta).max(1)[1] == y
        delta.data[I] = torch.clamp(delta + alpha * torch.sign(grad), -epsilon, epsilon)[I]
    delta = delta.detach()
    assert not torch.equal(start, delta)
    loss = F.cross_entropy(model(torch.clamp(X + delta, 0, 1)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
assert not torch.equal(before, model[0].weight)
print("OK")
