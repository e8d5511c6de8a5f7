# reduction-of: TRADES@6e8e11b7c281 pgd_attack_cifar10.py:73 GA204
# false: GA204
"""A PGD attack that builds, in every attack step, an SGD optimizer over the adversarial input
only to call its `zero_grad()`; the input is then moved by hand from the sign of its gradient,
projected back into the epsilon ball and clipped, each time as a new leaf
(`X_pgd = Variable(X_pgd.data + eta, requires_grad=True)`). The optimizer never steps.

The real code (TRADES' white-box and black-box PGD evaluation on CIFAR-10 and MNIST) runs this on
a trained model in eval mode and compares its accuracy on the clean and adversarial inputs.

False finding: GA204 confirmed at `loss.backward()`: "computes gradients for `X_pgd`, but `opt`,
which holds them, never steps: they never change". The gradient is read right after backward
and the input is updated by hand from it; the optimizer is only a zero_grad() helper. The engine
took the rebinding to a new leaf built from the gradient for no update.

Verified with torch 2.13 (CPU): every attack step reads a gradient of X_pgd and the input moves,
the final perturbation stays within epsilon and raises the model's loss. Prints OK.
"""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable


def pgd_whitebox(model, X, y, epsilon=0.3, num_steps=5, step_size=0.1):
    X_pgd = Variable(X.data, requires_grad=True)
    for _ in range(num_steps):
        opt = optim.SGD([X_pgd], lr=1e-3)
        opt.zero_grad()
        with torch.enable_grad():
            loss = nn.CrossEntropyLoss()(model(X_pgd), y)
        loss.backward()
        assert X_pgd.grad is not None and X_pgd.grad.abs().sum() > 0
        before = X_pgd.data.clone()
        eta = step_size * X_pgd.grad.data.sign()
        X_pgd = Variable(X_pgd.data + eta, requires_grad=True)
        eta = torch.clamp(X_pgd.data - X.data, -epsilon, epsilon)
        X_pgd = Variable(X.data + eta, requires_grad=True)
        X_pgd = Variable(torch.clamp(X_pgd, 0, 1.0), requires_grad=True)
        assert not torch.equal(before, X_pgd.data)
    return X_pgd


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
model.eval()
X, y = torch.rand(4, 8), torch.randint(0, 3, (4,))
X_adv = pgd_whitebox(model, X, y)
assert (X_adv.data - X).abs().max() <= 0.3 + 1e-6
with torch.no_grad():
    assert nn.CrossEntropyLoss()(model(X_adv), y) > nn.CrossEntropyLoss()(model(X), y)
print("OK")
